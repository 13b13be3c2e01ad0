package main

import (
	"math"
	"runtime/debug"
	"testing"
)

// TestTuneGCKeepsTheEnvironmentsSettings: talkd's collector defaults apply only where
// GOGC and GOMEMLIMIT are not set.
func TestTuneGCKeepsTheEnvironmentsSettings(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(math.MaxInt64))

	env := map[string]string{}
	tuneGC(func(k string) string { return env[k] })
	if got := debug.SetGCPercent(100); got != defaultGCPercent {
		t.Errorf("GC percent %d, want %d", got, defaultGCPercent)
	}
	if got := debug.SetMemoryLimit(math.MaxInt64); got != defaultMemoryLimit {
		t.Errorf("memory limit %d, want %d", got, defaultMemoryLimit)
	}

	env = map[string]string{"GOGC": "100", "GOMEMLIMIT": "1GiB"}
	tuneGC(func(k string) string { return env[k] })
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("with GOGC set: GC percent %d, want it left at 100", got)
	}
	if got := debug.SetMemoryLimit(math.MaxInt64); got != math.MaxInt64 {
		t.Errorf("with GOMEMLIMIT set: memory limit %d, want it left alone", got)
	}
}
