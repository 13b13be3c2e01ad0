package plans

import (
	"context"
	"testing"

	"talkd/internal/werkbaum"
)

// A write whose settle fails after its rename (the state database refuses the commit)
// is applied; its document version waits in memory, and the read that records the
// revision records it with the write's author, not as a change made outside talkd, for
// an agent's write and for an editor's PATCH, and so it stays after a restart.
func TestKeptSettleVersionKeepsItsAuthor(t *testing.T) {
	for _, tc := range []struct {
		name       string
		write      func(t *testing.T, f *fixture, id string)
		wantClient func(f *fixture) string
		wantName   string
	}{
		{
			name: "agent write",
			write: func(t *testing.T, f *fixture, _ string) {
				res, err := f.svc.Write(context.Background(), "p", WriteRequest{Tool: "werkbaum_set_status", RequestID: "k1", ArgsHash: "h1",
					Base: f.read(t).Base, Verb: werkbaum.SetStatus{ID: "auth", Status: "done"}, Author: Author{Client: "local", Agent: "Claude"}})
				if err != nil || res.Revision != 2 {
					t.Fatalf("write: %+v %v", res, err)
				}
			},
			wantClient: func(f *fixture) string { return f.svc.agentClientID },
			wantName:   "Claude",
		},
		{
			name: "document patch",
			write: func(t *testing.T, f *fixture, id string) {
				d, err := f.svc.Document(context.Background(), id)
				if err != nil {
					t.Fatal(err)
				}
				p := patchOn(d, "ed", 1, insert(2, "  - [ ] #kept: Kept @Müller"))
				if res, err := f.svc.PatchContent(context.Background(), id, p); err != nil || res.Version != 2 {
					t.Fatalf("patch: %+v %v", res, err)
				}
			},
			wantClient: func(*fixture) string { return "ed" },
			wantName:   "Jörg im Browser", // patchOn's display name
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, db, id := failingDocFixture(t)
			ctx := context.Background()
			db.arm(1) // the pending record, then nothing
			tc.write(t, f, id)
			f.svc.mem.WaitSettles() // the answer does not wait for the settle
			if db.failed.Load() == 0 {
				t.Fatal("the settle did not fail: the test does not test what it says")
			}
			db.heal()
			f.read(t) // the read that records revision 2
			check := func(svc *Service, when string) {
				hist, err := svc.History(ctx, id)
				if err != nil || len(hist) == 0 {
					t.Fatalf("history %s: %v %v", when, hist, err)
				}
				v := hist[len(hist)-1]
				if v.Version != 2 || v.ClientID != tc.wantClient(f) || v.DisplayName != tc.wantName || v.ChangeType != ChangeUpdated {
					t.Errorf("version 2 %s: %d %s by %q (%q), want by %q (%q), not %q", when, v.Version, v.ChangeType, v.DisplayName, v.ClientID,
						tc.wantName, tc.wantClient(f), outsideName)
				}
			}
			check(f.svc, "in the same process")
			check(f.openOn(t, Bolt(f.db)), "after a restart")
		})
	}
}

// failingDocFixture is a fixture whose service runs on a state database that fails when
// armed, and the id of its plan's document.
func failingDocFixture(t *testing.T) (*fixture, *failingDB, string) {
	t.Helper()
	f := newFixture(t, planText)
	// The fixture's first service must be gone: its warm-up, late on a loaded machine,
	// would otherwise read the file after the failing write's rename and record that
	// revision in the database as a change of its own (no author), behind this test's back.
	f.svc.warming.Wait()
	f.svc.Close()
	db := &failingDB{Database: Bolt(f.db)}
	f.svc = f.openOn(t, db)
	id, err := f.svc.DocumentID(context.Background(), "p")
	if err != nil {
		t.Fatal(err)
	}
	return f, db, id
}
