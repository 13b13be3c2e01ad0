package plans

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"talkd/internal/config"
	"talkd/internal/werkbaum"
	"talkd/internal/werkbaum/plans/planfs"
)

// The addressing rule: what a key below a root may name, and the reason for each refusal.
func TestCheckRel(t *testing.T) {
	for _, rel := range []string{"a.werkbaum", "sub/dir/a.werkbaum", "jörg/Müller.werkbaum",
		"%2e%2e/a.werkbaum", "a b.werkbaum", "x.werkbaum.werkbaum"} {
		if why := planfs.CheckRel(rel); why != "" {
			t.Errorf("%q refused: %s", rel, why)
		}
	}
	for rel, want := range map[string]string{
		"":                        "names no file",
		"../a.werkbaum":           `".." segment`,
		"sub/../../a.werkbaum":    `".." segment`,
		"sub/..":                  `".." segment`,
		"./a.werkbaum":            `"." segment`,
		"/etc/a.werkbaum":         "absolute",
		"a//b.werkbaum":           "empty segment",
		"sub/":                    "empty segment",
		`sub\a.werkbaum`:          "backslash",
		`..\..\a.werkbaum`:        "backslash",
		"a\x00.werkbaum":          "NUL",
		"a.txt":                   "does not end in .werkbaum",
		"sub/a.werkbaum.bak":      "does not end in .werkbaum",
		".werkbaum":               "hidden",
		"sub/.werkbaum":           "hidden",
		".git/a.werkbaum":         "hidden",
		strings.Repeat("a", 5000): "longer than 4096",
	} {
		if why := planfs.CheckRel(rel); !strings.Contains(why, want) {
			t.Errorf("%q: reason %q, want it to say %q", rel, why, want)
		}
	}
}

type rootFixture struct {
	*reconfFixture
	root    string // the root folder (resolved)
	outside string // a folder beside it, with a plan an agent must never reach
}

func newRootFixture(t *testing.T) *rootFixture {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	root, outside := filepath.Join(base, "notes"), filepath.Join(base, "outside")
	writePlanFile(t, filepath.Join(root, "a.werkbaum"), planText)
	writePlanFile(t, filepath.Join(root, "sub", "dir", "b.werkbaum"), planText)
	writePlanFile(t, filepath.Join(outside, "secret.werkbaum"), planText)
	f := newReconfFixture(t, nil, []config.Root{{Name: "notes", Path: root, Lang: "de"}})
	close(f.lanes.release) // no gate: writes run through
	return &rootFixture{reconfFixture: f, root: root, outside: outside}
}

func (f *rootFixture) write(ctx context.Context, key, id string, base Base) (*WriteResult, error) {
	return f.svc.Write(ctx, key, WriteRequest{Tool: "werkbaum_set_status", RequestID: id, ArgsHash: id, Base: base,
		Verb: werkbaum.SetStatus{ID: "auth", Status: "done"}, Author: Author{Client: "local"}})
}

func (f *rootFixture) drain() {
	for {
		select {
		case <-f.lanes.entered:
		default:
			return
		}
	}
}

