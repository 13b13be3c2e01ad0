package docstore

import (
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.etcd.io/bbolt"

	"talkd/internal/werkbaum"
	"talkd/internal/werkbaum/plans/docs"
	"talkd/internal/werkbaum/plans/journal"
)

func openStore(t *testing.T, db *bbolt.DB) *Store {
	t.Helper()
	j := journal.Bolt(db)
	return New(j, journal.NewGroupCommit(j), slog.New(slog.NewTextHandler(io.Discard, nil)))
}

func openDB(t *testing.T) *bbolt.DB {
	t.Helper()
	db, err := bbolt.Open(filepath.Join(t.TempDir(), "state.db"), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// An id is created once, kept in the database (a new process finds the same one) and
// found by its key both ways.
func TestIDCreatedOnceAndFoundBothWays(t *testing.T) {
	db := openDB(t)
	s := openStore(t, db)
	if s.HasID("@jörg:plan") {
		t.Fatal("an id before any was asked for")
	}
	id, err := s.ID("@jörg:plan")
	if err != nil {
		t.Fatal(err)
	}
	if !docs.ValidDocumentID(id) {
		t.Fatalf("id %q is not a document id", id)
	}
	again, err := s.ID("@jörg:plan")
	if err != nil || again != id {
		t.Fatalf("second ID = %q, %v; want %q", again, err, id)
	}
	other, _ := s.ID("Müller")
	if other == id {
		t.Fatal("two plans share an id")
	}

	fresh := openStore(t, db) // another process over the same state file
	if fresh.HasID("@jörg:plan") {
		t.Fatal("a fresh store knows an id it never read")
	}
	if key, ok := fresh.Key(id); !ok || key != "@jörg:plan" {
		t.Fatalf("Key(%s) = %q, %v", id, key, ok)
	}
	if got, _ := fresh.ID("@jörg:plan"); got != id {
		t.Fatalf("fresh ID = %q, want the stored %q", got, id)
	}
	if _, ok := fresh.Key(docs.NewUUID()); ok {
		t.Fatal("an unknown id has a key")
	}
}

// PutVersion stores the record completed with title, size and checksum, the document's
// meta, and keeps exactly the texts the retention rule (docs.Retain) keeps; Load reads
// the same log back.
func TestPutVersionKeepsWhatTheRuleKeeps(t *testing.T) {
	db := openDB(t)
	s := openStore(t, db)
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	title := "Plän"
	var recs []docs.Record
	const n = docs.KeepVersions + 20
	for v := uint64(1); v <= n; v++ {
		text := fmt.Sprintf("- [ ] step %d @jörg\n", v)
		rec := docs.Record{Version: v, ChangeType: docs.ChangeUpdated, ClientID: "c1", At: start.Add(time.Duration(v) * 3 * time.Hour)}
		var renamed *string
		if v == 3 {
			renamed = &title
		}
		var stored docs.Record
		err := s.commit.Do(func(tx journal.Tx) error {
			var err error
			stored, err = PutVersion(tx, "p", recs, rec, text, renamed)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if stored.Size != len(text) || stored.Checksum != werkbaum.DocumentChecksum(text) {
			t.Fatalf("version %d stored as %+v", v, stored)
		}
		if want := map[bool]string{true: title, false: ""}[v >= 3]; stored.Title != want {
			t.Fatalf("version %d title %q, want %q", v, stored.Title, want)
		}
		all := append(append([]docs.Record(nil), recs...), stored)
		recs = docs.KeptRecords(all, docs.Retain(all))
	}

	l, err := s.Load("p")
	if err != nil {
		t.Fatal(err)
	}
	if l.Title != title || !l.Created.Equal(start.Add(3*time.Hour)) {
		t.Fatalf("meta %q %v", l.Title, l.Created)
	}
	if len(l.Records) != len(recs) || l.Records[len(l.Records)-1].Version != n {
		t.Fatalf("loaded %d records (newest %d), kept %d", len(l.Records), l.Records[len(l.Records)-1].Version, len(recs))
	}
	all := make([]docs.Record, n)
	for i := range all {
		all[i] = docs.Record{Version: uint64(i + 1)}
	}
	_, kept, err := s.Texts("p", all)
	if err != nil {
		t.Fatal(err)
	}
	rule := docs.Retain(recs).Texts
	dropped := 0
	for i, ok := range kept {
		if ok != rule[uint64(i+1)] {
			t.Errorf("version %d: text kept %v, the rule says %v", i+1, ok, rule[uint64(i+1)])
		}
		if !ok {
			dropped++
		}
	}
	if dropped == 0 {
		t.Fatal("no text dropped: the test does not reach the bound")
	}
	if text, ok, _ := s.Text("p", n); !ok || !strings.Contains(text, fmt.Sprint(n)) {
		t.Fatalf("newest text %q, %v", text, ok)
	}
}

// MarkMilestone marks a stored record and refuses a version without one.
func TestMarkMilestone(t *testing.T) {
	db := openDB(t)
	s := openStore(t, db)
	err := s.commit.Do(func(tx journal.Tx) error {
		_, err := PutVersion(tx, "p", nil, docs.Record{Version: 1, ChangeType: docs.ChangeCreated, At: time.Now()}, "x\n", nil)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	err = s.commit.Do(func(tx journal.Tx) error {
		_, err := MarkMilestone(tx, "p", 2, "Müller", "c2")
		return err
	})
	if err == nil || !strings.Contains(err.Error(), "version 2 has no record") {
		t.Fatalf("marking a missing version: %v", err)
	}
	err = s.commit.Do(func(tx journal.Tx) error {
		_, err := MarkMilestone(tx, "p", 1, "Müller", "c2")
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	l, _ := s.Load("p")
	if r := l.Records[0]; !r.Milestone || r.MarkedBy != "Müller" || r.MarkedByClientID != "c2" {
		t.Fatalf("marked record %+v", r)
	}
	var found *docs.Record
	s.db.View(func(tx journal.Tx) error {
		found, _ = Recorded(tx, "p", 1)
		if HasVersion(tx, "p", 2) {
			t.Error("version 2 reported as recorded")
		}
		return nil
	})
	if found == nil || found.MarkedBy != "Müller" {
		t.Fatalf("Recorded = %+v", found)
	}
}
