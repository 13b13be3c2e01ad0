package journal

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"go.etcd.io/bbolt"
)

// revisionDB is a Database whose Update fails (disk full) while full is set and which
// says whether an Update runs now (inUpdate).
type revisionDB struct {
	Database
	full     atomic.Bool
	inUpdate atomic.Bool
}

func (d *revisionDB) Update(fn func(Tx) error) error {
	if d.full.Load() {
		return errDiskFull
	}
	return d.Database.Update(func(tx Tx) error {
		d.inUpdate.Store(true)
		defer d.inUpdate.Store(false)
		return fn(tx)
	})
}

func newRevisions(t *testing.T) (Revisions, *revisionDB, *bytes.Buffer) {
	t.Helper()
	bdb, err := bbolt.Open(filepath.Join(t.TempDir(), "state.db"), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { bdb.Close() })
	db := &revisionDB{Database: Bolt(bdb)}
	if err := db.Update(func(tx Tx) error { _, err := tx.CreateBucket(BucketName("pläne/jörg")); return err }); err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	commit := NewGroupCommit(db)
	return Revisions{DB: db, Commit: commit, Mem: NewMemory(commit, log, "local", 100), Log: log}, db, &logs
}

// TestRevisionsGiveNewContentTheNextRevision: content not seen gets the next revision,
// with the file checked inside the write transaction; known content keeps its revision
// without a check; content the file no longer holds gets ErrFileMoved and no revision.
func TestRevisionsGiveNewContentTheNextRevision(t *testing.T) {
	r, db, _ := newRevisions(t)
	const key = "pläne/jörg"
	checks := 0
	fileIs := func(moved bool) func() error {
		return func() error {
			checks++
			if !db.inUpdate.Load() {
				t.Error("the file was checked outside the journal's write transaction")
			}
			if moved {
				return fmt.Errorf("read: %w", ErrFileMoved)
			}
			return nil
		}
	}
	for i, step := range []struct {
		sum    string
		moved  bool
		want   uint64
		checks int
	}{
		{"sum-a", false, 1, 1},
		{"sum-a", false, 1, 1}, // known: no check
		{"sum-b", false, 2, 2},
		{"sum-c", true, 0, 3}, // moved: no revision spent
		{"sum-c", false, 3, 4},
	} {
		rev, err := r.For(key, step.sum, fileIs(step.moved))
		if step.moved {
			if !errors.Is(err, ErrFileMoved) {
				t.Fatalf("step %d: err %v, want ErrFileMoved", i, err)
			}
		} else if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		if rev != step.want || checks != step.checks {
			t.Fatalf("step %d: revision %d after %d checks, want %d after %d", i, rev, checks, step.want, step.checks)
		}
	}
	meta, err := r.Latest(key)
	if err != nil || meta != (Meta{Revision: 3, Checksum: "sum-c"}) {
		t.Fatalf("latest %+v, %v; want revision 3 of sum-c", meta, err)
	}
}

// TestRevisionsKeptInMemoryWhenTheDiskIsFull: a new revision that cannot be saved is kept
// in memory (said in the log), counted from, and saved when the memory is closed after the
// disk has room again; a moved file gets ErrFileMoved there too.
func TestRevisionsKeptInMemoryWhenTheDiskIsFull(t *testing.T) {
	r, db, logs := newRevisions(t)
	const key = "pläne/jörg"
	ok := func() error { return nil }
	if rev, err := r.For(key, "sum-a", ok); err != nil || rev != 1 {
		t.Fatalf("first revision %d, %v", rev, err)
	}
	db.full.Store(true)
	if rev, err := r.For(key, "sum-b", ok); err != nil || rev != 2 {
		t.Fatalf("revision with a full disk %d, %v; want 2 kept in memory", rev, err)
	}
	if _, err := r.For(key, "sum-c", func() error { return ErrFileMoved }); !errors.Is(err, ErrFileMoved) {
		t.Fatalf("moved file with a full disk: %v, want ErrFileMoved", err)
	}
	if rev, err := r.For(key, "sum-b", ok); err != nil || rev != 2 {
		t.Fatalf("known content with a full disk %d, %v; want 2", rev, err)
	}
	if meta, err := r.Latest(key); err != nil || meta != (Meta{Revision: 2, Checksum: "sum-b"}) {
		t.Fatalf("latest %+v, %v; want revision 2 of sum-b from memory", meta, err)
	}
	db.full.Store(false)
	_ = r.Mem.Close()
	var saved Meta
	if err := db.View(func(tx Tx) error { return ReadMeta(tx.Bucket(BucketName(key)), &saved) }); err != nil {
		t.Fatal(err)
	}
	if saved != (Meta{Revision: 2, Checksum: "sum-b"}) {
		t.Fatalf("saved %+v after close, want revision 2 of sum-b", saved)
	}
	if !strings.Contains(logs.String(), "journal: the plan's new revision cannot be saved now; kept in memory and saved in the background") ||
		!strings.Contains(logs.String(), "revision=2") {
		t.Fatalf("log does not say the revision was kept in memory:\n%s", logs.String())
	}
}

