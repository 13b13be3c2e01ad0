package main

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
)

// releaserUnderTest runs a memoryReleaser with a short delay that counts its releases
// instead of freeing memory, behind a handler that blocks while block is non-nil.
func releaserUnderTest(t *testing.T, delay time.Duration, block chan struct{}) (*memoryReleaser, *atomic.Int32, http.Handler) {
	t.Helper()
	m := newMemoryReleaser(delay, slog.New(slog.NewTextHandler(io.Discard, nil)))
	var n atomic.Int32
	m.release = func() { n.Add(1) }
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go m.run(ctx)
	h := m.wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if block != nil && r.URL.Path == "/block" {
			<-block
		}
	}))
	return m, &n, h
}

func hit(h http.Handler, path string) {
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", path, nil))
}

// waitReleases waits up to within for the count to reach want and returns it.
func waitReleases(n *atomic.Int32, want int32, within time.Duration) int32 {
	deadline := time.Now().Add(within)
	for n.Load() < want && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	return n.Load()
}

func TestMemoryReleaserOncePerIdlePeriod(t *testing.T) {
	// The burst's gaps (delay/20) are far shorter than the delay, so that a loaded machine,
	// which stretches a sleep by tens of milliseconds, does not split the burst in two
	// idle periods (with 60 ms and gaps of 20 ms it could).
	const delay = 200 * time.Millisecond
	_, n, h := releaserUnderTest(t, delay, nil)
	time.Sleep(3 * delay)
	if got := n.Load(); got != 0 {
		t.Fatalf("%d releases without any request, want 0", got)
	}
	// A burst with gaps shorter than the delay: one release, after the last request.
	// last is taken right after each request, not after the pause that follows it: on a
	// loaded machine that pause can stretch, and the release counts from the request.
	start, last := time.Now(), time.Time{}
	for range 5 {
		hit(h, "/")
		last = time.Now()
		time.Sleep(delay / 20)
	}
	if got := waitReleases(n, 1, 10*delay); got != 1 {
		t.Fatalf("%d releases after a burst, want 1", got)
	}
	if since := time.Since(last); since < delay-delay/3 {
		t.Fatalf("released %v after the last request, want about %v (burst began %v before)", since, delay, time.Since(start))
	}
	time.Sleep(3 * delay)
	if got := n.Load(); got != 1 {
		t.Fatalf("%d releases while idle after the first, want still 1", got)
	}
	// The next work leads to the next release.
	hit(h, "/")
	if got := waitReleases(n, 2, 10*delay); got != 2 {
		t.Fatalf("%d releases after new work, want 2", got)
	}
}

func TestMemoryReleaserWaitsForRunningRequest(t *testing.T) {
	const delay = 40 * time.Millisecond
	block := make(chan struct{})
	_, n, h := releaserUnderTest(t, delay, block)
	hit(h, "/")
	done := make(chan struct{})
	go func() { hit(h, "/block"); close(done) }()
	time.Sleep(5 * delay) // the first request is long idle, but one is running
	if got := n.Load(); got != 0 {
		t.Fatalf("%d releases while a request runs, want 0", got)
	}
	close(block)
	<-done
	if got := waitReleases(n, 1, 10*delay); got != 1 {
		t.Fatalf("%d releases after the request ended, want 1", got)
	}
}

// TestMemoryReleaserIgnoresHeldPolls: a document feed's long poll is held doing nothing,
// and editors always have one open; it must not keep the daemon from releasing memory,
// while its answer counts as work like any other.
func TestMemoryReleaserIgnoresHeldPolls(t *testing.T) {
	const delay = 40 * time.Millisecond
	m := newMemoryReleaser(delay, slog.New(slog.NewTextHandler(io.Discard, nil)))
	var n atomic.Int32
	m.release = func() { n.Add(1) }
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go m.run(ctx)
	held := make(chan struct{})
	h := m.wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			<-held
		}
	}))
	hit(h, "/")
	done := make(chan struct{})
	go func() {
		hit(h, "/api/v1/documents/0b6e6f6c-1d2e-4f00-9a3b-0123456789ab/changes?since=3&wait=30")
		close(done)
	}()
	if got := waitReleases(&n, 1, 10*delay); got != 1 {
		t.Fatalf("%d releases while only a feed poll is held, want 1", got)
	}
	close(held)
	<-done
	if got := waitReleases(&n, 2, 10*delay); got != 2 {
		t.Fatalf("%d releases after the poll was answered, want 2", got)
	}
}

