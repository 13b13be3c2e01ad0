package main

import "runtime/debug"

// The notation engine (goja) allocates several times a plan's size per call: an inspect of
// the 1,359-line example plan makes about 4 MB of short-lived objects against a live heap
// of a few MB, so with Go's default GOGC=100 the collector ran several times per call and
// its marking and write barriers cost about a third of the call. talkd therefore lets the
// heap grow further between collections and bounds it with a soft memory limit instead.
// Measured (docs/bench-werkbaum.md "Collector settings"): werkbaum_inspect over HTTP at 1,
// 8 and 128 connections answered 273 / 524 / 577 per second with the defaults (peak RSS
// 31-50 MB) and 614 / 1057 / 965 per second with these settings (peak RSS 62-73 MB). The
// idle release (idle.go) hands the garbage back once the daemon is idle, so an idle daemon
// is as small as before (docs/bench-memory.md).
const (
	defaultGCPercent   = 400
	defaultMemoryLimit = 64 << 20 // bytes
)

// tuneGC applies talkd's collector settings unless GOGC or GOMEMLIMIT are set, which keep
// their usual meaning.
func tuneGC(getenv func(string) string) {
	if getenv("GOGC") == "" {
		debug.SetGCPercent(defaultGCPercent)
	}
	if getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(defaultMemoryLimit)
	}
}