// TestSettleAppliedSavesOrKeepsInMemory: a pending entry whose writer is gone is settled
// as applied with its revision; with the disk full it is kept in memory (said in the log)
// and saved once the disk has room; an entry no longer pending is left as it is.
func TestSettleAppliedSavesOrKeepsInMemory(t *testing.T) {
	r, db, logs := newRevisions(t)
	const key = "pläne/jörg"
	how := Settle{Local: "local", Limit: 100}
	pending := func(id string, rev uint64) *Entry {
		e := &Entry{RequestID: id, Tool: "werkbaum_set_status", State: StatePending, Seq: rev,
			Revision: rev, NewChecksum: "sum-" + id, Author: Author{Client: "@jörg"}}
		if err := db.Update(func(tx Tx) error { return PutEntry(tx.Bucket(BucketName(key)), e, how.Local, how.Limit) }); err != nil {
			t.Fatal(err)
		}
		return e
	}
	stored := func(id string) (*Entry, Meta) {
		var e *Entry
		var meta Meta
		if err := db.View(func(tx Tx) error {
			b := tx.Bucket(BucketName(key))
			var err error
			if e, err = GetEntry(b, EntryKey("@jörg", how.Local, id)); err != nil {
				return err
			}
			return ReadMeta(b, &meta)
		}); err != nil {
			t.Fatal(err)
		}
		return e, meta
	}

	a := pending("a", 1)
	if got := r.SettleApplied(key, a, "sum-a", how); got.State != StateApplied {
		t.Fatalf("settled %+v, want applied", got)
	}
	if e, meta := stored("a"); e.State != StateApplied || meta != (Meta{Revision: 1, Checksum: "sum-a"}) {
		t.Fatalf("after the settle: entry %+v, meta %+v", e, meta)
	}
	// Settled already: nothing is written again, nor said.
	logs.Reset()
	r.SettleApplied(key, a, "sum-a", how)
	if strings.Contains(logs.String(), "settled as applied") {
		t.Errorf("a settled entry was settled again: %s", logs)
	}

	b := pending("b", 2)
	db.full.Store(true)
	if got := r.SettleApplied(key, b, "sum-b", how); got.State != StateApplied {
		t.Fatalf("settled with a full disk %+v, want applied", got)
	}
	if !strings.Contains(logs.String(), "kept in memory and saved in the background") {
		t.Errorf("the log does not say the settle was kept in memory: %s", logs)
	}
	if e, ok := r.Mem.Unsaved(key, EntryKey("@jörg", how.Local, "b")); !ok || e.State != StateApplied {
		t.Fatalf("with a full disk the applied entry is not kept in memory: %+v %v", e, ok)
	}
	db.full.Store(false)
	_ = r.Mem.Close()
	if e, meta := stored("b"); e.State != StateApplied || meta != (Meta{Revision: 2, Checksum: "sum-b"}) {
		t.Fatalf("after the disk had room: entry %+v, meta %+v", e, meta)
	}
}
