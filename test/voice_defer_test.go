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
// still discarded. Defer is the default (TestRateLimitLow).
func TestVoiceRateLimitDefer(t *testing.T) {
	t.Parallel()
	const interval = 2 * time.Second
	cfg := "version = 1\n[rules]\non_rate_limit = \"defer\"\nmax_wait = \"10s\"\n[rules.rate_limit]\nnormal = \"2s\"\nlow = \"20s\"\n"
	d := startDaemon(t, daemonOptions{Config: cfg})
	var ids []string
	var first time.Time // just before the first announcement was sent
	for i, text := range []string{"build started", "tests running", "tests running", "build finished"} {
		if i == 0 {
			first = time.Now()
		}
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
			// Its slot is one interval after the one before: at most n intervals after the
			// first was admitted, at least n intervals after the first was sent minus the
			// time that has passed since (a busy machine may take long between the posts).
			n := time.Duration(len(ids))
			ms, _ := body["deferred_ms"].(float64)
			hi, lo := n*interval, n*interval-time.Since(first)
			if ms > float64(hi.Milliseconds()) || ms < float64(lo.Milliseconds()) {
				t.Fatalf("%q deferred %v ms, want between %d and %d: %v", text, body["deferred_ms"], lo.Milliseconds(), hi.Milliseconds(), body)
			}
		}
		ids = append(ids, body["id"].(string))
	}
	recs := d.waitSpoken(t, 3)
	if got := strings.Join(texts(recs), " | "); got != "build started | tests running | build finished" {
		t.Fatalf("spoken: %s", got)
	}
	for i := 1; i < len(recs); i++ {
		// The slots are an interval apart; the fake player's start may lag its slot by
		// the time to spawn it, which differs from one utterance to the next.
		if gap := recs[i].Start.Sub(recs[i-1].Start); gap < interval-300*time.Millisecond {
			t.Errorf("utterances %d and %d only %v apart; the interval is %v", i-1, i, gap, interval)
		}
	}
	// low: 20s interval, max_wait 10s: the second low cannot get a slot in time.
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
