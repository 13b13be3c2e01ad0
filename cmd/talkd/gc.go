package main

import "runtime/debug"

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
