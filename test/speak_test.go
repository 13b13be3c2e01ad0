package test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// quietAroundNow returns a quiet-hours window containing the current UTC time.
func quietAroundNow() string {
	now := time.Now().UTC()
	return fmt.Sprintf("%s-%s", now.Add(-time.Hour).Format("15:04"), now.Add(time.Hour).Format("15:04"))
}

func utcEnv(extra map[string]string) map[string]string {
	env := map[string]string{"TZ": "UTC"}
	for k, v := range extra {
		env[k] = v
	}
	return env
}

// TestSpeakOutcomes covers every row of ARCHITECTURE §3.2 at the process boundary.
func TestSpeakOutcomes(t *testing.T) {
	t.Parallel()
	d := startDaemon(t, daemonOptions{})

	t.Run("queued", func(t *testing.T) {
		status, body := d.postJSON(t, "/speak", map[string]any{"text": "  Build is green  ", "priority": "high", "lang": "de"}, nil)
		if status != http.StatusAccepted || body["status"] != "queued" || body["id"] == "" || body["position"] == nil {
			t.Fatalf("got %d %v", status, body)
		}
		recs := d.waitSpoken(t, 1)
		r := recs[len(recs)-1]
		if r.Text != "Build is green" || r.Lang != "de" || r.Priority != "high" || r.Caller != "local" || r.ID != body["id"] {
			t.Fatalf("spoken %+v", r)
		}
	})

	invalid := []struct {
		name, body, field, code string
	}{
		{"missing text", `{}`, "text", "invalid_field"},
		{"blank text", `{"text":"   "}`, "text", "invalid_field"},
		{"bad priority", `{"text":"x","priority":"urgent"}`, "priority", "invalid_field"},
		{"bad lang", `{"text":"x","lang":"fr"}`, "lang", "invalid_field"},
		{"unknown provider", `{"text":"x","provider":"nope"}`, "provider", "invalid_field"},
		{"unknown field", `{"text":"x","prio":"high"}`, "prio", "unknown_field"},
		{"wrong type", `{"text":"x","now":"yes"}`, "now", "invalid_field"},
		{"wrong text type", `{"text":42}`, "text", "invalid_field"},
		{"not JSON", `say hello`, "", "invalid_json"},
		{"array", `[{"text":"x"}]`, "", "invalid_json"},
		{"two objects", `{"text":"x"}{"text":"y"}`, "", "invalid_json"},
		{"truncated", `{"text":"x"`, "", "invalid_json"},
		{"empty body", ``, "", "invalid_json"},
	}
	for _, tc := range invalid {
		t.Run("invalid/"+tc.name, func(t *testing.T) {
			status, body := d.postJSON(t, "/speak", tc.body, nil)
			if status != http.StatusBadRequest {
				t.Fatalf("status %d, body %v", status, body)
			}
			e, _ := body["error"].(map[string]any)
			if e["code"] != tc.code || e["message"] == "" {
				t.Fatalf("error %v, want code %s", body, tc.code)
			}
			if tc.field != "" && (e["field"] != tc.field || !strings.Contains(e["message"].(string), tc.field)) {
				t.Fatalf("error %v does not name field %q", e, tc.field)
			}
		})
	}

	t.Run("too large", func(t *testing.T) {
		status, body := d.postJSON(t, "/speak", `{"text":"`+strings.Repeat("a", 70<<10)+`"}`, nil)
		if status != http.StatusRequestEntityTooLarge || body["error"].(map[string]any)["code"] != "body_too_large" {
			t.Fatalf("got %d %v", status, body)
		}
	})
	t.Run("not found and wrong method", func(t *testing.T) {
		status, _, raw := d.request(t, http.MethodGet, "/nope", "", nil)
		if status != http.StatusNotFound || !strings.Contains(string(raw), `"not_found"`) {
			t.Fatalf("got %d %s", status, raw)
		}
		status, hdr, raw := d.request(t, http.MethodGet, "/speak", "", nil)
		if status != http.StatusMethodNotAllowed || !strings.Contains(hdr.Get("Allow"), "POST") || !strings.Contains(string(raw), "method_not_allowed") {
			t.Fatalf("got %d %v %s", status, hdr, raw)
		}
	})
	t.Run("foreign host", func(t *testing.T) {
		status, _, raw := d.request(t, http.MethodPost, "/speak", `{"text":"x"}`, map[string]string{"Host": "evil.example.com"})
		if status != http.StatusForbidden || !strings.Contains(string(raw), "host_not_allowed") {
			t.Fatalf("got %d %s", status, raw)
		}
	})
}

