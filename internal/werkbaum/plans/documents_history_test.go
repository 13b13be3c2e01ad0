package plans

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"talkd/internal/werkbaum/plans/docs"
	"testing"
)

// TestMilestoneMarkKept: an empty milestone PATCH marks the current version, naming who
// asked; the mark survives newer versions and a restart.
func TestMilestoneMarkKept(t *testing.T) {
	f := newDocFixture(t, planText)
	ctx := context.Background()
	f.setStatus(t, "auth", "done", "Claude") // v2, an agent's
	mark := patchOn(f.doc(t), "cam", 1)
	mark.Milestone, mark.DisplayName = true, "Müller"
	res, err := f.svc.PatchContent(ctx, f.id, mark)
	if err != nil || res.Version != 2 {
		t.Fatalf("milestone: %+v %v", res, err)
	}
	p := patchOn(f.doc(t), "ed", 1, insert(1, "later"))
	if _, err := f.svc.PatchContent(ctx, f.id, p); err != nil {
		t.Fatal(err)
	}
	for _, svc := range []*Service{f.svc, f.openOn(t, Bolt(f.db))} {
		hist, err := svc.History(ctx, f.id)
		if err != nil {
			t.Fatal(err)
		}
		var v2 *HistoryEntry
		for i := range hist {
			if hist[i].Version == 2 {
				v2 = &hist[i]
			}
		}
		if v2 == nil || !v2.Milestone || v2.MarkedBy != "Müller" || v2.MarkedByClientID != "cam" || v2.DisplayName != "Claude" {
			t.Fatalf("version 2 in the history: %+v", v2)
		}
	}
}

// TestRestoreVersion: a kept version comes back as a new RESTORED version named after
// the client id's last name; unknown and compacted versions are refused.
func TestRestoreVersion(t *testing.T) {
	f := newDocFixture(t, planText)
	ctx := context.Background()
	first := f.doc(t)
	if _, err := f.svc.PatchContent(ctx, f.id, patchOn(first, "ed", 1, insert(1, "  - [ ] #neu: Neu @Müller (S)"))); err != nil {
		t.Fatal(err)
	}
	f.setStatus(t, "auth", "done", "Claude") // v3
	d, err := f.svc.Restore(ctx, f.id, 1, DocAuthor{ClientID: "ed"})
	if err != nil || d.Version != 4 || d.Content != planText {
		t.Fatalf("restore: %+v %v", d, err)
	}
	if got := f.fileText(t); got != planText {
		t.Fatalf("file after restore:\n%s", got)
	}
	feed, err := f.svc.Changes(ctx, f.id, 3, 0)
	if err != nil || feed == nil || len(feed.Events) != 1 || feed.Events[0].ChangeType != ChangeRestored || feed.Events[0].DisplayName != "Jörg im Browser" {
		t.Fatalf("feed after restore: %+v %v", feed, err)
	}
	hist, _ := f.svc.History(ctx, f.id)
	if last := hist[len(hist)-1]; last.Version != 4 || last.RestoredFrom != 1 || !last.Milestone {
		t.Fatalf("history's newest: %+v", last)
	}
	// The same text again changes nothing.
	if d, err := f.svc.Restore(ctx, f.id, 4, DocAuthor{}); err != nil || d.Version != 4 {
		t.Fatalf("restore of the current text: %+v %v", d, err)
	}
	if _, err := f.svc.Restore(ctx, f.id, 9, DocAuthor{}); !errors.Is(err, ErrNoSuchVersion) || KindOf(err) != KindNoSuchVersion {
		t.Fatalf("restore of a version never made: %v", err)
	}
	if err := f.svc.commit.Do(func(tx Tx) error { return tx.Bucket(docs.BucketName("p")).Delete(docs.VersionKey('t', 2)) }); err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.Restore(ctx, f.id, 2, DocAuthor{}); !errors.Is(err, ErrVersionNotKept) || !strings.Contains(err.Error(), "no longer keeps the text of version 2") {
		t.Fatalf("restore of a compacted version: %v", err)
	}
	if d := f.doc(t); d.Version != 4 {
		t.Fatalf("a refused restore made a version: %+v", d)
	}
}

// TestRenameNamesWhoRenamed: a rename without a name takes the client id's last one,
// else "someone".
func TestRenameNamesWhoRenamed(t *testing.T) {
	f := newDocFixture(t, planText)
	ctx := context.Background()
	if _, err := f.svc.PatchContent(ctx, f.id, patchOn(f.doc(t), "ed", 1, insert(1, "x"))); err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.SetTitle(ctx, f.id, "Erster", 2, DocAuthor{ClientID: "ed"}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.SetTitle(ctx, f.id, "Zweiter", 3, DocAuthor{ClientID: "fremd"}); err != nil {
		t.Fatal(err)
	}
	feed, err := f.svc.Changes(ctx, f.id, 2, 0)
	if err != nil || feed == nil || len(feed.Events) != 2 {
		t.Fatalf("feed: %+v %v", feed, err)
	}
	if e := feed.Events; e[0].DisplayName != "Jörg im Browser" || e[0].ClientID != "ed" || e[1].DisplayName != someoneName || e[1].ClientID != "fremd" {
		t.Fatalf("renames named %+v", e)
	}
}

// TestHistoryOpensTodaysState: a state file written before milestones were kept (records
// without the new members, the texts of older saves dropped) opens as it is; the history
// leaves out a save whose text is gone instead of listing it empty.
func TestHistoryOpensTodaysState(t *testing.T) {
	f := newDocFixture(t, planText)
	ctx := context.Background()
	if _, err := f.svc.PatchContent(ctx, f.id, patchOn(f.doc(t), "ed", 1, insert(1, "eins"))); err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.PatchContent(ctx, f.id, patchOn(f.doc(t), "ed", 2, insert(1, "zwei"))); err != nil {
		t.Fatal(err)
	}
	// Version 2 as the talkd before this change wrote it, its text dropped by the old rule.
	old := `{"version":2,"changeType":"UPDATED","clientId":"ed","displayName":"Jörg im Browser","at":"2026-12-06T07:00:00Z","checksum":"sha256:00","size":5}`
	err := f.svc.commit.Do(func(tx Tx) error {
		b := tx.Bucket(docs.BucketName("p"))
		if err := b.Put(docs.VersionKey('v', 2), []byte(old)); err != nil {
			return err
		}
		return b.Delete(docs.VersionKey('t', 2))
	})
	if err != nil {
		t.Fatal(err)
	}
	f.svc.Close()
	svc := f.open(t)
	hist, err := svc.History(ctx, f.id)
	if err != nil {
		t.Fatal(err)
	}
	var got []uint64
	for _, h := range hist {
		got = append(got, h.Version)
	}
	if fmt.Sprint(got) != "[1 3]" {
		t.Fatalf("history of today's state: %v", got)
	}
	if _, err := svc.Restore(ctx, f.id, 2, DocAuthor{}); !errors.Is(err, ErrVersionNotKept) {
		t.Fatalf("restore of a dropped text: %v", err)
	}
}
