package main

import (
	"bytes"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestExitCodesDocumented: every exit code of the list is in talk --help and in the
// README's table with the same name, and the README lists no other.
func TestExitCodesDocumented(t *testing.T) {
	var help bytes.Buffer
	writeMainHelp(&help)
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range exitCodes {
		first := strings.SplitN(c.meaning, "\n", 2)[0]
		if !strings.Contains(help.String(), fmt.Sprintf("  %-2d %s", c.code, first)) {
			t.Errorf("talk --help lacks exit code %d (%s)", c.code, first)
		}
		name := first
		if rest, ok := strings.CutPrefix(first, "say --wait: "); ok {
			name = strings.SplitN(rest, " (", 2)[0]
		} else {
			name = strings.SplitN(strings.SplitN(first, " (", 2)[0], ";", 2)[0]
		}
		row := fmt.Sprintf("| `%d` |", c.code)
		i := strings.Index(string(readme), row)
		if i < 0 {
			t.Errorf("README has no row for exit code %d", c.code)
			continue
		}
		line := strings.SplitN(string(readme[i:]), "\n", 2)[0]
		if !strings.Contains(line, name) {
			t.Errorf("README's row of exit code %d does not say %q: %s", c.code, name, line)
		}
	}
	if strings.Contains(string(readme), fmt.Sprintf("| `%d` |", len(exitCodes))) {
		t.Errorf("README documents exit code %d, which talk does not have", len(exitCodes))
	}
}

// TestWaitExit: each end of an announcement has its own exit code; only spoken is 0.
func TestWaitExit(t *testing.T) {
	for _, c := range []struct {
		outcome, reason string
		want            int
	}{
		{"spoken", "", exitOK},
		{"muted", "", exitMuted},
		{"discarded", "quiet_hours", exitDiscarded},
		{"discarded", "rate_limit", exitDiscarded},
		{"failed", "provider \"piper\": piper: exit status 1", exitFailed},
		{"failed", "no audio device: aplay could not open a sound card", exitNoAudio},
		{"failed", "auto: no speech engine found for linux (tried espeak, speechd); install espeak-ng", exitNoAudio},
		{"synthesized", "no_player", exitNoAudio},
		{"stale", "waited longer than 2m0s", exitStale},
		{"stopped", "", exitNotSpoken},
		{"dropped", "cancelled", exitNotSpoken},
	} {
		if got := waitExit(c.outcome, c.reason); got != c.want {
			t.Errorf("%s (%s): exit %d, want %d", c.outcome, c.reason, got, c.want)
		}
	}
}

// TestSlowDaemonIsNotCalledDown: a daemon that listens but answers late is not reported
// as one to start (what a hanging engine behind it once made talk say).
func TestSlowDaemonIsNotCalledDown(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	f := newCLIDaemon(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	_, errOut, code := runCLI(t, map[string]string{"TALK_URL": f.srv.URL}, "", "say", "--timeout", "300ms", "hello")
	if code != exitUnreachable || strings.Contains(errOut, "start it with") || !strings.Contains(errOut, "did not answer in time") {
		t.Fatalf("slow daemon: %d %q", code, errOut)
	}
}
