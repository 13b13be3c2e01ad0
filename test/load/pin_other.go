//go:build !linux

package main

import (
	"fmt"
	"runtime"
)

// pinSelf is Linux-only (sched_setaffinity on every thread): elsewhere -pin is refused
// with a clear message, and the generator builds for every platform talkd builds for.
func pinSelf(cpu int) error {
	return fmt.Errorf("-pin needs Linux (this is %s)", runtime.GOOS)
}
