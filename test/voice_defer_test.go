package test

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestVoiceRateLimitDefer: with rules.on_rate_limit = "defer", announcements that come
// too soon wait for their slot instead of being discarded, spaced by the interval; the
// same text of the same caller waiting twice is spoken once; a slot beyond max_wait is
// still discarded. The default stays discard (TestRateLimitLow).
func TestVoiceRateLimitDefer(t *testing.T) {
	t.Parallel()
	cfg := "version = 1\n[rules]\non_rate_limit = \"defer\"\nmax_wait = \"5s\"\n[rules.rate_limit]\nnormal = \"1s\"\nlow = \"10s\"\n"
	d := startDaemon(t, daemonOptions{Config: cfg})
	var ids []string
	for i, text := range []string{"build started", "tests running", "tests running", "build finished"} {
		status, body := d.postJSON(t, "/speak", map[string]any{"text": text}, nil)
		if status != http.StatusAccepted || body["status"] != "queued" {
			t.Fatalf("%d %q: %d %v", i, text, status, body)
		}
		switch i {
		case 0:
			if body["deferred_ms"] != nil {
				t.Fatalf("the first one was deferred: %v", body)
			}
		case 2:
			if body["same_as"] != ids[1] || !strings.Contains(body["message"].(string), "spoken once") {
				t.Fatalf("the duplicate: %v", body)
			}
			continue
		default:
			if ms, _ := body["deferred_ms"].(float64); ms < 500 || ms > float64(i)*1000 {
				t.Fatalf("%q deferred %v ms: %v", text, body["deferred_ms"], body)
			}
		}
		ids = append(ids, body["id"].(string))
	}
	recs := d.waitSpoken(t, 3)
	if got := strings.Join(texts(recs), " | "); got != "build started | tests running | build finished" {
		t.Fatalf("spoken: %s", got)
	}
	for i := 1; i < len(recs); i++ {
		if gap := recs[i].Start.Sub(recs[i-1].Start); gap < 900*time.Millisecond {
			t.Errorf("utterances %d and %d only %v apart; the interval is 1s", i-1, i, gap)
		}
	}
	// low: 10s interval, max_wait 5s: the second low cannot get a slot in time.
	d.postJSON(t, "/speak", map[string]any{"text": "low one", "priority": "low"}, nil)
	_, body := d.postJSON(t, "/speak", map[string]any{"text": "low two", "priority": "low"}, nil)
	if body["status"] != "discarded" || body["reason"] != "rate_limit" {
		t.Fatalf("a slot beyond max_wait: %v", body)
	}
	time.Sleep(300 * time.Millisecond)
	if n := len(d.spoken(t)); n > 4 {
		t.Fatalf("%d utterances spoken, want 4 at most", n)
	}
}
