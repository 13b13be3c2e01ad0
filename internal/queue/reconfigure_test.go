package queue

import (
	"context"
	"testing"
	"time"

	"talkd/internal/config"
)

// New rules apply to the next announcement; what was already admitted under the old ones
// stays waiting and is spoken (judged by the new max_wait, which lets it wait longer).
func TestReconfigure(t *testing.T) {
	gate := make(chan struct{})
	sp := &recSpeaker{gate: gate, started: make(chan string, 8)}
	v, clock, _ := newTestVoice(t, testConfig(), sp)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go v.Run(ctx)
	defer v.Close(context.Background())

	submit := func(text string, p Priority) Outcome {
		t.Helper()
		out, err := v.Submit(ctx, Announcement{Text: text, Priority: p})
		if err != nil {
			t.Fatalf("%s: %v", text, err)
		}
		return out
	}
	if out := submit("first", Normal); out.Status != StatusQueued {
		t.Fatalf("first: %+v", out)
	}
	<-sp.started // "first" is speaking (held by the gate)
	if out := submit("second", Normal); out.Reason != ReasonRateLimit {
		t.Fatalf("second under the old 5s normal interval: %+v, want rate_limit", out)
	}
	if out := submit("waiting", High); out.Status != StatusQueued {
		t.Fatalf("waiting: %+v", out)
	}

	cfg := testConfig()
	cfg.Intervals[Normal] = 0
	cfg.QuietHours = []config.Window{mustWindow(t, "12:30-13:00")}
	cfg.MaxWait = 2 * time.Hour
	cfg.Capacity = 1
	if err := v.Reconfigure(cfg); err != nil {
		t.Fatal(err)
	}
	if st := v.Status(); st.Capacity != 1 || st.Intervals[Normal] != 0 || len(st.QuietHours) != 1 {
		t.Errorf("status after the reload: %+v", st)
	}
	// One announcement waits and the new capacity is 1: refused, but nothing is evicted.
	if _, err := v.Submit(ctx, Announcement{Text: "third", Priority: Normal}); err != ErrQueueFull {
		t.Errorf("third with the new capacity 1: %v, want ErrQueueFull", err)
	}
	clock.advance(30 * time.Minute) // 12:30: inside the new quiet hours
	if out := submit("quiet", High); out.Reason != ReasonQuietHours {
		t.Errorf("quiet: %+v, want quiet_hours", out)
	}
	gate <- struct{}{} // "first" ends; "waiting" is spoken next
	if id := <-sp.started; id == "" {
		t.Fatal("nothing started")
	}
	gate <- struct{}{}
	e, err := v.Wait(ctx, "a3")
	if err != nil || e.Outcome != OutcomeSpoken || e.Text != "waiting" {
		t.Errorf("the announcement admitted before the reload: %+v, %v; want spoken", e, err)
	}

	if err := v.Reconfigure(Config{}); err == nil {
		t.Error("Reconfigure accepted a capacity of 0")
	}
	if st := v.Status(); st.Capacity != 1 {
		t.Errorf("a refused reload changed the capacity to %d", st.Capacity)
	}
}
