package werkbaum

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	"talkd/internal/werkbaum/gen"
)

// TestShedIdleKeepsTheAnswers: ShedIdle drops the outline kept beside a cached view and the
// idle runtimes beyond one; the view stays cached, the outline decoded from it equals the
// one the record writer made, and calls that run at once afterwards (a runtime built again)
// answer as before.
func TestShedIdleKeepsTheAnswers(t *testing.T) {
	ctx := context.Background()
	e := newTestEngine(t, Options{Runtimes: 2})
	text := gen.Plan(2000, 1)
	view, outline, err := inspectOutline(ctx, e, text)
	if err != nil {
		t.Fatal(err)
	}
	if outline == nil {
		t.Fatal("a fresh inspect of the whole plan came without its outline")
	}
	subtrees := []InspectOptions{{ID: "area138"}, {ID: "area263", Include: []string{"path"}}}
	want := make([][]byte, len(subtrees))
	for i, o := range subtrees {
		if want[i], err = e.InspectJSON(ctx, text, o); err != nil {
			t.Fatal(err)
		}
	}
	// Two runtimes in the pool, both idle (as after two calls that ran at once).
	a, err := e.borrow(ctx)
	if err != nil {
		t.Fatal(err)
	}
	b, err := e.borrow(ctx)
	if err != nil {
		t.Fatal(err)
	}
	e.release(a)
	e.release(b)
	if got := e.created.Load(); got != 2 {
		t.Fatalf("runtimes created = %d, want 2", got)
	}

	// Without a disk cache every answer stays: producing one again is the whole analysis.
	outlines, answers, runtimes := e.ShedIdle()
	if outlines != 1 || answers != 0 || runtimes != 1 {
		t.Fatalf("ShedIdle dropped %d outlines, %d answers and %d runtimes, want 1, 0 and 1", outlines, answers, runtimes)
	}
	e.mu.Lock()
	idle := len(e.idle)
	kept := e.idle[0]
	e.mu.Unlock()
	if idle != 1 || kept != b {
		t.Fatalf("idle runtimes after ShedIdle = %d (the last released kept: %v), want 1 (true)", idle, kept == b)
	}
	if e.cache.bytes != cacheViewBytes(e) {
		t.Fatalf("the cache counts %d bytes for views of %d bytes: the outline's weight was not taken back", e.cache.bytes, cacheViewBytes(e))
	}

	// The view is still the cache's: no analysis, the same bytes, no outline any more.
	again, err := e.InspectView(ctx, text, InspectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(again, view) || cachedOutline(e, text) != nil {
		t.Fatalf("after ShedIdle: the view is the same: %v; an outline was kept: %v", bytes.Equal(again, view), cachedOutline(e, text) != nil)
	}
	decoded, err := e.Outline(ctx, text)
	if err != nil {
		t.Fatal(err)
	}
	if decoded == outline || !reflect.DeepEqual(decoded, outline) {
		t.Fatal("the outline decoded from the view after ShedIdle is the one before, or differs from it")
	}

	// Calls at once: the second runtime is built again, and the answers are as before.
	e.cache = newLRU(DefaultCacheEntries, DefaultCacheBytes) // make the calls run the script
	var wg sync.WaitGroup
	got := make([][]byte, len(subtrees))
	errs := make([]error, len(subtrees))
	for i, o := range subtrees {
		wg.Go(func() { got[i], errs[i] = e.InspectJSON(ctx, text, o) })
	}
	wg.Wait()
	for i := range subtrees {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		if !bytes.Equal(got[i], want[i]) {
			t.Fatalf("inspect %+v after ShedIdle differs", subtrees[i])
		}
	}
}

// A runtime that is borrowed is not ShedIdle's to drop, and one idle runtime is kept.
func TestShedIdleLeavesBorrowedRuntimes(t *testing.T) {
	ctx := context.Background()
	e := newTestEngine(t, Options{Runtimes: 2})
	held, err := e.borrow(ctx) // the runtime NewEngine built
	if err != nil {
		t.Fatal(err)
	}
	other, err := e.borrow(ctx) // a second one, built now
	if err != nil {
		t.Fatal(err)
	}
	e.release(other)
	if _, _, runtimes := e.ShedIdle(); runtimes != 0 {
		t.Fatalf("ShedIdle dropped %d runtimes with one idle and one borrowed, want 0", runtimes)
	}
	e.release(held)
	if out, err := e.InspectJSON(ctx, smallPlan, InspectOptions{ID: "co"}); err != nil || len(out) == 0 {
		t.Fatalf("inspect after ShedIdle: %v", err)
	}
}

// TestShedIdleDropsWhatTheDiskHolds: an answer the disk cache holds leaves the memory
// cache at ShedIdle and is read back from the disk, the same bytes; one only waiting to be
// written stays (without its outline).
func TestShedIdleDropsWhatTheDiskHolds(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	text := gen.Plan(2000, 1)
	p1 := openTestPersist(t, dir, 64<<20, nil)
	p1.mu.Lock()
	p1.settle = time.Hour // nothing is written before Close
	p1.mu.Unlock()
	e1 := newTestEngine(t, Options{Persist: p1})
	view, outline, err := inspectOutline(ctx, e1, text)
	if err != nil {
		t.Fatal(err)
	}
	if outlines, answers, _ := e1.ShedIdle(); outlines != 1 || answers != 0 {
		t.Fatalf("ShedIdle with the answer not yet written dropped %d outlines and %d answers, want 1 and 0", outlines, answers)
	}
	if e1.cache.len() != 1 {
		t.Fatalf("%d answers cached after ShedIdle, want the 1 not on disk", e1.cache.len())
	}
	closePersist(t, p1) // writes it: a daemon's shutdown

	// A restarted daemon reads it back, then drops it when idle: the disk holds it.
	p2 := openTestPersist(t, dir, 64<<20, nil)
	e2 := newTestEngine(t, Options{Persist: p2})
	first, err := e2.InspectView(ctx, text, InspectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(first, view) || p2.Stats().FromDisk != 1 {
		t.Fatalf("the restarted engine's view is the same: %v, read from disk %d times (want 1)", bytes.Equal(first, view), p2.Stats().FromDisk)
	}
	if outlines, answers, _ := e2.ShedIdle(); outlines != 0 || answers != 1 {
		t.Fatalf("ShedIdle with the answer on disk dropped %d outlines and %d answers, want 0 and 1", outlines, answers)
	}
	if e2.cache.len() != 0 || e2.cache.bytes != 0 {
		t.Fatalf("after ShedIdle the cache holds %d answers of %d bytes, want none", e2.cache.len(), e2.cache.bytes)
	}
	again, err := e2.InspectView(ctx, text, InspectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(again, view) || cachedOutline(e2, text) != nil || p2.Stats().FromDisk != 2 {
		t.Fatalf("after ShedIdle: the view is the same: %v, an outline came with it: %v, read from disk %d times (want 2)", bytes.Equal(again, view), cachedOutline(e2, text) != nil, p2.Stats().FromDisk)
	}
	decoded, err := e2.Outline(ctx, text)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(decoded, outline) {
		t.Fatal("the outline decoded from the view read back differs from the one written with it")
	}
}

// cacheViewBytes is the bytes of the answers the cache holds.
func cacheViewBytes(e *Engine) int {
	e.cache.mu.Lock()
	defer e.cache.mu.Unlock()
	n := 0
	for el := e.cache.order.Front(); el != nil; el = el.Next() {
		n += len(el.Value.(*lruEntry).raw)
	}
	return n
}

// TestShedIdleRacesWithCalls sheds and drops the memos over and over while goroutines
// inspect (whole plans, with and without their outline, and subtrees): every answer stays
// right, and the pool keeps its bound.
func TestShedIdleRacesWithCalls(t *testing.T) {
	ctx := context.Background()
	e := newTestEngine(t, Options{Runtimes: 2})
	e.memoIdle = time.Millisecond
	ref := newTestEngine(t, Options{CacheEntries: -1})
	texts := []string{smallPlan, gen.Plan(300, 1), gen.Plan(300, 2)}
	wantView := make([][]byte, len(texts))
	wantSub, err := ref.InspectJSON(ctx, smallPlan, InspectOptions{ID: "co"})
	if err != nil {
		t.Fatal(err)
	}
	for i, text := range texts {
		if wantView[i], err = ref.InspectJSON(ctx, text, InspectOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	stop := make(chan struct{})
	var shedder sync.WaitGroup
	shedder.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			e.ShedIdle()
			e.DropMemos() // the idle daemon's second stage
			time.Sleep(200 * time.Microsecond)
		}
	})
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for g := range 4 {
		wg.Go(func() {
			for i := range 20 {
				k := (g + i) % len(texts)
				view, outline, err := inspectOutline(ctx, e, texts[k])
				if err == nil && !bytes.Equal(view, wantView[k]) {
					err = fmt.Errorf("the view of text %d differs", k)
				}
				if err == nil {
					decoded, derr := DecodeOutline(view)
					if derr != nil || !reflect.DeepEqual(decoded, outline) {
						err = fmt.Errorf("the outline of text %d differs from its view's (%v)", k, derr)
					}
				}
				if err == nil {
					var sub []byte
					sub, err = e.InspectJSON(ctx, smallPlan, InspectOptions{ID: "co"})
					if err == nil && !bytes.Equal(sub, wantSub) {
						err = errors.New("the subtree differs")
					}
				}
				if err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(stop)
	shedder.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	e.mu.Lock()
	idle := len(e.idle)
	e.mu.Unlock()
	if idle < 1 || idle > 2 {
		t.Fatalf("%d idle runtimes after the calls, want 1 or 2", idle)
	}
}
