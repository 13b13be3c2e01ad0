package plans

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"go.etcd.io/bbolt"

	"talkd/internal/config"
	"talkd/internal/queue"
	"talkd/internal/werkbaum"
	"talkd/internal/werkbaum/plans/journal"
	"talkd/internal/werkbaum/plans/planfs"
)

const planText = "%% test plan\n[~] #root: Release (L)\n  - [ ] #auth: Login @jörg (S)\n  - [ ] #docs: Docs @Müller (XS)\n"

type fixture struct {
	svc  *Service
	path string
	db   *bbolt.DB
	eng  *werkbaum.Engine
}

// stateDB opens a state database in dir, closed when the test ends.
func stateDB(tb testing.TB, dir string) *bbolt.DB {
	tb.Helper()
	db, err := bbolt.Open(filepath.Join(dir, "state.db"), 0o600, nil)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	return db
}

// testEngine is a notation engine with these options.
func testEngine(tb testing.TB, opts werkbaum.Options) *werkbaum.Engine {
	tb.Helper()
	eng, err := werkbaum.NewEngine(opts)
	if err != nil {
		tb.Fatal(err)
	}
	return eng
}

func newFixture(t *testing.T, text string) *fixture {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "plan.werkbaum")
	if err := os.WriteFile(path, []byte(text), 0o640); err != nil {
		t.Fatal(err)
	}
	f := &fixture{path: path, db: stateDB(t, dir), eng: testEngine(t, werkbaum.Options{})}
	f.svc = f.open(t)
	return f
}