// TestMemoryReleaserShedsBeforeEachRelease: what the daemon drops when idle (shedIdle) is
// dropped once per idle period, right before the release, so that the release returns it.
func TestMemoryReleaserShedsBeforeEachRelease(t *testing.T) {
	const delay = 40 * time.Millisecond
	m := newMemoryReleaser(delay, slog.New(slog.NewTextHandler(io.Discard, nil)))
	var releases, sheds atomic.Int32
	var shedAfter atomic.Int32 // releases already done when the last shed ran
	m.release = func() { releases.Add(1) }
	m.shed = func() {
		shedAfter.Store(releases.Load())
		sheds.Add(1)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go m.run(ctx)
	h := m.wrap(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	for round := int32(1); round <= 2; round++ {
		hit(h, "/")
		if got := waitReleases(&releases, round, 20*delay); got != round {
			t.Fatalf("%d releases after %d idle periods, want %d", got, round, round)
		}
		if got, before := sheds.Load(), shedAfter.Load(); got != round || before != round-1 {
			t.Fatalf("idle period %d: %d sheds, the last after %d releases; want %d, after %d", round, got, before, round, round-1)
		}
	}
}

// dropCounts is what a releaser under test did: its releases and drops, how many releases
// came before the last drop, and when that drop ran (UnixNano).
type dropCounts struct {
	releases, drops, dropAfter atomic.Int32
	dropAt                     atomic.Int64
}

// releaserWithDrop runs a memoryReleaser with a second stage after keep that counts what it
// does instead of freeing memory, behind a handler that answers at once.
func releaserWithDrop(t *testing.T, delay, keep time.Duration) (http.Handler, *dropCounts) {
	t.Helper()
	m := newMemoryReleaser(delay, slog.New(slog.NewTextHandler(io.Discard, nil)))
	c := &dropCounts{}
	m.release = func() { c.releases.Add(1) }
	m.drop, m.keep = func() {
		c.dropAfter.Store(c.releases.Load())
		c.dropAt.Store(time.Now().UnixNano())
		c.drops.Add(1)
	}, keep
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go m.run(ctx)
	return m.wrap(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})), c
}

// TestMemoryReleaserDropsAfterKeep: what is kept for an agent's pause (drop) goes keep after
// the last request, with a release after it; a request within keep puts it off, so it is
// never dropped while work goes on.
func TestMemoryReleaserDropsAfterKeep(t *testing.T) {
	const delay, keep = 40 * time.Millisecond, 400 * time.Millisecond
	h, c := releaserWithDrop(t, delay, keep)
	releases, drops, dropAfter, dropAt := &c.releases, &c.drops, &c.dropAfter, &c.dropAt

	hit(h, "/")
	if got := waitReleases(releases, 1, 20*delay); got != 1 {
		t.Fatalf("%d releases after the first idle delay, want 1", got)
	}
	if got := drops.Load(); got != 0 {
		t.Fatalf("dropped %d times at the first release, want 0 (keep is %v)", got, keep)
	}
	// Work inside keep: no drop keep after the first request, one keep after this one.
	time.Sleep(keep / 2)
	hit(h, "/")
	last := time.Now()
	if got := waitReleases(releases, 2, 20*delay); got != 2 {
		t.Fatalf("%d releases after the second request, want 2", got)
	}
	if got := waitReleases(drops, 1, 3*keep); got != 1 {
		t.Fatalf("%d drops after keep without requests, want 1", got)
	}
	if at := time.Unix(0, dropAt.Load()); at.Sub(last) < keep-delay/2 {
		t.Fatalf("dropped %v after the last request, want about %v", at.Sub(last), keep)
	}
	if got := dropAfter.Load(); got != 2 {
		t.Fatalf("the drop ran after %d releases, want after the idle release (2)", got)
	}
	if got := waitReleases(releases, 3, 20*delay); got != 3 {
		t.Fatalf("%d releases after the drop, want 3 (one right after it)", got)
	}
	time.Sleep(2 * keep)
	if got, n := drops.Load(), releases.Load(); got != 1 || n != 3 {
		t.Fatalf("%d drops and %d releases while idle after the drop, want still 1 and 3", got, n)
	}
}

// TestMemoryReleaserKeepIgnoresPolls: editors' feed polls, answered every few seconds while
// no agent works, release memory as any answer does but do not put off the drop: it comes
// keep after the last work. A poll answered after the drop brings no second one.
func TestMemoryReleaserKeepIgnoresPolls(t *testing.T) {
	const delay, keep = 40 * time.Millisecond, 600 * time.Millisecond
	const poll = "/api/v1/documents/0b6e6f6c-1d2e-4f00-9a3b-0123456789ab/changes?since=3&wait=25"
	h, c := releaserWithDrop(t, delay, keep)
	releases, drops, dropAt := &c.releases, &c.drops, &c.dropAt

	hit(h, "/")
	last := time.Now()
	// Polls answered every keep/4 (each leads to a release), the last one after the drop.
	for range 6 {
		time.Sleep(keep / 4)
		hit(h, poll)
	}
	if got := drops.Load(); got != 1 {
		t.Fatalf("%d drops while polls were answered for %v after the last work, want 1", got, 6*keep/4)
	}
	if at := time.Unix(0, dropAt.Load()).Sub(last); at < keep-delay/2 || at > keep+keep/4+delay {
		t.Fatalf("dropped %v after the last work, want about %v (polls answered every %v)", at, keep, keep/4)
	}
	if got := waitReleases(releases, 6, 20*delay); got < 6 {
		t.Fatalf("%d releases, want one per answer's idle period and one after the drop (6 or more)", got)
	}
	time.Sleep(2 * keep)
	if got := drops.Load(); got != 1 {
		t.Fatalf("%d drops after polls alone, want still 1", got)
	}
}

// BenchmarkReleaserWrap is the cost the releaser adds to every request (compare with
// /bare; a request to /speak costs talkd 50–110 µs of CPU, docs/bench-load.md).
func BenchmarkReleaserWrap(b *testing.B) {
	noop := http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})
	m := newMemoryReleaser(time.Hour, slog.New(slog.NewTextHandler(io.Discard, nil)))
	m.release = func() {}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go m.run(ctx)
	w, r := httptest.NewRecorder(), httptest.NewRequest("GET", "/", nil)
	for _, c := range []struct {
		name string
		h    http.Handler
	}{{"bare", noop}, {"wrapped", m.wrap(noop)}} {
		b.Run(c.name, func(b *testing.B) {
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					c.h.ServeHTTP(w, r)
				}
			})
		})
	}
}