func TestSpeakMutedAndDiscarded(t *testing.T) {
	t.Parallel()
	d := startDaemon(t, daemonOptions{Config: `version = 1
[rules]
quiet_hours = ["` + quietAroundNow() + `"]
`, Env: utcEnv(nil)})

	status, body := d.postJSON(t, "/speak", map[string]any{"text": "in quiet hours"}, nil)
	if status != http.StatusOK || body["status"] != "discarded" || body["reason"] != "quiet_hours" {
		t.Fatalf("quiet hours: %d %v", status, body)
	}
	// now beats quiet hours and the rate limit.
	for i := 0; i < 2; i++ {
		status, body = d.postJSON(t, "/speak", map[string]any{"text": fmt.Sprintf("urgent %d", i), "priority": "low", "now": true}, nil)
		if status != http.StatusAccepted || body["status"] != "queued" {
			t.Fatalf("now #%d: %d %v", i, status, body)
		}
	}
	d.waitSpoken(t, 2)

	// mute beats now.
	if status, body := d.postJSON(t, "/mute", map[string]any{"for": "1h"}, nil); status != http.StatusOK || body["muted"] != true || body["until"] == nil {
		t.Fatalf("mute: %d %v", status, body)
	}
	status, body = d.postJSON(t, "/speak", map[string]any{"text": "muted", "now": true, "priority": "high"}, nil)
	if status != http.StatusOK || body["status"] != "muted" || body["until"] == nil {
		t.Fatalf("muted: %d %v", status, body)
	}
	if status, body := d.postJSON(t, "/unmute", "", nil); status != http.StatusOK || body["muted"] != false {
		t.Fatalf("unmute: %d %v", status, body)
	}
	time.Sleep(200 * time.Millisecond)
	if n := len(d.spoken(t)); n != 2 {
		t.Fatalf("%d utterances spoken, want 2 (muted and discarded ones must not be)", n)
	}
}

// TestRateLimitLow: a low announcement inside the rate limit waits for its slot by
// default; with on_rate_limit = "discard" it is discarded with the time until the next.
func TestRateLimitLow(t *testing.T) {
	t.Parallel()
	def := startDaemon(t, daemonOptions{})
	def.postJSON(t, "/speak", map[string]any{"text": "first low", "priority": "low"}, nil)
	status, body := def.postJSON(t, "/speak", map[string]any{"text": "second low", "priority": "low"}, nil)
	if ms, _ := body["deferred_ms"].(float64); status != http.StatusAccepted || ms < 25000 || ms > 30000 {
		t.Fatalf("second low by default: %d %v, want queued and deferred about 30s", status, body)
	}

	d := startDaemon(t, daemonOptions{Config: "version = 1\n[rules]\non_rate_limit = \"discard\"\n"})
	status, body = d.postJSON(t, "/speak", map[string]any{"text": "first low", "priority": "low"}, nil)
	if status != http.StatusAccepted {
		t.Fatalf("first: %d %v", status, body)
	}
	status, body = d.postJSON(t, "/speak", map[string]any{"text": "second low", "priority": "low"}, nil)
	if status != http.StatusOK || body["status"] != "discarded" || body["reason"] != "rate_limit" {
		t.Fatalf("second: %d %v", status, body)
	}
	if ms, _ := body["retry_after_ms"].(float64); ms < 25000 || ms > 30000 {
		t.Errorf("retry_after_ms %v, want about 30s", body["retry_after_ms"])
	}
	// Other priorities have their own interval.
	if status, _ := d.postJSON(t, "/speak", map[string]any{"text": "a normal"}, nil); status != http.StatusAccepted {
		t.Errorf("normal after low: %d", status)
	}
}

// TestPriorityOrderNoOverlap: high is spoken before earlier-queued normal and low, and no
// two utterances overlap.
func TestPriorityOrderNoOverlap(t *testing.T) {
	t.Parallel()
	d := startDaemon(t, daemonOptions{Config: `version = 1
[voice]
fake_duration = "300ms"
[rules.rate_limit]
low = "0s"
normal = "0s"
`})
	post := func(text, prio string) {
		if status, body := d.postJSON(t, "/speak", map[string]any{"text": text, "priority": prio}, nil); status != http.StatusAccepted {
			t.Fatalf("%s: %d %v", text, status, body)
		}
	}
	post("occupy the voice", "normal")
	time.Sleep(100 * time.Millisecond)
	post("low one", "low")
	post("normal one", "normal")
	post("high one", "high")
	recs := d.waitSpoken(t, 4)
	want := []string{"occupy the voice", "high one", "normal one", "low one"}
	for i, r := range recs {
		if r.Text != want[i] {
			t.Fatalf("order %v, want %v", texts(recs), want)
		}
		if i > 0 && r.Start.Before(recs[i-1].End) {
			t.Fatalf("utterance %d started %v before %d ended %v", i, r.Start, i-1, recs[i-1].End)
		}
	}
}

func texts(recs []spokenRecord) []string {
	var out []string
	for _, r := range recs {
		out = append(out, r.Text)
	}
	return out
}

func TestQueueFull(t *testing.T) {
	t.Parallel()
	d := startDaemon(t, daemonOptions{Config: `version = 1
[voice]
fake_duration = "5s"
[rules]
queue_size = 2
[rules.rate_limit]
normal = "0s"
`})
	var last int
	var hdr http.Header
	var raw []byte
	for i := 0; i < 4; i++ {
		last, hdr, raw = d.request(t, http.MethodPost, "/speak", fmt.Sprintf(`{"text":"n%d"}`, i), nil)
	}
	if last != http.StatusServiceUnavailable || hdr.Get("Retry-After") == "" || !strings.Contains(string(raw), "queue_full") {
		t.Fatalf("got %d %v %s", last, hdr, raw)
	}
}

// TestVoicesEndpoint: GET /voices names provider and sink and lists the engine's voices.
func TestVoicesEndpoint(t *testing.T) {
	t.Parallel()
	d := startDaemon(t, daemonOptions{})
	status, body := d.getJSON(t, "/voices")
	voices, _ := body["voices"].([]any)
	if status != http.StatusOK || body["provider"] != "fake" || body["sink"] != "null" || len(voices) != 2 {
		t.Fatalf("got %d %v", status, body)
	}
}
