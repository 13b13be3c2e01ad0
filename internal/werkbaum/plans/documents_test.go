package plans

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"talkd/internal/config"
	"talkd/internal/queue"
	"talkd/internal/werkbaum"
	"talkd/internal/werkbaum/plans/docs"
)

// docFixture is a plan store with one plan and its document id.
type docFixture struct {
	*fixture
	id string
}

func newDocFixture(t *testing.T, text string) *docFixture {
	t.Helper()
	f := newFixture(t, text)
	id, err := f.svc.DocumentID(context.Background(), "p")
	if err != nil {
		t.Fatal(err)
	}
	return &docFixture{fixture: f, id: id}
}

func (f *docFixture) doc(t *testing.T) *Document {
	t.Helper()
	d, err := f.svc.Document(context.Background(), f.id)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// patchOn builds a patch of ops against d.
func patchOn(d *Document, client string, seq int64, ops ...werkbaum.LineOp) ContentPatch {
	return ContentPatch{BaseVersion: d.Version, Checksum: werkbaum.DocumentChecksum(d.Content), ClientID: client,
		Seq: seq, DisplayName: "Jörg im Browser", Ops: ops}
}

func replace(i int, lines ...string) werkbaum.LineOp {
	return werkbaum.LineOp{Op: "replace", Index: i, Count: 1, Lines: lines}
}

func insert(i int, lines ...string) werkbaum.LineOp {
	return werkbaum.LineOp{Op: "insert", Index: i, Lines: lines}
}

func (f *docFixture) setStatus(t *testing.T, id, status, agent string) *WriteResult {
	t.Helper()
	res, err := f.svc.Write(context.Background(), "p", WriteRequest{Tool: "werkbaum_set_status", RequestID: fmt.Sprintf("%s-%s-%d", id, status, time.Now().UnixNano()),
		ArgsHash: "h", Base: f.read(t).Base, Verb: werkbaum.SetStatus{ID: id, Status: status}, Author: Author{Client: "local", Agent: agent}})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestDocumentIDStableAcrossRestart(t *testing.T) {
	f := newDocFixture(t, planText)
	ctx := context.Background()
	if !docs.ValidDocumentID(f.id) || f.id[14] != '4' {
		t.Fatalf("id %q is not a UUID v4", f.id)
	}
	again, _ := f.svc.DocumentID(ctx, "p")
	if again != f.id {
		t.Fatalf("second DocumentID %q, first %q", again, f.id)
	}
	if key, ok := f.svc.DocumentKey(strings.ToUpper(f.id)); !ok || key != "p" {
		t.Fatalf("DocumentKey(upper) = %q %v", key, ok)
	}
	if _, ok := f.svc.DocumentKey("00000000-0000-4000-8000-000000000000"); ok {
		t.Fatal("an unknown id has a plan")
	}
	if _, err := f.svc.Document(ctx, "not-a-uuid"); !errors.Is(err, ErrUnknownDocument) {
		t.Fatalf("unknown document: %v", err)
	}
	d := f.doc(t)
	if _, err := f.svc.PatchContent(ctx, f.id, patchOn(d, "c1", 1, replace(2, "  - [x] #auth: Login @jörg (S)"))); err != nil {
		t.Fatal(err)
	}
	f.setStatus(t, "docs", "done", "Claude Code")

	// A new process on the same state database and file.
	f.svc.Close()
	svc2 := f.open(t)
	id2, err := svc2.DocumentID(ctx, "p")
	if err != nil || id2 != f.id {
		t.Fatalf("after restart: id %q (%v), was %q", id2, err, f.id)
	}
	d2, err := svc2.Document(ctx, strings.ToUpper(id2))
	if err != nil || d2.Version != 3 || !d2.CreatedAt.Equal(d.CreatedAt) {
		t.Fatalf("after restart: %+v %v (created was %v)", d2, err, d.CreatedAt)
	}
	hist, err := svc2.History(ctx, id2)
	if err != nil {
		t.Fatal(err)
	}
	// v1 first seen, v2 a person's save (with their name), v3 the agent.
	if len(hist) != 3 || hist[0].Version != 1 || hist[0].ChangeType != ChangeCreated || hist[1].Version != 2 ||
		hist[1].DisplayName != "Jörg im Browser" || hist[1].ClientID != "c1" || hist[2].Version != 3 ||
		hist[2].DisplayName != "Claude Code" || !strings.HasPrefix(hist[2].ClientID, "mcp-") || hist[2].Content != d2.Content {
		t.Fatalf("history after restart: %+v", hist)
	}
	if svc2.agentClientID == f.svc.agentClientID {
		t.Error("the agent client id is the same in two processes")
	}
}

func TestPatchCurrentBase(t *testing.T) {
	f := newDocFixture(t, planText)
	ctx := context.Background()
	d := f.doc(t)
	if d.Version != 1 || d.Content != planText || d.Title != "plan" {
		t.Fatalf("document %+v", d)
	}
	res, err := f.svc.PatchContent(ctx, f.id, patchOn(d, "c1", 1, insert(4, "  - [ ] #müller: Grüße an @Müller (M)")))
	if err != nil {
		t.Fatal(err)
	}
	if res.Version != 2 || res.OpsSinceBase == nil || len(res.OpsSinceBase) != 0 {
		t.Fatalf("result %+v", res)
	}
	want := planText + "  - [ ] #müller: Grüße an @Müller (M)\n"
	if got := f.fileText(t); got != want {
		t.Fatalf("file:\n%q\nwant\n%q", got, want)
	}
	// The agents' revision is the document's version.
	if snap := f.read(t); snap.Base.Revision != 2 || snap.Base.Checksum != werkbaum.Checksum([]byte(want)) {
		t.Fatalf("agents see %+v", snap.Base)
	}
	d2 := f.doc(t)
	if d2.Version != 2 || d2.Content != want || d2.UpdatedAt.Before(d.UpdatedAt) {
		t.Fatalf("document after patch %+v", d2)
	}
	// The agent's view of the new node works through the engine.
	ins, err := f.svc.Inspect(ctx, "p", werkbaum.InspectOptions{})
	if err != nil || !strings.Contains(string(ins.JSON), "Grüße") {
		t.Fatalf("inspect after patch: %v", err)
	}
}

func TestPatchRebasesOverAnAgentWrite(t *testing.T) {
	f := newDocFixture(t, planText)
	ctx := context.Background()
	d := f.doc(t) // the editor's shadow: version 1
	f.setStatus(t, "auth", "done", "Claude")
	// The editor changes another line on its old base: rebased, not lost.
	res, err := f.svc.PatchContent(ctx, f.id, patchOn(d, "c1", 1, replace(3, "  - [~] #docs: Docs @Müller (XS)"), insert(5, "neu")))
	if err != nil {
		t.Fatal(err)
	}
	if res.Version != 3 || len(res.OpsSinceBase) != 1 || res.OpsSinceBase[0].Index != 2 {
		t.Fatalf("result %+v", res)
	}
	want := "%% test plan\n[~] #root: Release (L)\n  - [x] #auth: Login @jörg (S)\n  - [~] #docs: Docs @Müller (XS)\n\nneu"
	if got := f.fileText(t); got != want {
		t.Fatalf("file:\n%q\nwant\n%q", got, want)
	}
	// The client brings its shadow forward with opsSinceBase and its own ops and gets the
	// server's text.
	shadow, err := f.eng.ApplyLines(ctx, d.Content, res.OpsSinceBase)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(shadow, "[x] #auth") {
		t.Fatalf("opsSinceBase does not carry the agent's change: %q", shadow)
	}
}

func TestPatchConflict(t *testing.T) {
	f := newDocFixture(t, planText)
	ctx := context.Background()
	d := f.doc(t)
	f.setStatus(t, "auth", "done", "Claude")
	before := f.fileText(t)
	p := patchOn(d, "c1", 7, replace(2, "  - [!] #auth: Login @jörg (S)"))
	_, err := f.svc.PatchContent(ctx, f.id, p)
	var c *PatchConflict
	if !errors.As(err, &c) || c.CurrentVersion != 2 || len(c.OpsSinceBase) != 1 || c.OpsSinceBase[0].Op != "replace" {
		t.Fatalf("conflict: %v %+v", err, c)
	}
	if f.fileText(t) != before || f.doc(t).Version != 2 {
		t.Fatal("a conflicting patch changed the plan")
	}
	// The same (clientId, seq) again: the same answer, even though nothing changed since.
	_, err = f.svc.PatchContent(ctx, f.id, p)
	var c2 *PatchConflict
	if !errors.As(err, &c2) || c2.CurrentVersion != 2 {
		t.Fatalf("repeat of a conflict: %v", err)
	}
}

func TestPatchIdempotentBySeq(t *testing.T) {
	f := newDocFixture(t, planText)
	ctx := context.Background()
	d := f.doc(t)
	p := patchOn(d, "c1", 1, insert(1, "inserted once"))
	first, err := f.svc.PatchContent(ctx, f.id, p)
	if err != nil {
		t.Fatal(err)
	}
	again, err := f.svc.PatchContent(ctx, f.id, p)
	if err != nil || again.Version != first.Version {
		t.Fatalf("repeat: %+v %v", again, err)
	}
	if n := strings.Count(f.fileText(t), "inserted once"); n != 1 {
		t.Fatalf("the line is in the file %d times", n)
	}
	if v := f.doc(t).Version; v != 2 {
		t.Fatalf("version %d after a repeat", v)
	}
	// Another client may use the same seq.
	if _, err := f.svc.PatchContent(ctx, f.id, patchOn(f.doc(t), "c2", 1, insert(1, "second"))); err != nil {
		t.Fatal(err)
	}
	if f.doc(t).Version != 3 {
		t.Fatal("another client's seq 1 was taken for a repeat")
	}
	// A repeated 422 stays a 422 even when the base became valid meanwhile.
	bad := patchOn(f.doc(t), "c3", 1, insert(99, "x"))
	if _, err := f.svc.PatchContent(ctx, f.id, bad); !errors.Is(err, ErrPatchUnapplicable) {
		t.Fatalf("out of range: %v", err)
	}
	if _, err := f.svc.PatchContent(ctx, f.id, bad); !errors.Is(err, ErrPatchUnapplicable) {
		t.Fatalf("repeat of a 422: %v", err)
	}
}

func TestPatchUnapplicable(t *testing.T) {
	f := newDocFixture(t, planText)
	ctx := context.Background()
	d := f.doc(t)
	cases := map[string]ContentPatch{
		"checksum mismatch": {BaseVersion: 1, Checksum: werkbaum.DocumentChecksum("other"), ClientID: "c", Seq: 1, Ops: []werkbaum.LineOp{insert(0, "x")}},
		"do not apply":      patchOn(d, "c", 2, insert(6, "x")),
		"base version 9":    {BaseVersion: 9, Checksum: werkbaum.DocumentChecksum(d.Content), ClientID: "c", Seq: 3, Ops: []werkbaum.LineOp{insert(0, "x")}},
	}
	for want, p := range cases {
		_, err := f.svc.PatchContent(ctx, f.id, p)
		if !errors.Is(err, ErrPatchUnapplicable) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v", want, err)
		}
	}
	if f.fileText(t) != planText || f.doc(t).Version != 1 {
		t.Fatal("a refused patch changed the plan")
	}
}

func TestPatchMalformed(t *testing.T) {
	f := newDocFixture(t, planText)
	ctx := context.Background()
	d := f.doc(t)
	cases := map[string][]werkbaum.LineOp{
		"unsorted":    {insert(3, "a"), insert(1, "b")},
		"overlapping": {{Op: "replace", Index: 1, Count: 2, Lines: []string{"x"}}, {Op: "delete", Index: 2, Count: 1}},
		"negative":    {{Op: "delete", Index: -1, Count: 1}},
		"unknown op":  {{Op: "move", Index: 1}},
	}
	for name, ops := range cases {
		_, err := f.svc.PatchContent(ctx, f.id, patchOn(d, "c", 1, ops...))
		var ie *werkbaum.InputError
		if !errors.As(err, &ie) {
			t.Errorf("%s: %v, want an InputError", name, err)
		}
	}
	p := patchOn(d, "", 1, insert(0, "x"))
	if _, err := f.svc.PatchContent(ctx, f.id, p); !errors.Is(err, werkbaum.ErrBadInput) || !strings.Contains(err.Error(), "clientId") {
		t.Errorf("no clientId: %v", err)
	}
	if f.fileText(t) != planText {
		t.Fatal("a malformed patch changed the plan")
	}
}

func TestPatchKeepsCRLFAndBOM(t *testing.T) {
	raw := "\ufeff" + strings.ReplaceAll(planText, "\n", "\r\n")
	f := newDocFixture(t, raw)
	ctx := context.Background()
	d := f.doc(t)
	if d.Content != planText {
		t.Fatalf("content is not normalised: %q", d.Content)
	}
	if _, err := f.svc.PatchContent(ctx, f.id, patchOn(d, "c", 1, replace(3, "  - [x] #docs: Docs @Müller (XS)"))); err != nil {
		t.Fatal(err)
	}
	want := "\ufeff" + strings.ReplaceAll(strings.Replace(planText, "[ ] #docs", "[x] #docs", 1), "\n", "\r\n")
	if got := f.fileText(t); got != want {
		t.Fatalf("file:\n%q\nwant\n%q", got, want)
	}
	if d2 := f.doc(t); d2.Version != 2 || strings.ContainsAny(d2.Content, "\r\ufeff") {
		t.Fatalf("document after patch %+v", d2)
	}
}

func TestSetTitle(t *testing.T) {
	f := newDocFixture(t, planText)
	ctx := context.Background()
	d, err := f.svc.SetTitle(ctx, f.id, "Veröffentlichung", 1, DocAuthor{Client: "c9", DisplayName: "Jörg"})
	if err != nil {
		t.Fatal(err)
	}
	if d.Title != "Veröffentlichung" || d.Version != 2 || d.Content != planText {
		t.Fatalf("renamed %+v", d)
	}
	if f.read(t).Base.Revision != 2 || f.fileText(t) != planText {
		t.Fatal("a rename must be a new revision with the same file")
	}
	if _, err := f.svc.SetTitle(ctx, f.id, "again", 1, DocAuthor{}); !errors.Is(err, ErrStaleVersion) {
		t.Fatalf("stale expectedVersion: %v", err)
	}
	for _, bad := range []string{"", "  ", strings.Repeat("x", 256), "a\nb"} {
		if _, err := f.svc.SetTitle(ctx, f.id, bad, 2, DocAuthor{}); !errors.Is(err, werkbaum.ErrBadInput) {
			t.Errorf("title %q: %v", bad, err)
		}
	}
	feed, err := f.svc.Changes(ctx, f.id, 1, 0)
	if err != nil || feed == nil || len(feed.Events) != 1 || feed.Events[0].ChangeType != ChangeRenamed ||
		feed.Events[0].Title != "Veröffentlichung" || feed.Events[0].DisplayName != "Jörg" || len(feed.Ops) != 0 || feed.FromVersion == nil {
		t.Fatalf("feed after rename: %+v %v", feed, err)
	}
	// An agent write right after keeps working on the new revision.
	if res := f.setStatus(t, "auth", "done", "A"); res.Revision != 3 {
		t.Fatalf("agent write after rename: %+v", res)
	}
}

func TestChangesFeed(t *testing.T) {
	f := newDocFixture(t, planText)
	ctx := context.Background()
	d := f.doc(t)
	// since 0: the whole content.
	feed, err := f.svc.Changes(ctx, f.id, 0, 0)
	if err != nil || feed.Content == nil || *feed.Content != planText || feed.FromVersion != nil || feed.CurrentVersion != 1 {
		t.Fatalf("feed from 0: %+v %v", feed, err)
	}
	// Nothing new: (nil, nil) after the wait.
	start := time.Now()
	if feed, err := f.svc.Changes(ctx, f.id, 1, 50*time.Millisecond); feed != nil || err != nil || time.Since(start) < 50*time.Millisecond {
		t.Fatalf("idle feed: %+v %v", feed, err)
	}
	// A waiter is woken by a patch, and by an agent write.
	type answer struct {
		feed *ChangeFeed
		err  error
	}
	wait := func(since uint64) chan answer {
		ch := make(chan answer, 1)
		go func() {
			feed, err := f.svc.Changes(ctx, f.id, since, 10*time.Second)
			ch <- answer{feed, err}
		}()
		time.Sleep(20 * time.Millisecond) // let it wait
		return ch
	}
	ch := wait(1)
	if _, err := f.svc.PatchContent(ctx, f.id, patchOn(d, "c1", 1, insert(1, "x"))); err != nil {
		t.Fatal(err)
	}
	a := <-ch
	if a.err != nil || a.feed.CurrentVersion != 2 || a.feed.FromVersion == nil || *a.feed.FromVersion != 1 ||
		len(a.feed.Ops) != 1 || a.feed.Ops[0].Op != "insert" || len(a.feed.Events) != 1 || a.feed.Events[0].ClientID != "c1" ||
		a.feed.Events[0].DisplayName != "Jörg im Browser" {
		t.Fatalf("woken feed: %+v %v", a.feed, a.err)
	}
	ch = wait(2)
	f.setStatus(t, "auth", "done", "Claude")
	a = <-ch
	if a.err != nil || a.feed.CurrentVersion != 3 || a.feed.Events[0].DisplayName != "Claude" || a.feed.Events[0].ClientID != f.svc.agentClientID {
		t.Fatalf("feed after the agent: %+v %v", a.feed, a.err)
	}
	// A change outside talkd wakes waiters once a read notices it.
	ch = wait(3)
	if err := os.WriteFile(f.path, []byte(planText+"- outside\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	f.read(t)
	a = <-ch
	if a.err != nil || a.feed.CurrentVersion != 4 || a.feed.Events[0].DisplayName != outsideName || a.feed.Events[0].ClientID != "" {
		t.Fatalf("feed after an outside edit: %+v %v", a.feed, a.err)
	}
	// Events since 1 list every version once, in order.
	feed, _ = f.svc.Changes(ctx, f.id, 1, 0)
	var vs []uint64
	for _, e := range feed.Events {
		vs = append(vs, e.Version)
	}
	if fmt.Sprint(vs) != "[2 3 4]" {
		t.Fatalf("events since 1: %v", vs)
	}
	// ctx ending ends the wait.
	cctx, cancel := context.WithTimeout(ctx, 30*time.Millisecond)
	defer cancel()
	start = time.Now()
	if feed, err := f.svc.Changes(cctx, f.id, 4, time.Minute); feed != nil || err != nil || time.Since(start) > 10*time.Second {
		t.Fatalf("cancelled wait: %+v %v", feed, err)
	}
}

func TestCompaction(t *testing.T) {
	f := newDocFixture(t, planText)
	ctx := context.Background()
	first := f.doc(t)
	d := first
	for i := 0; i < docs.KeepVersions+2; i++ {
		res, err := f.svc.PatchContent(ctx, f.id, patchOn(d, "c", int64(i+1), replace(0, fmt.Sprintf("%%%% edit %d", i))))
		if err != nil {
			t.Fatal(err)
		}
		d = f.doc(t)
		if d.Version != res.Version {
			t.Fatalf("version %d, answer %d", d.Version, res.Version)
		}
	}
	// Version 1 (a milestone: the first seen) is still kept for the history, version 2 (a
	// sync state) is compacted.
	second := patchOn(first, "late", 1, insert(1, "late"))
	second.BaseVersion, second.Checksum = 2, "sha256:whatever"
	if _, err := f.svc.PatchContent(ctx, f.id, second); !errors.Is(err, ErrPatchUnapplicable) || !strings.Contains(err.Error(), "compacted") {
		t.Fatalf("patch on a compacted base: %v", err)
	}
	feed, err := f.svc.Changes(ctx, f.id, 2, 0)
	if err != nil || feed.Content == nil || *feed.Content != d.Content || feed.FromVersion != nil {
		t.Fatalf("feed from a compacted version: %+v %v", feed, err)
	}
	// The bound holds in the database.
	var texts int
	f.svc.db.View(func(tx Tx) error {
		return tx.Bucket(docs.BucketName("p")).Scan([]byte("t"), func(k, v []byte) error { texts++; return nil })
	})
	if texts > docs.KeepVersions+1 {
		t.Fatalf("%d texts kept, bound %d (+1 milestone)", texts, docs.KeepVersions)
	}
	// A recent base still rebases.
	recent := f.doc(t)
	f.setStatus(t, "auth", "done", "A")
	if _, err := f.svc.PatchContent(ctx, f.id, patchOn(recent, "c", 999, insert(1, "still fine"))); err != nil {
		t.Fatalf("recent base: %v", err)
	}
}

func TestHistoryMilestones(t *testing.T) {
	f := newDocFixture(t, planText)
	ctx := context.Background()
	patch := func(seq int64, milestone bool, line string) {
		p := patchOn(f.doc(t), "ed", seq, insert(1, line))
		p.Milestone = milestone
		if _, err := f.svc.PatchContent(ctx, f.id, p); err != nil {
			t.Fatal(err)
		}
	}
	patch(1, false, "sync 1")          // v2: a person's save of the last hour
	f.setStatus(t, "auth", "done", "") // v3: agent, no name → "Agent"
	patch(2, true, "milestone")        // v4
	patch(3, false, "sync 2")          // v5: the newest
	hist, err := f.svc.History(ctx, f.id)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, h := range hist {
		got = append(got, fmt.Sprintf("%d:%s:%s", h.Version, h.ChangeType, h.DisplayName))
		if h.DocumentID != f.id || h.Title != "plan" || h.Content == "" {
			t.Errorf("entry %+v", h)
		}
	}
	want := "[1:CREATED: 2:UPDATED:Jörg im Browser 3:UPDATED:Agent 4:UPDATED:Jörg im Browser 5:UPDATED:Jörg im Browser]"
	if fmt.Sprint(got) != want {
		t.Fatalf("history %v\nwant    %s", got, want)
	}
	if hist[1].Milestone || !hist[3].Milestone {
		t.Errorf("a save is no milestone, a milestone PATCH is: %+v %+v", hist[1], hist[3])
	}
	if !strings.Contains(hist[4].Content, "sync 2") || strings.Contains(hist[2].Content, "milestone") {
		t.Fatal("history contents are not the versions' texts")
	}
}

// TestPatchesAndAgentWritesRace runs editor PATCHes (appending lines, on whatever base
// they last saw) and agent writes (status changes) on one plan at once: every line and
// the last status survive, every version is recorded once.
func TestPatchesAndAgentWritesRace(t *testing.T) {
	f := newDocFixture(t, planText)
	ctx := context.Background()
	const editors, perEditor, agentWrites = 2, 8, 8
	var wg sync.WaitGroup
	errs := make(chan error, editors+1)
	for e := 0; e < editors; e++ {
		wg.Add(1)
		go func(e int) {
			defer wg.Done()
			d, err := f.svc.Document(ctx, f.id)
			if err != nil {
				errs <- err
				return
			}
			for i := 0; i < perEditor; i++ {
				line := fmt.Sprintf("  - [ ] editor %d line %d @jörg", e, i)
				// Insert before the final empty line of the base the editor has.
				n := strings.Count(d.Content, "\n")
				p := patchOn(d, fmt.Sprintf("ed%d", e), int64(i+1), insert(n, line))
				res, err := f.svc.PatchContent(ctx, f.id, p)
				var c *PatchConflict
				if errors.As(err, &c) || errors.Is(err, ErrPatchUnapplicable) {
					errs <- fmt.Errorf("editor %d line %d: %v (inserts never conflict)", e, i, err)
					return
				}
				if err != nil {
					errs <- err
					return
				}
				// Bring the shadow forward as a live client does: foreign ops, then its own
				// op rebased; here simply reload when others wrote in between.
				if len(res.OpsSinceBase) > 0 {
					if d, err = f.svc.Document(ctx, f.id); err != nil {
						errs <- err
						return
					}
				} else {
					d.Content, _ = f.eng.ApplyLines(ctx, d.Content, p.Ops)
					d.Version = res.Version
				}
			}
		}(e)
	}
	wg.Add(1)
	statuses := []string{"done", "progress", "skeleton", "highrisk"}
	go func() {
		defer wg.Done()
		for i := 0; i < agentWrites; i++ {
			for {
				snap, err := f.svc.Read(ctx, "p")
				if err != nil {
					errs <- err
					return
				}
				_, err = f.svc.Write(ctx, "p", WriteRequest{Tool: "werkbaum_set_status", RequestID: fmt.Sprintf("a%d-%d", i, snap.Base.Revision),
					ArgsHash: "h", Base: snap.Base, Verb: werkbaum.SetStatus{ID: "auth", Status: statuses[i%len(statuses)]}, Author: Author{Client: "local", Agent: "Claude"}})
				var ce *ConflictError
				if errors.As(err, &ce) {
					continue // an editor wrote in between: read again, as an agent does
				}
				if err != nil {
					errs <- err
					return
				}
				break
			}
		}
	}()
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	text := f.fileText(t)
	for e := 0; e < editors; e++ {
		for i := 0; i < perEditor; i++ {
			if n := strings.Count(text, fmt.Sprintf("editor %d line %d @", e, i)); n != 1 {
				t.Errorf("editor %d line %d is in the file %d times", e, i, n)
			}
		}
	}
	// The cycle's last status is "highrisk" ([!]).
	if last := statuses[(agentWrites-1)%len(statuses)]; last != "highrisk" || !strings.Contains(text, "[!] #auth") {
		t.Errorf("the agent's last status is lost:\n%s", text)
	}
	// One version per write, each recorded once, in order.
	d := f.doc(t)
	if want := uint64(1 + editors*perEditor + agentWrites); d.Version != want {
		t.Fatalf("version %d, want %d", d.Version, want)
	}
	feed, err := f.svc.Changes(ctx, f.id, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	agents := 0
	for i, e := range feed.Events {
		if e.Version != uint64(i+2) {
			t.Fatalf("events %+v", feed.Events)
		}
		if e.DisplayName == "Claude" {
			agents++
		}
	}
	if agents != agentWrites {
		t.Fatalf("%d agent versions, want %d", agents, agentWrites)
	}
}

// TestReadBetweenRenameAndSettle: a read that sees a writer's new file before the writer
// recorded its version must not record that version as a change outside talkd, and the
// feed waits for the writer's record instead of sending the version without its event.
func TestReadBetweenRenameAndSettle(t *testing.T) {
	f := newDocFixture(t, planText)
	ctx := context.Background()
	if d := f.doc(t); d.Version != 1 {
		t.Fatalf("document %+v", d)
	}
	done := f.svc.docWriting("p", 2)
	// As if the writer had renamed its file and not settled yet.
	if err := os.WriteFile(f.path, []byte(planText+"- new\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	st, _ := f.svc.docs.Doc("p")
	if rev := f.read(t).Base.Revision; rev != 2 {
		t.Fatalf("revision %d, file %q, recorded %+v", rev, f.fileText(t), st.Records())
	}
	if last, _ := st.Last(); last != 1 {
		t.Fatalf("a read recorded the writer's version: %+v", st.Records())
	}
	if feed, err := f.svc.Changes(ctx, f.id, 1, 0); feed != nil || err != nil {
		t.Fatalf("feed during the settle: %+v %v", feed, err)
	}
	ch := make(chan *ChangeFeed, 1)
	go func() {
		feed, _ := f.svc.Changes(ctx, f.id, 1, 10*time.Second)
		ch <- feed
	}()
	time.Sleep(20 * time.Millisecond)
	done() // the writer ended without a record (its settle failed): the next read records it
	feed := <-ch
	if feed == nil || feed.CurrentVersion != 2 || len(feed.Events) != 1 || feed.Events[0].DisplayName != outsideName {
		t.Fatalf("feed after the writer ended: %+v", feed)
	}
}

// randomOps makes sorted, non-overlapping ops on a base of n lines, with new lines named
// tag-k (unique), as an editor would send them.
func randomOps(r *rand.Rand, n int, tag string) []werkbaum.LineOp {
	var ops []werkbaum.LineOp
	k := 0
	newLines := func() []string {
		out := make([]string, 1+r.IntN(2))
		for i := range out {
			k++
			out[i] = fmt.Sprintf("  - [ ] %s-%d @jörg", tag, k)
		}
		return out
	}
	for i := 0; i <= n; {
		switch c := r.IntN(6); {
		case c == 0:
			ops = append(ops, werkbaum.LineOp{Op: "insert", Index: i, Lines: newLines()})
			i++
		case c == 1 && i < n:
			cnt := 1 + r.IntN(min(2, n-i))
			ops = append(ops, werkbaum.LineOp{Op: "delete", Index: i, Count: cnt})
			i += cnt + 1
		case c == 2 && i < n:
			cnt := 1 + r.IntN(min(2, n-i))
			ops = append(ops, werkbaum.LineOp{Op: "replace", Index: i, Count: cnt, Lines: newLines()})
			i += cnt + 1
		default:
			i += 1 + r.IntN(3)
		}
		if len(ops) == 3 {
			break
		}
	}
	return ops
}

// TestPatchRebaseKeepsBothSides: two editors patch the same base; the second one's patch
// is rebased over the first's. When the server accepts it, the result holds every line
// both inserted, none that either removed, and the other base lines in their order.
func TestPatchRebaseKeepsBothSides(t *testing.T) {
	base := planText + "  - [ ] #a: A\n  - [ ] #b: B\n  - [ ] #c: C\n  - [ ] #d: D\n  - [ ] #e: E\n  - [ ] #f: F\n"
	f := newDocFixture(t, base)
	ctx := context.Background()
	r := rand.New(rand.NewPCG(18, 1))
	rebased, conflicts := 0, 0
	for trial := 0; trial < 40; trial++ {
		if err := os.WriteFile(f.path, []byte(base), 0o640); err != nil {
			t.Fatal(err)
		}
		d0 := f.doc(t)
		lines := strings.Split(d0.Content, "\n")
		a := randomOps(r, len(lines), fmt.Sprintf("a%d", trial))
		b := randomOps(r, len(lines), fmt.Sprintf("b%d", trial))
		if _, err := f.svc.PatchContent(ctx, f.id, patchOn(d0, "A", int64(trial+1), a...)); err != nil {
			t.Fatalf("trial %d: first patch %v: %v", trial, a, err)
		}
		_, err := f.svc.PatchContent(ctx, f.id, patchOn(d0, "B", int64(trial+1), b...))
		var c *PatchConflict
		if errors.As(err, &c) {
			conflicts++
			continue
		}
		if err != nil {
			t.Fatalf("trial %d: second patch %v: %v", trial, b, err)
		}
		rebased++
		got := strings.Split(f.doc(t).Content, "\n")
		removed := map[int]bool{}
		want := map[string]bool{}
		for _, op := range append(append([]werkbaum.LineOp{}, a...), b...) {
			if op.Op != "insert" {
				for i := op.Index; i < op.Index+op.Count; i++ {
					removed[i] = true
				}
			}
			if op.Op != "delete" {
				for _, l := range op.Lines {
					want[l] = true
				}
			}
		}
		var kept []string
		for i, l := range lines {
			if !removed[i] {
				kept = append(kept, l)
			}
		}
		seen := 0
		for _, l := range got {
			if want[l] {
				delete(want, l)
				continue
			}
			if seen >= len(kept) || kept[seen] != l {
				t.Fatalf("trial %d: base lines out of order or resurrected at %q\na=%v\nb=%v\ngot=%q", trial, l, a, b, got)
			}
			seen++
		}
		if len(want) > 0 || seen != len(kept) {
			t.Fatalf("trial %d: lost inserted %v or base lines (%d of %d)\na=%v\nb=%v\ngot=%q", trial, want, seen, len(kept), a, b, got)
		}
	}
	if rebased < 10 || conflicts == 0 {
		t.Fatalf("%d rebased, %d conflicts: the trials do not cover both", rebased, conflicts)
	}
}

// TestPatchSettleLostIsNotAppliedTwice: the state database fails after a PATCH's pending
// record (a crash between the rename and the settle looks the same to the next start). A
// repeat of its (clientId, seq), in this process and in the next, gets the answer given,
// and its lines are in the plan once.
func TestPatchSettleLostIsNotAppliedTwice(t *testing.T) {
	f, db, id := failingDocFixture(t)
	ctx := context.Background()
	d, err := f.svc.Document(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	p := patchOn(d, "ed", 1, insert(2, "  - [ ] #once: Only once @jörg"))
	db.arm(1) // the pending record, then nothing
	res, err := f.svc.PatchContent(ctx, id, p)
	if err != nil || res.Version != 2 {
		t.Fatalf("patch: %+v %v", res, err)
	}
	f.svc.mem.WaitSettles() // the answer does not wait for the settle
	if db.failed.Load() == 0 {
		t.Fatal("the settle did not fail: the test does not test what it says")
	}
	if again, err := f.svc.PatchContent(ctx, id, p); err != nil || again.Version != 2 {
		t.Fatalf("repeat in the same process: %+v %v", again, err)
	}
	// The next start, on what the database holds (the pending record).
	next := f.openOn(t, Bolt(f.db))
	if again, err := next.PatchContent(ctx, id, p); err != nil || again.Version != 2 {
		t.Fatalf("repeat after a restart: %+v %v", again, err)
	}
	if n := strings.Count(f.fileText(t), "Only once"); n != 1 {
		t.Fatalf("the patch's line is in the plan %d times", n)
	}
	if d, err := next.Document(ctx, id); err != nil || d.Version != 2 {
		t.Fatalf("document after the restart: %+v %v", d, err)
	}
	// The start settled the PATCH as applied and gave its version the editor's name, not
	// that of a change made outside talkd.
	hist, err := next.History(ctx, id)
	if err != nil || len(hist) == 0 {
		t.Fatalf("history after the restart: %v %v", hist, err)
	}
	if v := hist[len(hist)-1]; v.Version != 2 || v.ClientID != "ed" || v.DisplayName != p.DisplayName || v.DisplayName == outsideName {
		t.Fatalf("version 2 after the restart: %+v (the patch's display name %q)", v, p.DisplayName)
	}
}

// recorderFunc is a WriteRecorder of a function; its plans are not mirrored.
type recorderFunc func(ctx context.Context, ev WriteEvent) func(context.Context) string

func (f recorderFunc) AfterWrite(ctx context.Context, ev WriteEvent) func(context.Context) string {
	return f(ctx, ev)
}
func (recorderFunc) State(string) any { return nil }

// TestPatchRunsAfterWrite: an applied PATCH reaches the mirror and the announcements
// like an agent write, with its tool name, the editor as the author and the plan's
// settings; refused ones do not.
func TestPatchRunsAfterWrite(t *testing.T) {
	f := newFixture(t, planText)
	var mu sync.Mutex
	var events []WriteEvent
	svc, err := New(Options{Plans: []config.Plan{{Key: "p", Path: f.path, Lang: "de", Announce: true}}, Engine: f.eng, DB: Bolt(f.db), Lanes: &queue.Lanes{},
		Recorder: recorderFunc(func(ctx context.Context, ev WriteEvent) func(context.Context) string {
			mu.Lock()
			events = append(events, ev)
			mu.Unlock()
			return func(context.Context) string { t.Error("a PATCH waited for the mirror's report"); return "" }
		})})
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	ctx := context.Background()
	id, _ := svc.DocumentID(ctx, "p")
	d, err := svc.Document(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.PatchContent(ctx, id, patchOn(d, "ed", 1, replace(2, "  - [x] #auth: Login @jörg (S)"))); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.PatchContent(ctx, id, patchOn(d, "ed", 2, insert(99, "x"))); !errors.Is(err, ErrPatchUnapplicable) {
		t.Fatalf("out of range: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(events) != 1 {
		t.Fatalf("%d AfterWrite events, want 1", len(events))
	}
	ev := events[0]
	if ev.Tool != "document_patch" || ev.Author.Agent != "Jörg im Browser" || ev.Author.Client != "ed" || ev.Revision != 2 ||
		ev.Lang != "de" || !ev.Announce || ev.Mirror || ev.OldText != planText || !strings.Contains(ev.NewText, "[x] #auth") {
		t.Fatalf("event %+v", ev)
	}
}

// TestFeedDiffSharedByWaiters: the waiters one write wakes get one diff, computed once and
// shared (the same ops), and each still gets the right answer; an older base gets its own.
func TestFeedDiffSharedByWaiters(t *testing.T) {
	f := newDocFixture(t, planText)
	ctx := context.Background()
	d := f.doc(t)
	const waiters = 50
	type answer struct {
		feed *ChangeFeed
		err  error
	}
	answers := make(chan answer, waiters)
	for range waiters {
		go func() {
			feed, err := f.svc.Changes(ctx, f.id, d.Version, 10*time.Second)
			answers <- answer{feed, err}
		}()
	}
	time.Sleep(50 * time.Millisecond) // let them wait
	if _, err := f.svc.PatchContent(ctx, f.id, patchOn(d, "c1", 1, insert(1, "- @jörg shared line"))); err != nil {
		t.Fatal(err)
	}
	var first []werkbaum.LineOp
	for range waiters {
		a := <-answers
		if a.err != nil || a.feed == nil || a.feed.FromVersion == nil || *a.feed.FromVersion != d.Version ||
			len(a.feed.Ops) != 1 || a.feed.Ops[0].Op != "insert" || a.feed.Ops[0].Lines[0] != "- @jörg shared line" {
			t.Fatalf("waiter's answer: %+v %v", a.feed, a.err)
		}
		if first == nil {
			first = a.feed.Ops
		} else if &first[0] != &a.feed.Ops[0] {
			t.Fatal("a waiter computed its own diff instead of sharing the one of the write")
		}
	}
	// An older base is another diff, with its own (right) answer.
	d2 := f.doc(t)
	if _, err := f.svc.PatchContent(ctx, f.id, patchOn(d2, "c1", 2, insert(0, "- top"))); err != nil {
		t.Fatal(err)
	}
	feed, err := f.svc.Changes(ctx, f.id, d.Version, 0)
	if err != nil || feed.FromVersion == nil || len(feed.Ops) != 2 {
		t.Fatalf("feed from the older base: %+v %v", feed, err)
	}
}

// TestDocumentDeletedAndRestored: a plan file that goes away makes its document deleted:
// one DELETED version (once, however many reads notice it), GET and PATCH refused with
// ErrPlanMissing, the feed and the history still answering; the file's return is a
// RESTORED version diffed against what was there, and the revision counter stays one.
func TestDocumentDeletedAndRestored(t *testing.T) {
	f := newDocFixture(t, planText)
	ctx := context.Background()
	before := f.doc(t)
	woken := make(chan *ChangeFeed, 1)
	go func() {
		feed, err := f.svc.Changes(ctx, f.id, before.Version, 10*time.Second)
		if err != nil {
			t.Error(err)
		}
		woken <- feed
	}()
	time.Sleep(20 * time.Millisecond) // the waiter is on the channel
	if err := os.Remove(f.path); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := f.svc.Document(ctx, f.id); !errors.Is(err, ErrPlanMissing) {
			t.Fatalf("GET of a deleted document: %v", err)
		}
	}
	deleted := before.Version + 1
	feed := <-woken
	if feed == nil || feed.CurrentVersion != deleted || len(feed.Events) != 1 || feed.Events[0].ChangeType != ChangeDeleted ||
		feed.FromVersion == nil || *feed.FromVersion != before.Version || len(feed.Ops) != 0 {
		t.Fatalf("the waiter's feed after the deletion: %+v", feed)
	}
	if feed, err := f.svc.Changes(ctx, f.id, deleted, 0); feed != nil || err != nil {
		t.Fatalf("nothing after the deletion yet: %+v %v", feed, err)
	}
	if _, err := f.svc.PatchContent(ctx, f.id, patchOn(before, "c1", 1, replace(1, "x"))); !errors.Is(err, ErrPlanMissing) {
		t.Fatalf("PATCH of a deleted document: %v", err)
	}
	hist, err := f.svc.History(ctx, f.id)
	if err != nil || len(hist) == 0 || hist[len(hist)-1].ChangeType != ChangeDeleted || hist[len(hist)-1].Content != before.Content {
		t.Fatalf("history of a deleted document: %+v %v", hist, err)
	}

	restored := strings.Replace(planText, "[ ] #auth", "[x] #auth", 1)
	if err := os.WriteFile(f.path, []byte(restored), 0o640); err != nil {
		t.Fatal(err)
	}
	snap := f.read(t)
	if snap.Base.Revision != deleted+1 {
		t.Fatalf("revision after the file's return: %d, want %d", snap.Base.Revision, deleted+1)
	}
	feed, err = f.svc.Changes(ctx, f.id, deleted, 0)
	if err != nil || feed == nil || feed.CurrentVersion != deleted+1 || len(feed.Events) != 1 || feed.Events[0].ChangeType != ChangeRestored ||
		len(feed.Ops) != 1 || feed.Ops[0].Op != "replace" {
		t.Fatalf("feed after the file's return: %+v %v", feed, err)
	}
	if d := f.doc(t); d.Content != restored || d.Version != deleted+1 {
		t.Fatalf("the restored document: %+v", d)
	}
}
