package plans

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	"go.etcd.io/bbolt"

	"talkd/internal/config"
	"talkd/internal/queue"
	"talkd/internal/werkbaum"
	"talkd/internal/werkbaum/plans/journal"
)

// failingDB lets a number of Updates through and then fails every Update, as a state
// disk that filled up would, until healed; reads always work.
type failingDB struct {
	Database
	allow  atomic.Int64 // Updates still let through while armed
	armed  atomic.Bool
	failed atomic.Int64
}

var errDiskFull = errors.New("write state: no space left on device")

func (d *failingDB) Update(fn func(Tx) error) error {
	if d.armed.Load() && d.allow.Add(-1) < 0 {
		d.failed.Add(1)
		return errDiskFull
	}
	return d.Database.Update(fn)
}

func (d *failingDB) arm(allow int64) { d.allow.Store(allow); d.armed.Store(true) }
func (d *failingDB) heal()           { d.armed.Store(false) }

func (f *fixture) openOn(t *testing.T, db Database) *Service {
	t.Helper()
	svc, err := New(Options{Plans: []config.Plan{{Key: "p", Path: f.path, Lang: "en"}}, Engine: f.eng, DB: db, Lanes: &queue.Lanes{}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { svc.Close() })
	// The store summarises its plans in the background from the start; let that finish, so
	// that a test counting the database's updates counts only its write's. (A summary
	// answered is not enough: Summarize may compute one itself while the warm-up's first
	// read still records the revision.)
	svc.warming.Wait()
	return svc
}

// TestSettleFailureKeptInMemory: the journal cannot be written after the rename (the
// pending record went through, the settle does not). The write is answered applied and
// stays applied: operation_get and a retry say so, reads work and give its revision, and
// once the database can be written again the background saver saves it, so that a fresh
// service on the same database knows it too.
func TestSettleFailureKeptInMemory(t *testing.T) {
	f := newFixture(t, planText)
	db := &failingDB{Database: Bolt(f.db)}
	f.svc = f.openOn(t, db)
	ctx := context.Background()
	base := f.read(t).Base
	req := WriteRequest{Tool: "werkbaum_set_status", RequestID: "s1", ArgsHash: "h", Base: base,
		Verb: werkbaum.SetStatus{ID: "auth", Status: "done"}}
	db.arm(1) // the pending record, then nothing
	res, err := f.svc.Write(ctx, "p", req)
	if err != nil || !res.Changed || res.Revision != 2 {
		t.Fatalf("write: %+v %v", res, err)
	}
	f.svc.mem.WaitSettles() // the answer does not wait for the settle
	if db.failed.Load() == 0 {
		t.Fatal("the settle did not fail: the test does not test what it says")
	}
	if op, err := f.svc.Operation(ctx, "p", "", "s1"); err != nil || op.State != StateApplied || op.InProgress || op.Revision != 2 {
		t.Fatalf("operation after a failed settle: %+v %v", op, err)
	}
	if again, err := f.svc.Write(ctx, "p", req); err != nil || !again.Replayed || again.Revision != 2 {
		t.Fatalf("retry after a failed settle: %+v %v", again, err)
	}
	if snap := f.read(t); snap.Base != res.Base {
		t.Fatalf("read after a failed settle: %+v, want %+v", snap.Base, res.Base)
	}
	// An outside edit while the database cannot be written still gets a revision.
	edited := strings.Replace(f.fileText(t), "Docs", "Documentation", 1)
	if err := os.WriteFile(f.path, []byte(edited), 0o640); err != nil {
		t.Fatal(err)
	}
	if snap := f.read(t); snap.Base.Revision != 3 || snap.Base.Checksum != werkbaum.Checksum([]byte(edited)) {
		t.Fatalf("read of an outside edit while unwritable: %+v", snap.Base)
	}
	db.heal()
	if n, err := f.svc.mem.SaveUnsaved(); err != nil || n != 2 {
		t.Fatalf("saving what was kept: %d saved, %v; want the entry and the revision", n, err)
	}
	fresh := f.openOn(t, Bolt(f.db))
	if op, _ := fresh.Operation(ctx, "p", "", "s1"); op.State != StateApplied || op.Revision != 2 {
		t.Fatalf("after saving, a fresh service: %+v", op)
	}
	if snap, err := fresh.Read(ctx, "p"); err != nil || snap.Base.Revision != 3 {
		t.Fatalf("after saving, the revision of the outside edit: %+v %v", snap, err)
	}
}

// TestPendingOfAGoneWriter: a pending entry whose writer is gone (its write and its
// forget both failed) is settled by the file: operation_get answers applied or unknown,
// never "in progress", and a retry of the id is replayed or runs anew, never refused as
// in an unexpected state.
func TestPendingOfAGoneWriter(t *testing.T) {
	for _, renamed := range []bool{true, false} {
		f := newFixture(t, planText)
		ctx := context.Background()
		base := f.read(t).Base
		newText := strings.Replace(planText, "[ ] #auth", "[x] #auth", 1)
		res, _ := json.Marshal(WriteResult{Base: Base{Revision: 2, Checksum: werkbaum.Checksum([]byte(newText))}, Revision: 2, Changed: true})
		entry := &journalEntry{RequestID: "gone", ArgsHash: "h", Tool: "werkbaum_set_status", State: statePending,
			OldChecksum: base.Checksum, NewChecksum: werkbaum.Checksum([]byte(newText)), Revision: 2, Result: res}
		if err := f.svc.record("p", entry); err != nil {
			t.Fatal(err)
		}
		if renamed {
			os.WriteFile(f.path, []byte(newText), 0o640)
		}
		op, err := f.svc.Operation(ctx, "p", "", "gone")
		want := map[bool]string{true: StateApplied, false: StateUnknown}[renamed]
		if err != nil || op.State != want || op.InProgress {
			t.Fatalf("renamed=%v: operation %+v %v, want %s", renamed, op, err, want)
		}
		w, err := f.svc.Write(ctx, "p", WriteRequest{Tool: "werkbaum_set_status", RequestID: "gone", ArgsHash: "h", Base: base,
			Verb: werkbaum.SetStatus{ID: "auth", Status: "done"}})
		if err != nil || w.Revision != 2 || w.Replayed != renamed {
			t.Fatalf("renamed=%v: retry %+v %v", renamed, w, err)
		}
		if got := f.fileText(t); got != newText {
			t.Fatalf("renamed=%v: file after the retry:\n%s", renamed, got)
		}
		if op, _ := f.svc.Operation(ctx, "p", "", "gone"); op.State != StateApplied {
			t.Fatalf("renamed=%v: after the retry %+v", renamed, op)
		}
	}
}

// TestRequestIDsPerClient: the same request id from two clients names two requests, and
// each client's operation_get sees only its own.
func TestRequestIDsPerClient(t *testing.T) {
	f := newFixture(t, planText)
	ctx := context.Background()
	a := Author{Client: "alice"}
	res, err := f.svc.Write(ctx, "p", WriteRequest{Tool: "werkbaum_set_status", RequestID: "r-1", ArgsHash: "ha", Base: f.read(t).Base,
		Verb: werkbaum.SetStatus{ID: "auth", Status: "done"}, Author: a})
	if err != nil || !res.Changed {
		t.Fatalf("alice: %+v %v", res, err)
	}
	for _, client := range []string{"bob", "", config.LocalClientID} {
		if op, _ := f.svc.Operation(ctx, "p", client, "r-1"); op.State != StateUnknown || op.Author != nil {
			t.Fatalf("client %q sees alice's request: %+v", client, op)
		}
	}
	res2, err := f.svc.Write(ctx, "p", WriteRequest{Tool: "werkbaum_set_status", RequestID: "r-1", ArgsHash: "hb", Base: res.Base,
		Verb: werkbaum.SetStatus{ID: "docs", Status: "done"}, Author: Author{Client: "bob"}})
	if err != nil || res2.Replayed || !res2.Changed || res2.Revision != 3 {
		t.Fatalf("bob's r-1: %+v %v", res2, err)
	}
	for client, rev := range map[string]uint64{"alice": 2, "bob": 3} {
		if op, _ := f.svc.Operation(ctx, "p", client, "r-1"); op.State != StateApplied || op.Revision != rev || op.Author.Client != client {
			t.Fatalf("%s's r-1: %+v", client, op)
		}
	}
}

// TestJournalMigratesVersion1: a journal of layout version 1 kept every client's entry
// under r:<id> and the bare id in the order index. After the start each client finds its
// own entries (the local client's where they were), other clients find nothing, and
// trimming still removes the oldest entries.
func TestJournalMigratesVersion1(t *testing.T) {
	f := newFixture(t, planText)
	f.svc.Close()
	err := f.db.Update(func(tx *bbolt.Tx) error {
		b := tx.Bucket(journal.BucketName("p"))
		if err := b.Delete(journal.KeyVersion); err != nil {
			return err
		}
		for i, e := range []journalEntry{
			{RequestID: "x-1", ArgsHash: "h", Tool: "t", State: StateApplied, Author: Author{Client: "alice"}, Revision: 1, Seq: 1},
			{RequestID: "x-2", ArgsHash: "h", Tool: "t", State: StateConflict, Author: Author{Client: "local"}, Seq: 2},
			{RequestID: "x-3", ArgsHash: "h", Tool: "t", State: StateRejected, Author: Author{Client: "bob"}, Seq: 3},
		} {
			raw, _ := json.Marshal(e)
			if err := b.Put([]byte("r:"+e.RequestID), raw); err != nil {
				return err
			}
			if err := b.Put(journal.OrderKey(uint64(i+1)), []byte(e.RequestID)); err != nil {
				return err
			}
		}
		return b.Put(journal.KeySeq, []byte{0, 0, 0, 0, 0, 0, 0, 3})
	})
	if err != nil {
		t.Fatal(err)
	}
	svc := f.open(t)
	ctx := context.Background()
	for _, c := range []struct{ client, id, want string }{
		{"alice", "x-1", StateApplied}, {"", "x-1", StateUnknown}, {"bob", "x-1", StateUnknown},
		{"local", "x-2", StateConflict}, {"alice", "x-2", StateUnknown},
		{"bob", "x-3", StateRejected}, {"local", "x-3", StateUnknown},
	} {
		if op, err := svc.Operation(ctx, "p", c.client, c.id); err != nil || op.State != c.want {
			t.Errorf("%s %s after migration: %+v %v, want %s", c.client, c.id, op, err, c.want)
		}
	}
	// The order index names the moved entries: trimming to 3 entries drops alice's x-1.
	svc.limit = 3
	if _, err := svc.Write(ctx, "p", WriteRequest{RequestID: "x-4", ArgsHash: "h", Base: Base{Checksum: "stale"},
		Verb: werkbaum.SetStatus{ID: "auth", Status: "done"}, Author: Author{Client: "carol"}}); err == nil {
		t.Fatal("stale write was not a conflict")
	}
	if op, _ := svc.Operation(ctx, "p", "alice", "x-1"); op.State != StateUnknown {
		t.Errorf("the oldest (migrated) entry was not trimmed: %+v", op)
	}
	if op, _ := svc.Operation(ctx, "p", "bob", "x-3"); op.State != StateRejected {
		t.Errorf("a newer migrated entry was trimmed: %+v", op)
	}
}

// hookDB runs once after the next View returns, to place an event between two steps of
// the service.
type hookDB struct {
	Database
	afterView atomic.Pointer[func()]
}

func (d *hookDB) View(fn func(Tx) error) error {
	err := d.Database.View(fn)
	if h := d.afterView.Swap(nil); h != nil {
		(*h)()
	}
	return err
}

// TestOperationRacingTheSettle: operation_get reads a write's pending entry while the
// write runs; before it asks whether the writer still runs, the writer settles it as
// applied and ends, and a next write changes the file. The write was applied (and
// acknowledged): operation_get must say so, not take the pending entry it read for one
// of a writer that is gone and judge it by a file that moved on.
func TestOperationRacingTheSettle(t *testing.T) {
	f := newFixture(t, planText)
	db := &hookDB{Database: Bolt(f.db)}
	f.svc = f.openOn(t, db)
	ctx := context.Background()
	base := f.read(t).Base
	newText := strings.Replace(planText, "[ ] #auth", "[x] #auth", 1)
	newSum := werkbaum.Checksum([]byte(newText))
	res, _ := json.Marshal(WriteResult{Base: Base{Revision: 2, Checksum: newSum}, Revision: 2, Changed: true})
	entry := &journalEntry{RequestID: "w1", ArgsHash: "h", Tool: "werkbaum_set_status", State: statePending,
		OldChecksum: base.Checksum, NewChecksum: newSum, Revision: 2, Result: res}
	// The writer: running, its pending record saved.
	done := f.svc.mem.Begin("p", keyOf(entry))
	if err := f.svc.record("p", entry); err != nil {
		t.Fatal(err)
	}
	settle := func() {
		if err := os.WriteFile(f.path, []byte(newText), 0o640); err != nil {
			t.Error(err)
		}
		entry.State = StateApplied
		if err := f.svc.record("p", entry); err != nil {
			t.Error(err)
		}
		done()
		// The next write of the plan.
		if err := os.WriteFile(f.path, []byte(strings.Replace(newText, "[ ] #docs", "[x] #docs", 1)), 0o640); err != nil {
			t.Error(err)
		}
	}
	db.afterView.Store(&settle)
	op, err := f.svc.Operation(ctx, "p", "", "w1")
	if db.afterView.Load() != nil {
		t.Fatal("the hook did not run: the test does not test what it says")
	}
	if err != nil || op.State != StateApplied || op.Revision != 2 || op.InProgress {
		t.Fatalf("operation_get racing the settle: %+v %v, want applied at revision 2", op, err)
	}
}

// TestSettleByFileSaysOnlyWhatItDid: settling a pending entry that its writer settled
// meanwhile answers applied but does not log that it settled it: the log names what this
// call did, and here it did nothing.
func TestSettleByFileSaysOnlyWhatItDid(t *testing.T) {
	f := newFixture(t, planText)
	var logged bytes.Buffer
	svc, err := New(Options{Plans: []config.Plan{{Key: "p", Path: f.path, Lang: "en"}}, Engine: f.eng, DB: Bolt(f.db),
		Lanes: &queue.Lanes{}, Log: slog.New(slog.NewTextHandler(&logged, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { svc.Close() })
	newText := strings.Replace(planText, "[ ] #auth", "[x] #auth", 1)
	entry := &journalEntry{RequestID: "s1", ArgsHash: "h", Tool: "werkbaum_set_status", State: statePending,
		NewChecksum: werkbaum.Checksum([]byte(newText)), Revision: 2}
	if err := svc.record("p", entry); err != nil {
		t.Fatal(err)
	}
	pending := *entry
	if err := os.WriteFile(f.path, []byte(newText), 0o640); err != nil {
		t.Fatal(err)
	}
	entry.State = StateApplied
	if err := svc.record("p", entry); err != nil {
		t.Fatal(err)
	}
	got, err := svc.settleByFile(mustRef(t, svc, "p"), &pending)
	if err != nil || got == nil || got.State != StateApplied {
		t.Fatalf("settle of an entry settled meanwhile: %+v %v", got, err)
	}
	if strings.Contains(logged.String(), "settled as applied") {
		t.Errorf("the log says this call settled it:\n%s", logged.String())
	}
}

// TestKeptSettleSavedWithTheNextWrite: a write's settle failed after its rename and is
// kept in memory; the database heals and the next write of the plan goes through before
// the background saver's next try; then the process dies. The next start must still know
// the first write as applied: its pending record, judged by a file that now holds the
// second write's text, would otherwise be settled as not applied, and an acknowledged
// write reported unknown. The next write's pending record saves the kept settle in the
// same transaction, before its rename changes the file.
func TestKeptSettleSavedWithTheNextWrite(t *testing.T) {
	f := newFixture(t, planText)
	db := &failingDB{Database: Bolt(f.db)}
	f.svc = f.openOn(t, db)
	ctx := context.Background()
	base := f.read(t).Base
	db.arm(1) // the pending record, then nothing
	first, err := f.svc.Write(ctx, "p", WriteRequest{Tool: "werkbaum_set_status", RequestID: "k1", ArgsHash: "h1", Base: base,
		Verb: werkbaum.SetStatus{ID: "auth", Status: "done"}})
	f.svc.mem.WaitSettles() // the answer does not wait for the settle
	if err != nil || db.failed.Load() == 0 {
		t.Fatalf("first write: %+v %v (settle failures %d)", first, err, db.failed.Load())
	}
	db.heal()
	second, err := f.svc.Write(ctx, "p", WriteRequest{Tool: "werkbaum_set_status", RequestID: "k2", ArgsHash: "h2", Base: first.Base,
		Verb: werkbaum.SetStatus{ID: "docs", Status: "done"}})
	if err != nil || second.Revision != 3 {
		t.Fatalf("second write: %+v %v", second, err)
	}
	// The crash: a fresh service on the database as it is now, recovering at its start.
	fresh := f.openOn(t, Bolt(f.db))
	for id, rev := range map[string]uint64{"k1": 2, "k2": 3} {
		if op, err := fresh.Operation(ctx, "p", "", id); err != nil || op.State != StateApplied || op.Revision != rev {
			t.Errorf("%s after the restart: %+v %v, want applied at revision %d", id, op, err, rev)
		}
	}
}

// beforeUpdateDB runs a hook once before the next Update, to place an event between a
// step of the service and its commit.
type beforeUpdateDB struct {
	Database
	before atomic.Pointer[func()]
}

func (d *beforeUpdateDB) Update(fn func(Tx) error) error {
	if h := d.before.Swap(nil); h != nil {
		(*h)()
	}
	return d.Database.Update(fn)
}

// TestSettleByFileKeepsALaterRevision: a pending entry of a writer that is gone is
// settled from the file (it holds that write's text), and before the settle commits, a
// later write renames its own text into place and saves its revision. The settle must not
// write the plan's revision over the later one: the revision would then name the old
// text, and the next read would give the later text yet another revision though it did
// not change.
func TestSettleByFileKeepsALaterRevision(t *testing.T) {
	f := newFixture(t, planText)
	db := &beforeUpdateDB{Database: Bolt(f.db)}
	f.svc = f.openOn(t, db)
	base := f.read(t).Base
	newText := strings.Replace(planText, "[ ] #auth", "[x] #auth", 1)
	entry := &journalEntry{RequestID: "gone", ArgsHash: "h", Tool: "werkbaum_set_status", State: statePending,
		OldChecksum: base.Checksum, NewChecksum: werkbaum.Checksum([]byte(newText)), Revision: 2}
	if err := f.svc.record("p", entry); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(f.path, []byte(newText), 0o640); err != nil {
		t.Fatal(err)
	}
	later := strings.Replace(newText, "[ ] #docs", "[x] #docs", 1)
	laterMeta := journal.Meta{Revision: 3, Checksum: werkbaum.Checksum([]byte(later))}
	hook := func() {
		// The later write: its text in place and its revision saved.
		if err := os.WriteFile(f.path, []byte(later), 0o640); err != nil {
			t.Error(err)
		}
		err := Bolt(f.db).Update(func(tx Tx) error { return journal.WriteMeta(tx.Bucket(journal.BucketName("p")), laterMeta) })
		if err != nil {
			t.Error(err)
		}
	}
	db.before.Store(&hook)
	got, err := f.svc.settleByFile(mustRef(t, f.svc, "p"), entry)
	if err != nil || got == nil || got.State != StateApplied {
		t.Fatalf("settle: %+v %v", got, err)
	}
	if db.before.Load() != nil {
		t.Fatal("the hook did not run: the test does not test what it says")
	}
	if snap := f.read(t); snap.Base.Revision != laterMeta.Revision || snap.Base.Checksum != laterMeta.Checksum {
		t.Fatalf("read after the settle: %+v, want the later write's base %+v", snap.Base, laterMeta)
	}
}

// TestSettleByFileKeepsAnUnsavedRevision: the plan's revision for the file's text is kept
// in memory only (it was given while the database could not be written); settling a gone
// writer's entry for that text must not forget it as if saved, or a crash before the
// saver's next try loses it.
func TestSettleByFileKeepsAnUnsavedRevision(t *testing.T) {
	f := newFixture(t, planText)
	db := &failingDB{Database: Bolt(f.db)}
	f.svc = f.openOn(t, db)
	f.read(t)
	newText := strings.Replace(planText, "[ ] #auth", "[x] #auth", 1)
	sum := werkbaum.Checksum([]byte(newText))
	entry := &journalEntry{RequestID: "gone", ArgsHash: "h", Tool: "werkbaum_set_status", State: statePending, NewChecksum: sum, Revision: 2}
	if err := f.svc.record("p", entry); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(f.path, []byte(newText), 0o640); err != nil {
		t.Fatal(err)
	}
	db.arm(0)
	if snap := f.read(t); snap.Base.Revision != 2 || db.failed.Load() == 0 {
		t.Fatalf("read while unwritable: %+v (failed updates %d)", snap.Base, db.failed.Load())
	}
	db.heal()
	if got, err := f.svc.settleByFile(mustRef(t, f.svc, "p"), entry); err != nil || got == nil || got.State != StateApplied {
		t.Fatalf("settle: %+v %v", got, err)
	}
	var saved journal.Meta
	f.db.View(func(tx *bbolt.Tx) error {
		return json.Unmarshal(tx.Bucket(journal.BucketName("p")).Get(journal.KeyMeta), &saved)
	})
	kept := f.svc.mem.NewerMeta("p", saved)
	if kept.Revision != 2 || kept.Checksum != sum {
		t.Fatalf("after the settle the revision of the file's text is neither saved (%+v) nor kept (%+v)", saved, kept)
	}
}

// TestRevisionForKeepsAnUnsavedRevision: between a read's first look at the revision and
// its transaction, another read gives the file's new text a revision kept in memory only
// (the database could not be written then). The read answers with it, and must not
// forget it as if saved: its transaction found it and wrote nothing.
func TestRevisionForKeepsAnUnsavedRevision(t *testing.T) {
	f := newFixture(t, planText)
	db := &beforeUpdateDB{Database: Bolt(f.db)}
	f.svc = f.openOn(t, db)
	f.read(t)
	edited := strings.Replace(planText, "Docs", "Documentation", 1)
	if err := os.WriteFile(f.path, []byte(edited), 0o640); err != nil {
		t.Fatal(err)
	}
	kept := journal.Meta{Revision: 2, Checksum: werkbaum.Checksum([]byte(edited))}
	hook := func() {
		// Another read gives the new text revision 2 in memory (the database unwritable).
		if rev, err := f.svc.mem.Bump("p", kept.Checksum, journal.Meta{Revision: 1}, func() error { return nil }); err != nil || rev != kept.Revision {
			t.Errorf("kept in memory: revision %d, %v", rev, err)
		}
	}
	db.before.Store(&hook)
	if snap := f.read(t); snap.Base.Revision != 2 {
		t.Fatalf("read: %+v, want revision 2", snap.Base)
	}
	if db.before.Load() != nil {
		t.Fatal("the hook did not run: the test does not test what it says")
	}
	var saved journal.Meta
	f.db.View(func(tx *bbolt.Tx) error {
		return json.Unmarshal(tx.Bucket(journal.BucketName("p")).Get(journal.KeyMeta), &saved)
	})
	if got := f.svc.mem.NewerMeta("p", saved); got != kept {
		t.Fatalf("after the read the revision is neither saved (%+v) nor kept (%+v)", saved, got)
	}
}
