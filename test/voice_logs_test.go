package test

import (
	"bufio"
	"context"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestVoiceLogsExplain: every announcement's end leaves one info line with id, caller,
// agent, origin, priority, outcome and reason; the text only with TALK_LOG_LEVEL=debug.
// The history names the page a browser call came from.
func TestVoiceLogsExplain(t *testing.T) {
	t.Parallel()
	for _, level := range []string{"", "debug"} {
		d := startDaemon(t, daemonOptions{Config: "version = 1\n[rules]\non_rate_limit = \"discard\"\n",
			Env: map[string]string{"TALK_LOG_LEVEL": level, "TALK_ALLOWED_ORIGINS": "http://page.test"}})
		status, body := d.postJSON(t, "/speak", map[string]any{"text": "Grüße von der Seite", "now": true},
			map[string]string{"Origin": "http://page.test", "X-Talk-Agent": "@Müller"})
		if status != http.StatusAccepted {
			t.Fatalf("browser speak: %d %v", status, body)
		}
		id := body["id"].(string)
		e := voiceHistoryEntry(t, d, id)
		if e["origin"] != "http://page.test" || e["outcome"] != "spoken" {
			t.Fatalf("history of a browser call: %v", e)
		}
		_, body = d.postJSON(t, "/speak", map[string]any{"text": "zu schnell"}, nil)
		_, body = d.postJSON(t, "/speak", map[string]any{"text": "noch schneller"}, nil)
		if body["status"] != "discarded" {
			t.Fatalf("second normal announcement: %v", body)
		}
		// The daemon's stderr reaches the test through a pipe: wait for the line.
		var logs, spoken, discarded string
		for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline) && discarded == ""; time.Sleep(20 * time.Millisecond) {
			logs = d.logs()
			for _, l := range strings.Split(logs, "\n") {
				if strings.Contains(l, "msg=announcement id="+id+" ") {
					spoken = l
				}
				if strings.Contains(l, "msg=announcement id="+body["id"].(string)+" ") {
					discarded = l
				}
			}
		}
		for _, want := range []string{"caller=local", "agent=@Müller", "origin=http://page.test", "priority=normal", "outcome=spoken"} {
			if !strings.Contains(spoken, want) {
				t.Errorf("level %q: the spoken line %q lacks %s", level, spoken, want)
			}
		}
		if !strings.Contains(discarded, "outcome=discarded reason=rate_limit") {
			t.Errorf("level %q: the discarded line: %q", level, discarded)
		}
		if has := strings.Contains(logs, "Grüße von der Seite"); has != (level == "debug") {
			t.Errorf("level %q: text in the log = %v:\n%s", level, has, logs)
		}
	}
}

// TestVoiceHistoryFollow: talk history -f prints what was there, then each new
// announcement once it has ended, in aligned columns.
func TestVoiceHistoryFollow(t *testing.T) {
	t.Parallel()
	d := startDaemon(t, daemonOptions{Env: utcEnv(nil), Config: "version = 1\n[rules]\nquiet_hours = [\"" + quietAroundNow() + "\"]\n"})
	d.postJSON(t, "/speak", map[string]any{"text": "before", "now": true}, nil)
	voiceHistoryEntry(t, d, "a1")

	next := followHistory(t, d, "-f")
	first := next()
	if !strings.Contains(first, "a1") || !strings.Contains(first, "spoken") {
		t.Fatalf("first line %q", first)
	}
	d.postJSON(t, "/speak", map[string]any{"text": "in the quiet hours"}, nil)
	d.postJSON(t, "/speak", map[string]any{"text": "after", "now": true}, nil)
	second, third := next(), next()
	if !strings.Contains(second, "a2") || !strings.Contains(second, "discarded (quiet_hours)") || !strings.Contains(third, "a3") {
		t.Fatalf("followed lines:\n%s\n%s", second, third)
	}
	// The columns line up: the text starts at the same place on every line.
	if i, j := strings.Index(first, `"before"`), strings.Index(second, `"in the quiet hours"`); i != j || i < 0 {
		t.Errorf("columns do not line up:\n%s\n%s", first, second)
	}
}

