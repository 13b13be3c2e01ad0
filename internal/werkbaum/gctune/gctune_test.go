package gctune

import (
	"math"
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

// TestTuneGCKeepsTheEnvironmentsSettings: talkd's collector defaults apply only where
// GOGC and GOMEMLIMIT are not set.
func TestTuneGCKeepsTheEnvironmentsSettings(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(math.MaxInt64))

	env := map[string]string{}
	stop := Apply(func(k string) string { return env[k] })
	stop()
	if got, want := debug.SetGCPercent(100), minHeapGoal*100/runtimeHeapMinimum; got != want {
		t.Errorf("GC percent %d, want %d (a first goal of minHeapGoal)", got, want)
	}
	if got := debug.SetMemoryLimit(math.MaxInt64); got != memoryLimitFloor {
		t.Errorf("memory limit %d, want %d", got, memoryLimitFloor)
	}

	env = map[string]string{"GOGC": "100", "GOMEMLIMIT": "1GiB"}
	Apply(func(k string) string { return env[k] })()
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("with GOGC set: GC percent %d, want it left at 100", got)
	}
	if got := debug.SetMemoryLimit(math.MaxInt64); got != math.MaxInt64 {
		t.Errorf("with GOMEMLIMIT set: memory limit %d, want it left alone", got)
	}
}

// TestMemoryLimitFollowsTheLiveHeap: after a collection the soft limit is 1.5× the live
// heap plus the slack, never below the floor (issue 33: a fixed 512 MiB let the daemon
// climb to 400 MB while serving large plans).
func TestMemoryLimitFollowsTheLiveHeap(t *testing.T) {
	if got := memoryLimitFor(10 << 20); got != memoryLimitFloor {
		t.Errorf("limit for a 10 MiB live heap %d, want the floor %d", got, memoryLimitFloor)
	}
	if got, want := memoryLimitFor(200<<20), int64(300<<20+memoryLimitSlack); got != want {
		t.Errorf("limit for a 200 MiB live heap %d, want %d", got, want)
	}

	defer debug.SetGCPercent(debug.SetGCPercent(100))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(math.MaxInt64))
	stop := Apply(func(string) string { return "" })
	defer stop()
	live := make([][]byte, 96)
	for i := range live {
		live[i] = make([]byte, 1<<20)
		live[i][0] = 1
	}
	floorPlus := int64(96<<20 + 48<<20 + memoryLimitSlack) // 1.5 × 96 MiB + slack
	deadline := time.Now().Add(5 * time.Second)
	var got int64
	for time.Now().Before(deadline) {
		runtime.GC()
		time.Sleep(10 * time.Millisecond) // the finalizer runs after the collection
		if got = debug.SetMemoryLimit(-1); got >= floorPlus {
			break
		}
	}
	percent := debug.SetGCPercent(-1)
	debug.SetGCPercent(percent)
	runtime.KeepAlive(live)
	if percent != defaultGCPercent {
		t.Errorf("GC percent with 96 MiB live: %d, want %d", percent, defaultGCPercent)
	}
	if got < floorPlus || got > floorPlus+32<<20 {
		t.Fatalf("memory limit with 96 MiB live: %d, want about %d", got, floorPlus)
	}
}

// TestGCPercentGivesASmallHeapTheMinimumGoal: a small live heap's next goal is
// minHeapGoal (a fresh daemon's first analysis of a large plan runs without collections),
// a large one's is GOGC=400's, and the percentage never falls below 400.
func TestGCPercentGivesASmallHeapTheMinimumGoal(t *testing.T) {
	for _, c := range []struct {
		live uint64
		want int
	}{
		{0, defaultGCPercent},
		{4 << 20, 2300},  // goal 4 + 92 = 96 MiB
		{12 << 20, 700},  // goal 12 + 84 = 96 MiB
		{24 << 20, 400},  // 300 would give 96 MiB; GOGC=400 gives more
		{200 << 20, 400}, // above the goal
	} {
		if got := gcPercentFor(c.live); got != c.want {
			t.Errorf("GC percent for %d MiB live: %d, want %d", c.live>>20, got, c.want)
		}
	}

	defer debug.SetGCPercent(debug.SetGCPercent(100))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(math.MaxInt64))
	stop := Apply(func(string) string { return "" })
	defer stop()
	deadline := time.Now().Add(5 * time.Second)
	initial := minHeapGoal * 100 / runtimeHeapMinimum
	var got int
	for time.Now().Before(deadline) {
		runtime.GC()
		time.Sleep(10 * time.Millisecond) // the finalizer runs after the collection
		if got = debug.SetGCPercent(-1); got != initial {
			break
		}
	}
	debug.SetGCPercent(got)
	// The test binary's live heap is a few MiB (not 4 exactly): after a collection the
	// percentage is set from it, and its next goal is the minimum.
	if got == initial || got <= 1000 {
		t.Errorf("GC percent after a collection of a small heap: %d, want it set from the live heap (over 1000, not the first %d)", got, initial)
	}
}
