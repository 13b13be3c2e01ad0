package docstore

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"talkd/internal/werkbaum"
	"talkd/internal/werkbaum/plans/docs"
	"talkd/internal/werkbaum/plans/journal"
)

func clock() time.Time { return time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC) }

// A read's revision is recorded once: the first seen as CREATED, a later one as a change
// outside talkd; one a writer in the lane is writing is left to it (its end wakes the
// feed), and a kept version of a failed settle is recorded with its author.
func TestNoteRecordsWhatReadsFind(t *testing.T) {
	s := openStore(t, openDB(t))
	d, err := s.Doc("@jörg")
	if err != nil {
		t.Fatal(err)
	}
	woke := d.Changed()
	s.Note("@jörg", 1, "\ufeff- [ ] a\r\n", clock)
	recs := d.Records()
	if len(recs) != 1 || recs[0].ChangeType != docs.ChangeCreated || recs[0].DisplayName != "" {
		t.Fatalf("first version %+v", recs)
	}
	if text, _, _ := s.Text("@jörg", 1); text != "- [ ] a\n" {
		t.Fatalf("kept text %q, want it normalised", text)
	}
	select {
	case <-woke:
	default:
		t.Fatal("recording a version did not wake the feed")
	}
	s.Note("@jörg", 1, "- [ ] a\n", clock) // known: nothing more
	s.Note("@jörg", 2, "- [x] a\n", clock)
	if recs := d.Records(); len(recs) != 2 || recs[1].DisplayName != OutsideName || recs[1].ChangeType != docs.ChangeUpdated {
		t.Fatalf("outside change %+v", recs)
	}

	end := d.Writing(3)
	if !d.Settling(3) {
		t.Fatal("a revision being written is not settling")
	}
	s.Note("@jörg", 3, "- [x] a\n- b\n", clock)
	if last, _ := d.Last(); last != 2 {
		t.Fatalf("a read recorded the writer's revision: last %d", last)
	}
	woke = d.Changed()
	end()
	select {
	case <-woke:
	default:
		t.Fatal("the end of a write did not wake the feed")
	}

	d.Keep(&Version{Rec: docs.Record{Version: 3, ChangeType: docs.ChangeUpdated, DisplayName: "Müller", ClientID: "ed", At: clock()}, Text: "- [x] a\n- b\n"})
	s.Note("@jörg", 3, "- [x] a\n- b\n", clock)
	recs = d.Records()
	if r := recs[len(recs)-1]; r.Version != 3 || r.DisplayName != "Müller" || r.ClientID != "ed" {
		t.Fatalf("the kept version was not recorded with its author: %+v", r)
	}

	fresh := openStore(t, openDB(t))
	if fresh.Known("@jörg") {
		t.Fatal("an empty store knows a document")
	}
	if !s.Known("@jörg") {
		t.Fatal("a loaded document is not known")
	}
}

// The waiters asking for the same diff at once share one computation.
func TestDiffComputedOnceForAllWaiters(t *testing.T) {
	s := openStore(t, openDB(t))
	d, _ := s.Doc("p")
	var calls atomic.Int32
	release := make(chan struct{})
	compute := func(ctx context.Context, from uint64) (bool, []werkbaum.LineOp, error) {
		calls.Add(1)
		<-release
		return true, []werkbaum.LineOp{}, nil
	}
	var wg sync.WaitGroup
	got := make([]*FeedDiff, 20)
	for i := range got {
		wg.Go(func() { got[i] = d.Diff(context.Background(), 1, 2, compute) })
	}
	for calls.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	close(release)
	wg.Wait()
	if n := calls.Load(); n != 1 {
		t.Fatalf("%d computations for one diff", n)
	}
	for _, f := range got {
		if f != got[0] || !f.Kept || f.Err != nil {
			t.Fatalf("waiters got different answers: %+v vs %+v", f, got[0])
		}
	}
}

// The readers of the versions wait for a writer that renamed its revision into place
// and settles it after its answer (Renamed) and then see its version; a read's Note of
// that revision leaves it to the writer (never a change made outside talkd) and does not
// wait, so the plan's next write overlaps the settle.
func TestVersionReadersWaitForARenamedWritersRecord(t *testing.T) {
	s := openStore(t, openDB(t))
	d, err := s.Doc("@müller")
	if err != nil {
		t.Fatal(err)
	}
	s.Note("@müller", 1, "- [ ] a\n", clock)
	end := d.Writing(2)
	d.Renamed(2)
	s.Note("@müller", 2, "- [x] a\n", clock) // returns: the writer records it
	read := make(chan []docs.Record)
	go func() { read <- d.Records() }()
	select {
	case recs := <-read:
		t.Fatalf("the versions were read before the renamed writer's record: %+v", recs)
	case <-time.After(50 * time.Millisecond):
	}
	v := &Version{Rec: docs.Record{Version: 2, ChangeType: docs.ChangeUpdated, DisplayName: "Agent Jörg", ClientID: "mcp-1", At: clock()}, Text: "- [x] a\n"}
	if err := s.commit.Do(func(tx journal.Tx) error { return d.Put(tx, v) }); err != nil {
		t.Fatal(err)
	}
	d.Saved(v)
	end()
	recs := <-read
	if r := recs[len(recs)-1]; len(recs) != 2 || r.Version != 2 || r.DisplayName != "Agent Jörg" {
		t.Fatalf("after the writer's record: %+v", recs)
	}
}