// A plan below a root is read and written like a configured one: revisions, journal,
// the lane keyed by its resolved path, the root's language.
func TestRootPlanReadWrite(t *testing.T) {
	f := newRootFixture(t)
	ctx := context.Background()
	for _, key := range []string{"notes:a.werkbaum", "notes:sub/dir/b.werkbaum"} {
		snap, err := f.svc.Read(ctx, key)
		if err != nil {
			t.Fatalf("read %s: %v", key, err)
		}
		if snap.Base.Revision != 1 || snap.Text != planText {
			t.Fatalf("read %s: %+v", key, snap.Base)
		}
		res, err := f.write(ctx, key, "w-"+key, snap.Base)
		if err != nil || !res.Changed || res.Revision != 2 {
			t.Fatalf("write %s: %+v %v", key, res, err)
		}
		op, err := f.svc.Operation(ctx, key, "", "w-"+key)
		if err != nil || op.State != StateApplied || op.Revision != 2 {
			t.Fatalf("operation %s: %+v %v", key, op, err)
		}
		p, ok := f.svc.Plan(key)
		rel := strings.TrimPrefix(key, "notes:")
		if !ok || p.Path != filepath.Join(f.root, filepath.FromSlash(rel)) || p.Lang != "de" {
			t.Fatalf("plan %s: %+v %v", key, p, ok)
		}
	}
	want := strings.Replace(planText, "[ ] #auth", "[x] #auth", 1)
	if got := readFile(t, filepath.Join(f.root, "sub", "dir", "b.werkbaum")); got != want {
		t.Fatalf("file after the write:\n%s", got)
	}
	if sum := f.svc.Summarize(ctx, "notes:a.werkbaum"); sum.Error != "" || sum.Revision != 2 || sum.Lang != "de" {
		t.Fatalf("summary: %+v", sum)
	}
}

// Every refusal of a key below a root: the address itself, symlinks leading out (file
// and folder), symlinks inside, missing files; each says why, counts as an unknown plan,
// and leaves the file outside untouched.
func TestRootRefusals(t *testing.T) {
	f := newRootFixture(t)
	ctx := context.Background()
	must(t, os.Symlink(filepath.Join(f.outside, "secret.werkbaum"), filepath.Join(f.root, "out.werkbaum")))
	must(t, os.Symlink(f.outside, filepath.Join(f.root, "outdir")))
	must(t, os.Symlink("a.werkbaum", filepath.Join(f.root, "alias.werkbaum")))
	must(t, os.Mkdir(filepath.Join(f.root, "folder.werkbaum"), 0o755))
	for key, want := range map[string]string{
		"notes:../outside/secret.werkbaum":     `".." segment`,
		"notes:sub/../../outside/x.werkbaum":   `".." segment`,
		"notes:" + f.outside + "/x.werkbaum":   "absolute",
		`notes:..\outside\secret.werkbaum`:     "backslash",
		"notes:out.werkbaum":                   "symlink",
		"notes:outdir/secret.werkbaum":         "symlink",
		"notes:alias.werkbaum":                 "symlink",
		"notes:missing.werkbaum":               "no file missing.werkbaum",
		"notes:nodir/x.werkbaum":               "no folder nodir",
		"notes:a.werkbaum/x.werkbaum":          "not a folder",
		"notes:folder.werkbaum":                "not a regular file",
		"notes:%2e%2e/outside/secret.werkbaum": "no folder %2e%2e",
		"notes:a.txt":                          ".werkbaum",
	} {
		_, err := f.svc.Read(ctx, key)
		var addr *AddressError
		if !errors.As(err, &addr) || !errors.Is(err, ErrUnknownPlan) || !strings.Contains(err.Error(), want) {
			t.Errorf("read %s: %v, want an address error saying %q", key, err, want)
		}
		if _, err := f.write(ctx, key, "x", Base{Revision: 1, Checksum: werkbaum.Checksum([]byte(planText))}); !errors.As(err, &addr) {
			t.Errorf("write %s: %v, want an address error", key, err)
		}
		if err := f.svc.Lookup(key); !errors.As(err, &addr) {
			t.Errorf("lookup %s: %v", key, err)
		}
	}
	for _, key := range []string{"other:a.werkbaum", "nocolon", ":a.werkbaum"} {
		_, err := f.svc.Read(ctx, key)
		var addr *AddressError
		if !errors.Is(err, ErrUnknownPlan) || errors.As(err, &addr) {
			t.Errorf("read %s: %v, want a plain unknown plan", key, err)
		}
	}
	if got := readFile(t, filepath.Join(f.outside, "secret.werkbaum")); got != planText {
		t.Fatalf("the file outside the root changed:\n%s", got)
	}
}

