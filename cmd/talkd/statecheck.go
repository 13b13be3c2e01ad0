package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"

	"talkd/internal/state"
)

// The check of the state file at start runs in a process of its own: the daemon's own
// binary, started with stateCheckEnv naming the file. bbolt reads the file through a
// mapping larger than the file, so a damaged page whose offsets lead past the file's end
// is a fault (SIGBUS), which the Go runtime does not turn into a recoverable panic: it
// ends the process that reads. Here that process is the checker, and the daemon reports
// the damage, naming the file and the move aside, and exits 1.

// stateCheckEnv names the file the checker process checks (set only for it).
const stateCheckEnv = "TALKD_INTERNAL_STATE_CHECK"

// Exit codes of the checker process. Anything else (the runtime's 2 after a fault, a
// signal) means the check crashed on the file.
const (
	stateCheckOK      = 0
	stateCheckDamaged = 3 // stderr: the problem
	stateCheckFailed  = 4 // stderr: the error (locked, unreadable, …)
)

// runStateCheck is the checker process: it checks the file and exits.
func runStateCheck(path string, stderr io.Writer) int {
	err := state.CheckFile(path, state.Options{})
	var de *state.DamagedError
	switch {
	case err == nil:
		return stateCheckOK
	case errors.As(err, &de):
		fmt.Fprint(stderr, de.Problem)
		return stateCheckDamaged
	}
	fmt.Fprint(stderr, err.Error())
	return stateCheckFailed
}

// checkStateApart runs the checker process on path (state.Options.CheckApart).
func checkStateApart(path string) error {
	exe, err := os.Executable()
	if err != nil {
		// Without its own binary the daemon checks in its own process, as before.
		return state.CheckFile(path, state.Options{})
	}
	var out bytes.Buffer
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), stateCheckEnv+"="+path)
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	msg := strings.TrimSpace(out.String())
	var exit *exec.ExitError
	switch {
	case err == nil:
		return nil
	case !errors.As(err, &exit):
		return fmt.Errorf("check state database %s: start the checker: %w", path, err)
	case exit.ExitCode() == stateCheckDamaged:
		return &state.DamagedError{Path: path, Problem: msg}
	case exit.ExitCode() == stateCheckFailed:
		return errors.New(msg)
	}
	// The checker died reading the file: its first line says how ("unexpected fault
	// address …"); the dump after it is of no use to the user.
	first, _, _ := strings.Cut(msg, "\n")
	return &state.DamagedError{Path: path, Problem: fmt.Sprintf("the check at start crashed reading it (%s: %s)", exit, truncateLine(first, 200))}
}

func truncateLine(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}
