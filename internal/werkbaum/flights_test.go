package werkbaum

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// producer is a cachedCall produce func that counts its runs and answers once released.
type producer struct {
	runs    atomic.Int32
	started chan struct{} // one value per run, when it starts
	release chan struct{}
	err     error
}

func newProducer() *producer {
	return &producer{started: make(chan struct{}, 8), release: make(chan struct{})}
}

func (p *producer) produce() (json.RawMessage, *Outline, error) {
	p.runs.Add(1)
	p.started <- struct{}{}
	<-p.release
	if p.err != nil {
		return nil, nil, p.err
	}
	return json.RawMessage(`{"answer":1}`), nil, nil
}

type callResult struct {
	ent *lruEntry
	err error
}

func callAsync(e *Engine, ctx context.Context, p *producer) <-chan callResult {
	out := make(chan callResult, 1)
	go func() {
		ent, err := e.cachedCall(ctx, "test", "a text", nil, p.produce, nil)
		out <- callResult{ent, err}
	}()
	return out
}

// Callers of the same key while it is being produced share the one answer.
func TestCachedCallSharesAnAnswerBeingProduced(t *testing.T) {
	e := newTestEngine(t, Options{})
	p := newProducer()
	ctx := context.Background()
	first := callAsync(e, ctx, p)
	<-p.started
	var waiters []<-chan callResult
	for range 3 {
		waiters = append(waiters, callAsync(e, ctx, p))
	}
	time.Sleep(20 * time.Millisecond) // let them join (a late one finds the cache instead)
	close(p.release)
	want := <-first
	if want.err != nil {
		t.Fatal(want.err)
	}
	for _, w := range waiters {
		if got := <-w; got.err != nil || got.ent != want.ent {
			t.Fatalf("a waiter got %+v, want the producer's entry", got)
		}
	}
	if n := p.runs.Load(); n != 1 {
		t.Fatalf("produced %d times for four callers", n)
	}
	e.flights.mu.Lock()
	left := len(e.flights.m)
	e.flights.mu.Unlock()
	if left != 0 {
		t.Fatalf("%d flights left after the answer", left)
	}
}

// A failure of the input is every waiter's answer; a caller whose context ended leaves the
// flight to a waiter, which produces the answer itself.
func TestCachedCallFailuresAndAbandonedFlights(t *testing.T) {
	t.Run("a failure is shared", func(t *testing.T) {
		e := newTestEngine(t, Options{})
		p := newProducer()
		p.err = errors.New("the input is bad")
		first := callAsync(e, context.Background(), p)
		<-p.started
		waiter := callAsync(e, context.Background(), p)
		time.Sleep(20 * time.Millisecond)
		close(p.release)
		if r := <-first; r.err == nil {
			t.Fatal("the producer's failure was not returned")
		}
		if r := <-waiter; r.err == nil || r.err.Error() != "the input is bad" {
			t.Fatalf("the waiter got %+v", r)
		}
		if n := p.runs.Load(); n != 1 {
			t.Fatalf("a failing input was produced %d times", n)
		}
	})
	t.Run("an abandoned flight is produced again", func(t *testing.T) {
		e := newTestEngine(t, Options{})
		p := newProducer()
		ctx, cancel := context.WithCancel(context.Background())
		p.err = context.Canceled // what the script call answers once ctx ends
		first := callAsync(e, ctx, p)
		<-p.started
		waiter := callAsync(e, context.Background(), p)
		time.Sleep(20 * time.Millisecond)
		cancel()
		p.release <- struct{}{} // the first run ends, abandoned
		<-p.started             // the waiter runs it again
		p.err = nil
		close(p.release)
		if r := <-first; r.err == nil {
			t.Fatal("the abandoned call did not fail")
		}
		if r := <-waiter; r.err != nil || r.ent == nil {
			t.Fatalf("the waiter after an abandoned flight: %+v", r)
		}
		if n := p.runs.Load(); n != 2 {
			t.Fatalf("produced %d times, want 2", n)
		}
	})
	t.Run("a waiter's own context ends its wait", func(t *testing.T) {
		e := newTestEngine(t, Options{})
		p := newProducer()
		first := callAsync(e, context.Background(), p)
		<-p.started
		ctx, cancel := context.WithCancel(context.Background())
		waiter := callAsync(e, ctx, p)
		time.Sleep(20 * time.Millisecond)
		cancel()
		if r := <-waiter; !errors.Is(r.err, context.Canceled) {
			t.Fatalf("the cancelled waiter got %+v", r)
		}
		close(p.release)
		if r := <-first; r.err != nil {
			t.Fatal(r.err)
		}
		if ent, err := e.cachedCall(context.Background(), "test", "a text", nil, p.produce, nil); err != nil || p.runs.Load() != 1 || ent == nil {
			t.Fatalf("after the flight: %v, %d runs", err, p.runs.Load())
		}
	})
}

// Concurrent inspects of one new text run the engine once (the plan follower's background
// analysis and an agent's call, or several agents after one change).
func TestConcurrentInspectsOfOneTextRunOnce(t *testing.T) {
	e := newTestEngine(t, Options{Runtimes: 4})
	text := bigPlan(2000, 7)   // tens of ms: the four calls overlap
	before := e.created.Load() // the engine made one runtime already (its vocabulary)
	var wg sync.WaitGroup
	answers := make([]json.RawMessage, 4)
	for i := range answers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			raw, err := e.InspectJSON(context.Background(), text, InspectOptions{})
			if err != nil {
				t.Error(err)
			}
			answers[i] = raw
		}()
	}
	wg.Wait()
	for _, a := range answers[1:] {
		if string(a) != string(answers[0]) {
			t.Fatal("concurrent inspects of one text answered differently")
		}
	}
	if made := e.created.Load() - before; made != 0 {
		t.Fatalf("%d more runtimes were made for four concurrent inspects of one text; one analysis needs the idle one", made)
	}
}

// A producer that panics (net/http recovers a request's panic) leaves its flight to a
// waiter, which produces the answer itself.
func TestCachedCallPanickingProducerReleasesWaiters(t *testing.T) {
	e := newTestEngine(t, Options{})
	p := newProducer()
	started := make(chan struct{})
	panicked := make(chan any, 1)
	go func() {
		defer func() { panicked <- recover() }()
		e.cachedCall(context.Background(), "test", "a text", nil, func() (json.RawMessage, *Outline, error) {
			close(started)
			<-p.release
			panic("a bug")
		}, nil)
	}()
	<-started
	waiter := callAsync(e, context.Background(), p)
	time.Sleep(20 * time.Millisecond)
	close(p.release)
	if r := <-panicked; r != "a bug" {
		t.Fatalf("recovered %v", r)
	}
	if r := <-waiter; r.err != nil || r.ent == nil || p.runs.Load() != 1 {
		t.Fatalf("the waiter after a panicking producer: %+v, %d runs", r, p.runs.Load())
	}
}