// A folder on the way swapped for a symlink leading out, after the lookup and before the
// open (the race a check at lookup alone would lose): the open through the root refuses
// it, for a read and for a write whose lane was entered before the swap.
func TestRootFolderSwappedAfterLookup(t *testing.T) {
	f := newRootFixture(t)
	ctx := context.Background()
	writePlanFile(t, filepath.Join(f.outside, "dir", "b.werkbaum"), planText)
	key := "notes:sub/dir/b.werkbaum"
	snap, err := f.svc.Read(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	ref := mustRef(t, f.svc, key)
	swap := func() {
		must(t, os.Rename(filepath.Join(f.root, "sub"), filepath.Join(f.root, "sub.old")))
		must(t, os.Symlink(f.outside, filepath.Join(f.root, "sub")))
	}
	swap()
	if _, err := f.svc.read(ctx, ref); err == nil {
		t.Fatal("a read through a folder swapped for a symlink leading out succeeded")
	}
	if _, err := planfs.Open(ref, 0); err == nil {
		t.Fatal("openPlan followed the swapped folder out of the root")
	}
	if err := f.svc.folders.WriteAtomic(ref, []byte("overwritten\n"), snap.Base.Checksum, f.svc.maxBytes, f.svc.lockTimeout, nil); err == nil {
		t.Fatal("writeAtomic wrote through the swapped folder")
	}
	// The same swap while a write waits in its lane (it resolved the plan before).
	must(t, os.Remove(filepath.Join(f.root, "sub")))
	must(t, os.Rename(filepath.Join(f.root, "sub.old"), filepath.Join(f.root, "sub")))
	gate := make(chan struct{})
	f.lanes.release = gate
	f.drain()
	done := make(chan error, 1)
	go func() {
		_, err := f.write(ctx, key, "raced", snap.Base)
		done <- err
	}()
	select {
	case <-f.lanes.entered:
	case <-time.After(10 * time.Second):
		t.Fatal("the write never reached its lane")
	}
	swap()
	close(gate)
	if err := <-done; err == nil {
		t.Fatal("a write through a folder swapped for a symlink leading out succeeded")
	}
	if got := readFile(t, filepath.Join(f.outside, "dir", "b.werkbaum")); got != planText {
		t.Fatalf("the file outside the root changed:\n%s", got)
	}
	if entries, _ := os.ReadDir(filepath.Join(f.outside, "dir")); len(entries) != 1 {
		t.Fatalf("the write left files outside the root: %v", entries)
	}
}

// The plan file itself swapped for a symlink after the lookup: refused at the open.
func TestRootFileSwappedAfterLookup(t *testing.T) {
	f := newRootFixture(t)
	ctx := context.Background()
	ref := mustRef(t, f.svc, "notes:a.werkbaum")
	p := filepath.Join(f.root, "a.werkbaum")
	must(t, os.Remove(p))
	must(t, os.Symlink(filepath.Join(f.outside, "secret.werkbaum"), p))
	_, err := f.svc.read(ctx, ref)
	if err == nil {
		t.Fatal("read followed a symlink swapped in for the plan file")
	}
	if !strings.Contains(err.Error(), "symlink") {
		t.Errorf("error does not name the symlink: %v", err)
	}
}

// The listing: configured keys first, then each root's plan files in lexical order,
// without hidden folders, symlinks, other files, or folders past the depth limit.
func TestRootListing(t *testing.T) {
	f := newRootFixture(t)
	writePlanFile(t, filepath.Join(f.root, ".hidden", "h.werkbaum"), planText)
	writePlanFile(t, filepath.Join(f.root, ".dot.werkbaum"), planText)
	writePlanFile(t, filepath.Join(f.root, "notes.txt"), "x")
	writePlanFile(t, filepath.Join(f.root, "Müller.werkbaum"), planText)
	deep := filepath.Join(f.root, "1", "2", "3", "4", "5", "6", "7", "8")
	writePlanFile(t, filepath.Join(deep, "ok.werkbaum"), planText)
	writePlanFile(t, filepath.Join(deep, "9", "too-deep.werkbaum"), planText)
	must(t, os.Symlink(f.outside, filepath.Join(f.root, "outdir")))
	must(t, os.Symlink("a.werkbaum", filepath.Join(f.root, "alias.werkbaum")))
	got := f.svc.Keys()
	want := []string{"notes:1/2/3/4/5/6/7/8/ok.werkbaum", "notes:Müller.werkbaum", "notes:a.werkbaum", "notes:sub/dir/b.werkbaum"}
	if !slices.Equal(got, want) {
		t.Fatalf("keys:\n got %q\nwant %q", got, want)
	}
	for _, k := range got {
		if err := f.svc.Lookup(k); err != nil {
			t.Errorf("a listed key does not resolve: %v", err)
		}
	}
	// Past the depth limit a file is still a plan when named.
	if _, err := f.svc.Read(context.Background(), "notes:1/2/3/4/5/6/7/8/9/too-deep.werkbaum"); err != nil {
		t.Fatal(err)
	}
}

// A root with more plan files than the listing's bound lists exactly the bound.
func TestRootListingBounded(t *testing.T) {
	f := newRootFixture(t)
	for i := range planfs.RootListFiles + 5 {
		writePlanFile(t, filepath.Join(f.root, "many", fmt.Sprintf("p%04d.werkbaum", i)), "")
	}
	if got := len(f.svc.Keys()); got != planfs.RootListFiles {
		t.Fatalf("listed %d keys, want the bound %d", got, planfs.RootListFiles)
	}
}

// Reconfigure adds and removes roots; a root plan's revision survives both.
func TestReconfigureRoots(t *testing.T) {
	f := newRootFixture(t)
	ctx := context.Background()
	snap, err := f.svc.Read(ctx, "notes:a.werkbaum")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.write(ctx, "notes:a.werkbaum", "r1", snap.Base); err != nil {
		t.Fatal(err)
	}
	must(t, f.svc.Reconfigure(nil, nil))
	if _, err := f.svc.Read(ctx, "notes:a.werkbaum"); !errors.Is(err, ErrUnknownPlan) {
		t.Fatalf("read after the root was removed: %v", err)
	}
	if len(f.svc.Keys()) != 0 {
		t.Fatalf("keys after the root was removed: %v", f.svc.Keys())
	}
	must(t, f.svc.Reconfigure(nil, []config.Root{{Name: "notes", Path: f.root, Lang: "en"}}))
	snap, err = f.svc.Read(ctx, "notes:a.werkbaum")
	if err != nil || snap.Base.Revision != 2 {
		t.Fatalf("read after the root came back: %+v %v", snap, err)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestRootPlanDeletedDocument: a plan file deleted below a root reads as a deleted
// document like a configured plan's: its id still resolves, the feed has the DELETED
// version, and the file's return is RESTORED.
func TestRootPlanDeletedDocument(t *testing.T) {
	f := newRootFixture(t)
	ctx := context.Background()
	id, err := f.svc.DocumentID(ctx, "notes:sub/dir/b.werkbaum")
	if err != nil {
		t.Fatal(err)
	}
	d, err := f.svc.Document(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(f.root, "sub", "dir", "b.werkbaum")
	if err := os.Remove(file); err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.Document(ctx, id); !errors.Is(err, ErrPlanMissing) {
		t.Fatalf("GET of the deleted root plan's document: %v", err)
	}
	feed, err := f.svc.Changes(ctx, id, d.Version, 0)
	if err != nil || feed == nil || feed.CurrentVersion != d.Version+1 || feed.Events[0].ChangeType != ChangeDeleted {
		t.Fatalf("feed of the deleted root plan: %+v %v", feed, err)
	}
	writePlanFile(t, file, planText)
	feed, err = f.svc.Changes(ctx, id, d.Version+1, 0)
	if err != nil || feed == nil || feed.CurrentVersion != d.Version+2 || feed.Events[0].ChangeType != ChangeRestored || len(feed.Ops) != 0 {
		t.Fatalf("feed after the root plan's return: %+v %v", feed, err)
	}
}
