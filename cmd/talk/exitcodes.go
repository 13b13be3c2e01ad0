package main

import (
	"fmt"
	"strings"
)

// Exit codes of talk, documented in `talk --help`.
const (
	exitOK          = 0
	exitFailure     = 1
	exitUsage       = 2
	exitUnreachable = 3
	exitRefused     = 4
	// exitNotSpoken: talk say --wait saw the announcement end without being spoken.
	exitNotSpoken = 5
)

// Exit codes of talk say --wait for each way an announcement can end unheard. A script
// that asks whether it was heard (talk say --wait … && echo heard) must never be told yes
// for an announcement that was muted, discarded or never made a sound; each other end has
// its own code, so the script can tell "try later" (muted, discarded) from "fix the
// machine" (no audio).
const (
	exitMuted     = 6
	exitDiscarded = 7
	exitFailed    = 8
	exitStale     = 9
	exitNoAudio   = 10
)

// exitCodeDoc is one documented exit code. exitCodes is the one list `talk --help`, the
// per-command help and the README are held to (TestExitCodesDocumented).
type exitCodeDoc struct {
	code    int
	meaning string
}

var exitCodes = []exitCodeDoc{
	{exitOK, "ok; with say --wait: the announcement was heard (a player or the engine played it).\nWithout --wait a muted or discarded announcement is not a failure either: talk says so\non stderr, a script must not fail on it"},
	{exitFailure, "other failure (unexpected answer, broken input, an MCP tool error)"},
	{exitUsage, "usage error (unknown command or flag, missing or bad argument)"},
	{exitUnreachable, "daemon unreachable or not answering in time (start it with: talkd)"},
	{exitRefused, "refused by the daemon (an error answer: invalid field, unauthorized, queue full,\n…); talk prints the daemon's error code and message"},
	{exitNotSpoken, "say --wait: not spoken for another reason (stopped, dropped, cancelled)"},
	{exitMuted, "say --wait: muted (talkd is muted; nothing was queued)"},
	{exitDiscarded, "say --wait: discarded by the rules (quiet hours, or on_rate_limit = \"discard\")"},
	{exitFailed, "say --wait: failed (the engine or the player failed; talk prints why)"},
	{exitStale, "say --wait: stale (waited longer than max_wait)"},
	{exitNoAudio, "say --wait: no audio (no audio player, no reachable audio device or no speech\nengine here: nothing could make it heard; talk doctor says what to install)"},
}

// exitCodesHelp is the exit-code section of talk --help.
func exitCodesHelp() string {
	var b strings.Builder
	for _, c := range exitCodes {
		fmt.Fprintf(&b, "  %-2d %s\n", c.code, strings.ReplaceAll(c.meaning, "\n", "\n     "))
	}
	return b.String()
}

// exitCodesShort is the one-line list under each command's help.
func exitCodesShort() string {
	return "Exit codes: 0 ok (say --wait: heard), 1 other failure, 2 usage, 3 daemon unreachable, 4 refused;\n" +
		"say --wait: 5 not spoken, 6 muted, 7 discarded, 8 failed, 9 stale, 10 no audio. See talk --help."
}

// waitExit maps the end of an announcement (its history outcome and reason) to the exit
// code of talk say --wait.
func waitExit(outcome, reason string) int {
	switch {
	case outcome == "spoken":
		return exitOK
	case noAudio(outcome, reason):
		return exitNoAudio
	case outcome == "muted":
		return exitMuted
	case outcome == "discarded":
		return exitDiscarded
	case outcome == "failed":
		return exitFailed
	case outcome == "stale":
		return exitStale
	}
	return exitNotSpoken
}

// noAudio reports an end that nothing here could have made heard: synthesized with no
// player (no_player), failed because no audio device was reachable (the daemon's reason
// starts with "no audio device"), or no speech engine at all.
func noAudio(outcome, reason string) bool {
	switch outcome {
	case "synthesized":
		return true
	case "failed":
		return strings.HasPrefix(reason, "no audio device") || strings.Contains(reason, "no speech engine found")
	}
	return false
}
