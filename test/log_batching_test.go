package test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// talkd holds its info lines for up to 10 ms and writes them together (cmd/talkd/logbuf.go):
// one write(2) per announcement outcome was the largest of its own costs per tools/call.
// These tests hold what users rely on: every outcome is one whole line, a line shows up
// while the daemon runs without anything else happening, and a stop writes every line.

// TestLogOutcomeLinesWrittenBeforeExit: a burst of announcements answered "muted", then
// SIGTERM right away: each one has its one whole info line in the log, in order, followed
// by the shutdown lines.
func TestLogOutcomeLinesWrittenBeforeExit(t *testing.T) {
	t.Parallel()
	d := startDaemon(t, daemonOptions{})
	if st, body := d.postJSON(t, "/mute", map[string]any{}, nil); st != http.StatusOK {
		t.Fatalf("mute: %d %v", st, body)
	}
	const n = 300
	ids := make([]string, 0, n)
	for i := range n {
		st, body := d.postJSON(t, "/speak", map[string]any{"text": fmt.Sprintf("Grüße %d an @jörg", i)},
			map[string]string{"X-Talk-Agent": "@Müller"})
		if st != http.StatusOK && st != http.StatusAccepted || body["status"] != "muted" {
			t.Fatalf("speak %d: %d %v", i, st, body)
		}
		ids = append(ids, body["id"].(string))
	}
	if code := d.terminate(t); code != 0 {
		t.Fatalf("exit %d", code)
	}
	var outcomes []string
	for _, l := range strings.Split(strings.TrimSuffix(d.logs(), "\n"), "\n") {
		if !strings.HasPrefix(l, "time=") {
			t.Fatalf("a broken log line: %q", l)
		}
		if strings.Contains(l, " msg=announcement ") {
			outcomes = append(outcomes, l)
		}
	}
	if len(outcomes) != n {
		t.Fatalf("%d outcome lines for %d announcements:\n%s", len(outcomes), n, d.logs())
	}
	for i, l := range outcomes {
		for _, want := range []string{" id=" + ids[i] + " ", "caller=local", "agent=@Müller", "outcome=muted"} {
			if !strings.Contains(l, want) {
				t.Fatalf("outcome line %d %q lacks %q", i, l, want)
			}
		}
	}
	logs := d.logs()
	if last := strings.LastIndex(logs, " msg=announcement "); last > strings.Index(logs, `msg="shutting down"`) ||
		!strings.HasSuffix(logs, "msg=stopped\n") {
		t.Errorf("the shutdown lines are not the last:\n%s", logs[max(0, len(logs)-600):])
	}
}

// TestLogOutcomeLineShowsUpAlone: a single announcement on an otherwise idle daemon has
// its line in the log soon (the batch's timer writes it; nothing else has to happen), and
// so has a single refusal.
func TestLogOutcomeLineShowsUpAlone(t *testing.T) {
	t.Parallel()
	d := startDaemon(t, daemonOptions{})
	st, body := d.postJSON(t, "/speak", map[string]any{"text": "alone"}, nil)
	if st != http.StatusAccepted {
		t.Fatalf("speak: %d %v", st, body)
	}
	id := body["id"].(string)
	start := time.Now()
	if !d.waitLog(t, "msg=announcement id="+id+" ") {
		t.Fatalf("no outcome line for %s within 5 s:\n%s", id, d.logs())
	}
	// Generous for a busy machine; the delay itself is 10 ms after the spoken outcome.
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("the outcome line took %v to appear", took)
	}
	if st, _ := d.postJSON(t, "/speak", map[string]any{"text": ""}, nil); st != http.StatusBadRequest {
		t.Fatalf("empty text: %d", st)
	}
	if !d.waitLog(t, `msg="request refused" door=/speak status=400`) {
		t.Fatalf("no refusal line within 5 s:\n%s", d.logs())
	}
}