func (f *fixture) open(t *testing.T) *Service {
	t.Helper()
	svc, err := New(Options{Plans: []config.Plan{{Key: "p", Path: f.path, Lang: "en"}}, Engine: f.eng, DB: Bolt(f.db), Lanes: &queue.Lanes{}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { svc.Close() })
	return svc
}

func (f *fixture) read(t *testing.T) *Snapshot {
	t.Helper()
	snap, err := f.svc.Read(context.Background(), "p")
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

func (f *fixture) fileText(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(f.path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestWriteRoundTripAndReplay(t *testing.T) {
	f := newFixture(t, planText)
	ctx := context.Background()
	snap := f.read(t)
	if snap.Base.Revision != 1 || snap.Lines != 4 || snap.Base.Checksum != werkbaum.Checksum([]byte(planText)) {
		t.Fatalf("first read: %+v", snap.Base)
	}
	req := WriteRequest{Tool: "werkbaum_set_status", RequestID: "r1", ArgsHash: "h1", Base: snap.Base,
		Verb: werkbaum.SetStatus{ID: "auth", Status: "done"}, Author: Author{Client: "local", Agent: "test"}}
	res, err := f.svc.Write(ctx, "p", req)
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Replace(planText, "[ ] #auth", "[x] #auth", 1)
	if got := f.fileText(t); got != want {
		t.Fatalf("file after write:\n%s", got)
	}
	if !res.Changed || res.Revision != 2 || res.Base.Checksum != werkbaum.Checksum([]byte(want)) {
		t.Fatalf("result %+v", res)
	}
	if fi, _ := os.Stat(f.path); fi.Mode().Perm() != 0o640 {
		t.Errorf("mode %v not kept", fi.Mode().Perm())
	}
	// Same id, same arguments: the recorded result, nothing done again.
	again, err := f.svc.Write(ctx, "p", req)
	if err != nil || !again.Replayed || again.Revision != 2 {
		t.Fatalf("replay: %+v %v", again, err)
	}
	if f.read(t).Base.Revision != 2 {
		t.Fatal("replay changed the revision")
	}
	// Same id, other arguments: refused.
	other := req
	other.ArgsHash = "h2"
	if _, err := f.svc.Write(ctx, "p", other); !errors.Is(err, ErrRequestReused) {
		t.Fatalf("reuse: %v", err)
	}
	op, _ := f.svc.Operation(ctx, "p", "", "r1")
	if op.State != StateApplied || op.Revision != 2 || op.Author.Agent != "test" {
		t.Fatalf("operation %+v", op)
	}
	if op, _ := f.svc.Operation(ctx, "p", "", "never"); op.State != StateUnknown {
		t.Fatalf("unknown op %+v", op)
	}
}

func TestStaleBaseAndOutsideEdit(t *testing.T) {
	f := newFixture(t, planText)
	ctx := context.Background()
	base := f.read(t).Base
	edited := planText + "  - [ ] Added by hand\n"
	os.WriteFile(f.path, []byte(edited), 0o640)
	_, err := f.svc.Write(ctx, "p", WriteRequest{RequestID: "c1", ArgsHash: "h", Base: base, Verb: werkbaum.SetStatus{ID: "docs", Status: "x"}})
	var conflict *ConflictError
	if !errors.As(err, &conflict) {
		t.Fatalf("want conflict, got %v", err)
	}
	if conflict.Current.Text != edited || conflict.Current.Base.Revision != 2 {
		t.Fatalf("conflict carries %+v", conflict.Current.Base)
	}
	if f.fileText(t) != edited {
		t.Fatal("conflicting write touched the file")
	}
	if op, _ := f.svc.Operation(ctx, "p", "", "c1"); op.State != StateConflict {
		t.Fatalf("operation %+v", op)
	}
}

func TestRejectedBadInputIsJournalled(t *testing.T) {
	f := newFixture(t, planText)
	ctx := context.Background()
	base := f.read(t).Base
	_, err := f.svc.Write(ctx, "p", WriteRequest{RequestID: "b1", ArgsHash: "h", Base: base, Verb: werkbaum.SetStatus{ID: "nope", Status: "x"}})
	if !errors.Is(err, werkbaum.ErrBadInput) {
		t.Fatalf("want bad input, got %v", err)
	}
	if op, _ := f.svc.Operation(ctx, "p", "", "b1"); op.State != StateRejected || op.Error == "" {
		t.Fatalf("operation %+v", op)
	}
	if f.fileText(t) != planText {
		t.Fatal("rejected write touched the file")
	}
}

func TestGuardRefusesProduction(t *testing.T) {
	f := newFixture(t, planText)
	ctx := context.Background()
	base := f.read(t).Base
	req := WriteRequest{RequestID: "g1", ArgsHash: "h", Base: base, Verb: werkbaum.SetStatus{ID: "auth", Status: "^"}}
	_, err := f.svc.Write(ctx, "p", req)
	var refused *RefusedError
	if !errors.As(err, &refused) || refused.Refusal.Switch != "allowProd" {
		t.Fatalf("want allowProd refusal, got %v", err)
	}
	req.RequestID, req.Guard.AllowProd = "g2", true
	if _, err := f.svc.Write(ctx, "p", req); err != nil {
		t.Fatalf("with allowProd: %v", err)
	}
	if !strings.Contains(f.fileText(t), "[^] #auth") {
		t.Fatal("allowed write not applied")
	}
}

// TestRecoverPending simulates crashes between the journal's pending entry and its
// settlement: after the rename the write counts as applied, before it as never done.
func TestRecoverPending(t *testing.T) {
	for _, renamed := range []bool{true, false} {
		f := newFixture(t, planText)
		base := f.read(t).Base
		newText := strings.Replace(planText, "[ ] #docs", "[x] #docs", 1)
		entry := &journalEntry{RequestID: "crash", ArgsHash: "h", State: statePending, OldChecksum: base.Checksum,
			NewChecksum: werkbaum.Checksum([]byte(newText)), Revision: 2, Result: []byte(`{"revision":2}`)}
		if err := f.svc.record("p", entry); err != nil {
			t.Fatal(err)
		}
		if renamed {
			os.WriteFile(f.path, []byte(newText), 0o640)
		} else {
			os.WriteFile(filepath.Join(filepath.Dir(f.path), planfs.TempPrefix(f.path)+"123"), []byte(newText), 0o640)
		}
		f.svc = f.open(t)
		op, _ := f.svc.Operation(context.Background(), "p", "", "crash")
		want := StateUnknown
		if renamed {
			want = StateApplied
		}
		if op.State != want {
			t.Fatalf("renamed=%v: state %s, want %s", renamed, op.State, want)
		}
		if renamed && f.read(t).Base.Revision != 2 {
			t.Fatal("revision not settled")
		}
		if left, _ := filepath.Glob(filepath.Join(filepath.Dir(f.path), planfs.TempPrefix(f.path)+"*")); len(left) != 0 {
			t.Fatalf("stale temp files left: %v", left)
		}
	}
}

func TestJournalBounded(t *testing.T) {
	f := newFixture(t, planText)
	f.svc.limit = 5
	ctx := context.Background()
	for i := 0; i < 12; i++ {
		base := f.read(t).Base
		status := []string{"x", " "}[i%2]
		if _, err := f.svc.Write(ctx, "p", WriteRequest{RequestID: "r" + string(rune('a'+i)), ArgsHash: "h", Base: base,
			Verb: werkbaum.SetStatus{ID: "auth", Status: status}}); err != nil {
			t.Fatal(err)
		}
	}
	n := 0
	f.db.View(func(tx *bbolt.Tx) error {
		return tx.Bucket(journal.BucketName("p")).ForEach(func(k, v []byte) error {
			if strings.HasPrefix(string(k), "r:") {
				n++
			}
			return nil
		})
	})
	if n != 5 {
		t.Fatalf("%d journal entries kept, want 5", n)
	}
	if op, _ := f.svc.Operation(ctx, "p", "", "ra"); op.State != StateUnknown {
		t.Fatalf("oldest entry still there: %+v", op)
	}
}

// TestReadRacingAWriteKeepsRevisions: a read hashes the file, a write renames and settles
// the new text, and only then does the read ask for the revision of what it hashed. The old
// text must not be taken for an outside edit: no revision is spent on it, and the written
// text keeps the revision the write answered.
func TestReadRacingAWriteKeepsRevisions(t *testing.T) {
	f := newFixture(t, planText)
	ctx := context.Background()
	old := f.read(t)
	res, err := f.svc.Write(ctx, "p", WriteRequest{Tool: "werkbaum_set_status", RequestID: "w1", ArgsHash: "h",
		Base: old.Base, Verb: werkbaum.SetStatus{ID: "docs", Status: "done"}})
	if err != nil {
		t.Fatal(err)
	}
	// The late half of the racing read.
	if _, err := f.svc.revisionFor(mustRef(t, f.svc, "p"), old.Base.Checksum); !errors.Is(err, errFileMoved) {
		t.Fatalf("revision of a text the file no longer has: %v", err)
	}
	if now := f.read(t); now.Base != res.Base {
		t.Fatalf("after the racing read the plan reads %+v, the write answered %+v", now.Base, res.Base)
	}
	// An edit made outside still gets the next revision.
	os.WriteFile(f.path, []byte(planText+"  - [ ] Added by hand\n"), 0o640)
	if now := f.read(t); now.Base.Revision != res.Revision+1 {
		t.Fatalf("outside edit: %+v", now.Base)
	}
}

// TestJournalBoundAfterRecovery: a pending entry that recovery removed leaves its place in
// the journal's order; when the same request id is sent again it is a new entry, and
// trimming the old place must not delete it before its own turn.
func TestJournalBoundAfterRecovery(t *testing.T) {
	f := newFixture(t, planText)
	f.svc.limit = 5
	ctx := context.Background()
	base := f.read(t).Base
	newText := strings.Replace(planText, "[ ] #docs", "[x] #docs", 1)
	pending := &journalEntry{RequestID: "again", ArgsHash: "h", State: statePending, OldChecksum: base.Checksum,
		NewChecksum: werkbaum.Checksum([]byte(newText)), Revision: 2}
	if err := f.svc.record("p", pending); err != nil {
		t.Fatal(err)
	}
	// Crash before the rename: recovery forgets the request.
	f.svc = f.open(t)
	f.svc.limit = 5
	if op, _ := f.svc.Operation(ctx, "p", "", "again"); op.State != StateUnknown {
		t.Fatalf("after recovery: %+v", op)
	}
	write := func(id, status string) {
		t.Helper()
		if _, err := f.svc.Write(ctx, "p", WriteRequest{RequestID: id, ArgsHash: "h", Base: f.read(t).Base,
			Verb: werkbaum.SetStatus{ID: "docs", Status: status}}); err != nil {
			t.Fatal(err)
		}
	}
	write("again", "x")
	for i, id := range []string{"w1", "w2", "w3", "w4"} {
		write(id, []string{" ", "x"}[i%2])
	}
	// Five entries since "again" was sent again, limit 5: it must still be there.
	if op, _ := f.svc.Operation(ctx, "p", "", "again"); op.State != StateApplied {
		t.Fatalf("the re-sent request was trimmed early: %+v", op)
	}
	write("w5", " ")
	if op, _ := f.svc.Operation(ctx, "p", "", "again"); op.State != StateUnknown {
		t.Fatalf("the re-sent request outlived the bound: %+v", op)
	}
}

// mustRef looks a plan up as a request does.
func mustRef(t *testing.T, svc *Service, key string) planfs.Ref {
	t.Helper()
	p, err := svc.resolve(key)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// A failed read's log line says what happened: only a file talkd refuses on purpose is
// "refused"; a daemon out of descriptors is not told the file was refused.
func TestReadFailureNamesTheCause(t *testing.T) {
	for _, c := range []struct {
		err  error
		want string
	}{
		{fmt.Errorf("plan p: %w", ErrFileRefused), "plan file refused"},
		{fmt.Errorf("plan p: %w", ErrPlanMissing), "plan file missing"},
		{&fs.PathError{Op: "open", Path: "/x/p.werkbaum", Err: syscall.EMFILE}, "plan file unreadable"},
		{&fs.PathError{Op: "open", Path: "/x/p.werkbaum", Err: syscall.EACCES}, "plan file unreadable"},
	} {
		if got := readFailure(c.err); got != c.want {
			t.Errorf("readFailure(%v) = %q, want %q", c.err, got, c.want)
		}
	}
}
