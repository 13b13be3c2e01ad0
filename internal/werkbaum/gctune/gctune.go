// Package gctune holds talkd's collector settings. They exist because of the notation
// engine's allocation pattern, so the daemon applies them at start and the engine's
// benchmarks apply the same ones to measure the engine as talkd runs it.
package gctune

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync/atomic"
)

// The notation engine (goja) allocates several times a plan's size per call: an inspect of
// the 1,359-line example plan makes about 4 MB of short-lived objects against a live heap
// of a few MB, so with Go's default GOGC=100 the collector ran several times per call and
// its marking and write barriers cost about a third of the call. talkd therefore lets the
// heap grow further between collections and bounds it with a soft memory limit instead.
// Measured (docs/bench-load.md, "the final tree on a quiet machine"): werkbaum_inspect over
// HTTP at 1 / 8 / 128 / 256 connections answered 283 / 488 / 488 / 519 per second with the
// defaults (peak RSS 31-55 MB) and 561 / 889 / 863 / 666 per second with these settings
// (peak RSS 61-73 MB). The idle release (idle.go) hands the garbage back once the daemon is
// idle, so an idle daemon is as small as before (docs/bench-memory.md).
//
// The soft limit is 256 MiB, not the 64 MiB it was: a large plan's analysis (the memo
// keeps a write's old and new text analysed) has a live heap above 64 MiB, and a limit
// below the live heap makes the collector run without pause. Measured with
// `GOGC=400 GOMEMLIMIT=… werkbaum.test -test.bench 'Size/(write|inspect)/nodes=(1000|10000)$'
// -test.benchtime 3x`, two rounds each: a 10,000-node write took 1.85 / 1.80 s wall and
// 3.6 / 3.5 s CPU under 64 MiB against 0.74 / 0.79 s and 0.74 / 0.88 s under 256 MiB;
// the 1,000-node write 88 / 81 ms against 72 / 67 ms (docs/bench-werkbaum.md). Small
// plans' heaps stay far below either limit (GOGC decides there), so the limit costs
// nothing until a large plan is in use, and the idle release returns it afterwards.
//
// It was 512 MiB, not 256: a plan near the 2 MiB input limit (40,000 nodes) holds about
// 140 MB while a write's two texts are analysed, and under 256 MiB its write took
// 1.10 / 1.13 / 1.15 s (-test.bench 'Size/write/nodes=40000$' -test.benchtime 3x, GOGC=400),
// under 384 MiB 0.53 s, under 512 MiB 0.38 s (docs/bench-werkbaum.md, seventh round). But a
// fixed limit that high let a daemon serving the 231-, 2,000- and 10,000-node plans climb to
// 355–472 MB during writes (GOGC=400 on a live heap of 70–90 MB; issue 33). The limit now
// follows the live heap instead: after every collection it is set to 1.5× the live heap plus
// 32 MiB, and never below the floor. Small plans stay under GOGC's own goal (the floor costs
// them nothing), a large live heap gets half its size again as room, and the peak stays near
// the live set (figures in docs/BENCHMARKS.md, BenchmarkServingMemory).
//
// The floor is 160 MiB, not 128: that daemon's live heap is about 50 MB, so the floor is
// the limit while it serves, and the runtime's own share of the limit (spans not filled,
// free pages, metadata) is about 45 MB, which left the heap 30-45 MB of room over the live
// set under 128 MiB (heap goal 86-100 MB): the daemon collected about ten times a second
// while it wrote the 10,000-node plan. Under 160 MiB the heap goal is 125 MB. Measured in
// one run, the two floors interleaved, three rounds: 88-97 collections in the 300 writes
// instead of 133-149, the 10,000-node write's CPU in the daemon 122-141 ms instead of
// 143-164 ms (mean -12 %), for a peak of 188-193 MB instead of 157-159 MB; idle after
// 30 s 54-57 MB either way. Resident memory is the limit plus about 25 MB of code and
// runtime, so a higher floor would take the peak past the 200 MB target.
//
// A small heap's collections are spaced by a minimum heap goal of 96 MiB: GOGC=400 alone
// let a fresh daemon collect three times during its first analysis of a 10,000-node plan
// (at heaps of 16, 23 and 64 MB), about 50 ms of CPU in marking and assists while the live
// heap grew to 35 MB; the whole first inspect allocates less than 96 MB, so under the goal
// it runs without a collection. The percentage is therefore set after every collection
// so that the next goal is at least minHeapGoal, and never below defaultGCPercent. A
// live heap above about 19 MiB (the serving daemon's 50 MB) gets GOGC=400 as before, and
// the memory limit still bounds every goal, so the serving peak does not change; an idle
// daemon hands the room back (idle.go). The price is a small plan's working peak: a daemon
// editing and inspecting the example plan peaked about 21 MB higher (151–157 MB instead of
// 129–136 MB). Measured: docs/bench-plans.md, issue 33 third round, part 2.
const (
	defaultGCPercent = 400
	minHeapGoal      = 96 << 20  // bytes
	memoryLimitFloor = 160 << 20 // bytes
	memoryLimitSlack = 32 << 20  // bytes

	// runtimeHeapMinimum is the live heap the runtime assumes before its first collection:
	// the first goal is 4 MiB × GOGC/100.
	runtimeHeapMinimum = 4 << 20 // bytes
)

