package plans

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"talkd/internal/config"
	"talkd/internal/queue"
	"talkd/internal/werkbaum"
)

// gateLanes holds every write in its lane until released, so a test can change the plan
// set while a write is in flight.
type gateLanes struct {
	queue.Lanes
	entered chan string
	release chan struct{}
}

func (g *gateLanes) Do(ctx context.Context, key string, fn func() error) error {
	return g.Lanes.Do(ctx, key, func() error {
		select {
		case g.entered <- key:
		default: // nobody waits for it (the buffer holds an earlier write's)
		}
		<-g.release
		return fn()
	})
}

type reconfFixture struct {
	svc   *Service
	lanes *gateLanes
	dir   string
}

func newReconfFixture(t testing.TB, plans []config.Plan, roots []config.Root) *reconfFixture {
	t.Helper()
	dir := t.TempDir()
	db, eng := stateDB(t, t.TempDir()), testEngine(t, werkbaum.Options{})
	lanes := &gateLanes{entered: make(chan string, 1), release: make(chan struct{})}
	svc, err := New(Options{Plans: plans, Roots: roots, Engine: eng, DB: Bolt(db), Lanes: lanes})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { svc.Close() })
	return &reconfFixture{svc: svc, lanes: lanes, dir: dir}
}

func writePlanFile(t testing.TB, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A write that began before Reconfigure removed its plan finishes on the file it started
// with; requests after it get ErrUnknownPlan, and an added plan is served at once.
func TestReconfigureKeepsAWriteInFlight(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.werkbaum"), filepath.Join(dir, "b.werkbaum")
	writePlanFile(t, a, planText)
	writePlanFile(t, b, planText)
	f := newReconfFixture(t, []config.Plan{{Key: "a", Path: a, Lang: "en"}}, nil)
	ctx := context.Background()
	snap, err := f.svc.Read(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := f.svc.Write(ctx, "a", WriteRequest{Tool: "werkbaum_set_status", RequestID: "r1", ArgsHash: "h", Base: snap.Base,
			Verb: werkbaum.SetStatus{ID: "auth", Status: "done"}, Author: Author{Client: "local"}})
		done <- err
	}()
	select {
	case <-f.lanes.entered:
	case <-time.After(10 * time.Second):
		t.Fatal("the write never reached its lane")
	}
	// The write holds its lane; the plan set changes under it: "a" goes, "b" comes.
	if err := f.svc.Reconfigure([]config.Plan{{Key: "b", Path: b, Lang: "de"}}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.Read(ctx, "a"); !errors.Is(err, ErrUnknownPlan) {
		t.Fatalf("read of the removed plan: %v, want ErrUnknownPlan", err)
	}
	if _, err := f.svc.Operation(ctx, "a", "", "r1"); !errors.Is(err, ErrUnknownPlan) {
		t.Fatalf("operation on the removed plan: %v, want ErrUnknownPlan", err)
	}
	if _, ok := f.svc.Plan("a"); ok {
		t.Fatal("Plan still knows the removed plan")
	}
	if p, ok := f.svc.Plan("b"); !ok || p.Lang != "de" {
		t.Fatalf("added plan: %+v %v", p, ok)
	}
	if got := f.svc.Keys(); len(got) != 1 || got[0] != "b" {
		t.Fatalf("keys after reconfigure: %v", got)
	}
	close(f.lanes.release)
	if err := <-done; err != nil {
		t.Fatalf("the write in flight failed: %v", err)
	}
	if got, want := readFile(t, a), strings.Replace(planText, "[ ] #auth", "[x] #auth", 1); got != want {
		t.Fatalf("the write in flight did not land in its file:\n%s", got)
	}
	if got := readFile(t, b); got != planText {
		t.Fatalf("the added plan's file was changed:\n%s", got)
	}
	snapB, err := f.svc.Read(ctx, "b")
	if err != nil || snapB.Base.Revision != 1 {
		t.Fatalf("read of the added plan: %+v %v", snapB, err)
	}
	// Brought back, the plan's journal still knows the write that finished meanwhile.
	if err := f.svc.Reconfigure([]config.Plan{{Key: "a", Path: a, Lang: "en"}}, nil); err != nil {
		t.Fatal(err)
	}
	op, err := f.svc.Operation(ctx, "a", "", "r1")
	if err != nil || op.State != StateApplied || op.Revision != 2 {
		t.Fatalf("operation after the plan came back: %+v %v", op, err)
	}
}

// A plan set with an error is refused whole; the old one stays.
func TestReconfigureRefusesABadSet(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "a.werkbaum")
	writePlanFile(t, a, planText)
	f := newReconfFixture(t, []config.Plan{{Key: "a", Path: a, Lang: "en"}}, nil)
	err := f.svc.Reconfigure([]config.Plan{{Key: "b", Path: a}, {Key: "b", Path: a}}, nil)
	if err == nil || !strings.Contains(err.Error(), `"b" is configured twice`) {
		t.Fatalf("duplicate keys: %v", err)
	}
	if _, err := f.svc.Read(context.Background(), "a"); err != nil {
		t.Fatalf("the old set is gone after a refused one: %v", err)
	}
}

// Writes to a plan that stays in every set lose nothing while the set changes under them
// again and again (plans and roots added and removed around it).
func TestReconfigureUnderWrites(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.werkbaum"), filepath.Join(dir, "b.werkbaum")
	text := "- [ ] #root: Root\n"
	writePlanFile(t, a, text)
	writePlanFile(t, b, text)
	writePlanFile(t, filepath.Join(dir, "notes", "n.werkbaum"), text)
	one := []config.Plan{{Key: "a", Path: a, Lang: "en"}}
	two := append(one, config.Plan{Key: "b", Path: b, Lang: "en"})
	roots := []config.Root{{Name: "notes", Path: filepath.Join(dir, "notes"), Lang: "en"}}
	f := newReconfFixture(t, one, nil)
	close(f.lanes.release)
	ctx := context.Background()
	const writers, each = 4, 10
	stop := make(chan struct{})
	flips := make(chan int)
	go func() {
		n := 0
		for {
			select {
			case <-stop:
				flips <- n
				return
			default:
			}
			var err error
			if n%2 == 0 {
				err = f.svc.Reconfigure(two, roots)
			} else {
				err = f.svc.Reconfigure(one, nil)
			}
			if err != nil {
				t.Error(err)
			}
			n++
		}
	}()
	errs := make(chan error, writers)
	for w := range writers {
		go func() {
			for i := range each {
				for try := 0; ; try++ {
					snap, err := f.svc.Read(ctx, "a")
					if err != nil {
						errs <- err
						return
					}
					id := fmt.Sprintf("w%d-%d-%d", w, i, try) // a conflict is redone under a new id
					_, err = f.svc.Write(ctx, "a", WriteRequest{Tool: "werkbaum_add_node", RequestID: id,
						ArgsHash: id, Base: snap.Base, Author: Author{Client: "local"},
						Verb: werkbaum.AddNode{Parent: "root", Line: fmt.Sprintf("- [ ] #w%d-%d: Step", w, i)}})
					var conflict *ConflictError
					if errors.As(err, &conflict) {
						continue // another writer was first: read again, new attempt
					}
					if err != nil {
						errs <- err
						return
					}
					break
				}
			}
			errs <- nil
		}()
	}
	for range writers {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	n := <-flips
	got := readFile(t, a)
	for w := range writers {
		for i := range each {
			if !strings.Contains(got, fmt.Sprintf("#w%d-%d:", w, i)) {
				t.Errorf("write w%d-%d is lost", w, i)
			}
		}
	}
	snap, err := f.svc.Read(ctx, "a")
	if err != nil || snap.Base.Revision != 1+writers*each {
		t.Fatalf("revision %+v %v, want %d after %d writes (%d reconfigurations)", snap, err, 1+writers*each, writers*each, n)
	}
	t.Logf("%d writes across %d reconfigurations", writers*each, n)
}