// TestVoiceRefusalLogged: a refused request leaves one info line a user can find, with
// the door, the status, the error code and the page's origin (or the Host it came with);
// never the token.
func TestVoiceRefusalLogged(t *testing.T) {
	t.Parallel()
	d := startDaemon(t, daemonOptions{})
	status, _ := d.postJSON(t, "/speak", map[string]any{"text": "from a page"}, map[string]string{"Origin": "http://evil.test"})
	if status != http.StatusForbidden {
		t.Fatalf("speak from an unlisted origin: %d", status)
	}
	status, _ = d.postJSON(t, "/speak", map[string]any{"text": "x", "rate": 9999}, map[string]string{"Authorization": "Bearer not-a-secret-1234"})
	if status != http.StatusBadRequest {
		t.Fatalf("speak with a rate out of range: %d", status)
	}
	var origin, field string
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline) && (origin == "" || field == ""); time.Sleep(20 * time.Millisecond) {
		for _, l := range strings.Split(d.logs(), "\n") {
			if !strings.Contains(l, "msg=\"request refused\"") {
				continue
			}
			if strings.Contains(l, "origin=http://evil.test") {
				origin = l
			}
			if strings.Contains(l, "code=invalid_field") {
				field = l
			}
		}
	}
	for _, want := range []string{"door=/speak", "status=403", "code=origin_not_allowed"} {
		if !strings.Contains(origin, want) {
			t.Errorf("the origin refusal's line %q lacks %s\n%s", origin, want, d.logs())
		}
	}
	for _, want := range []string{"door=/speak", "status=400", "host=127.0.0.1:"} {
		if !strings.Contains(field, want) {
			t.Errorf("the field refusal's line %q lacks %s\n%s", field, want, d.logs())
		}
	}
	if strings.Contains(d.logs(), "not-a-secret-1234") {
		t.Errorf("the token reached the log:\n%s", d.logs())
	}
}

// TestVoiceHistoryFollowKeepsN: talk history -f -n 1 shows the newest announcement and
// then only those that come after it, never the older ones -n left out.
func TestVoiceHistoryFollowKeepsN(t *testing.T) {
	t.Parallel()
	d := startDaemon(t, daemonOptions{Config: "version = 1\n[rules.rate_limit]\nnormal = \"0s\"\n"})
	for _, text := range []string{"one", "two", "three"} {
		_, body := d.postJSON(t, "/speak", map[string]any{"text": text}, nil)
		voiceHistoryEntry(t, d, body["id"].(string))
	}
	next := followHistory(t, d, "-f", "-n", "1")
	if first := next(); !strings.Contains(first, `"three"`) {
		t.Fatalf("first line %q, want the newest", first)
	}
	// Two polls of talk go by before the next announcement, so older ones would show.
	time.Sleep(1200 * time.Millisecond)
	d.postJSON(t, "/speak", map[string]any{"text": "four"}, nil)
	if second := next(); !strings.Contains(second, `"four"`) {
		t.Fatalf("after the newest came %q, want the new one", second)
	}
}

// followHistory runs `talk history ARGS` against d until the test ends and returns a
// function that reads its next output line (failing the test when the output ends).
func followHistory(t *testing.T, d *daemon, args ...string) func() string {
	t.Helper()
	_, talk := binaries(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	cmd := exec.CommandContext(ctx, talk, append([]string{"history"}, args...)...)
	cmd.Env = []string{"TALK_URL=" + d.URL, "HOME=" + t.TempDir(), "TZ=UTC"}
	out, err := cmd.StdoutPipe()
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); cmd.Wait() })
	lines := bufio.NewScanner(out)
	return func() string {
		t.Helper()
		if !lines.Scan() {
			t.Fatalf("talk history -f ended: %v", lines.Err())
		}
		return lines.Text()
	}
}