// memoryLimitFor is the soft memory limit for a live heap of live bytes.
func memoryLimitFor(live uint64) int64 {
	return max(int64(live)+int64(live)/2+memoryLimitSlack, memoryLimitFloor)
}

// gcPercentFor is the collector percentage for a live heap of live bytes: the next goal
// (live × (1 + percent/100)) at least minHeapGoal, the percentage at least defaultGCPercent.
func gcPercentFor(live uint64) int {
	if live == 0 || live >= minHeapGoal {
		return defaultGCPercent
	}
	return max(int((minHeapGoal-live)*100/live), defaultGCPercent)
}

// Apply applies talkd's collector settings unless GOGC or GOMEMLIMIT are set, which keep
// their usual meaning. The returned stop ends the settings' adjustment (tests).
func Apply(getenv func(string) string) (stop func()) {
	lt := &tuner{
		sample:  []metrics.Sample{{Name: "/gc/heap/live:bytes"}},
		percent: getenv("GOGC") == "",
		limit:   getenv("GOMEMLIMIT") == "",
	}
	if lt.percent {
		debug.SetGCPercent(minHeapGoal * 100 / runtimeHeapMinimum)
	}
	if lt.limit {
		debug.SetMemoryLimit(memoryLimitFloor)
	}
	if !lt.percent && !lt.limit {
		return func() {}
	}
	lt.arm()
	return func() { lt.stopped.Store(true) }
}

// tuner sets the collector percentage and the memory limit after every collection from
// the live heap it found. A finalizer on an object dropped at once runs after each
// collection; it re-arms itself, so the tuner needs no goroutine or timer (an idle daemon
// does nothing).
type tuner struct {
	sample         []metrics.Sample
	percent, limit bool // which of the two settings the tuner owns
	stopped        atomic.Bool
}

// gcSentinel carries a pointer so that it is never placed in the tiny allocator, whose
// blocks (and so their finalizers) can outlive a collection.
type gcSentinel struct{ t *tuner }

func (lt *tuner) arm() {
	runtime.SetFinalizer(&gcSentinel{lt}, func(s *gcSentinel) {
		if s.t.stopped.Load() {
			return
		}
		s.t.adjust()
		s.t.arm()
	})
}

func (lt *tuner) adjust() {
	metrics.Read(lt.sample)
	if lt.sample[0].Value.Kind() != metrics.KindUint64 {
		return
	}
	live := lt.sample[0].Value.Uint64()
	if lt.percent {
		debug.SetGCPercent(gcPercentFor(live))
	}
	if lt.limit {
		debug.SetMemoryLimit(memoryLimitFor(live))
	}
}
