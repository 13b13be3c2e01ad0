package queue

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"talkd/internal/config"
)

// slowMuteStore blocks SaveMute until release is closed, as a full or slow disk would.
type slowMuteStore struct {
	*memStore
	entered chan struct{}
	release chan struct{}
}

func (s *slowMuteStore) SaveMute(m MuteState) error {
	close(s.entered)
	<-s.release
	return s.memStore.SaveMute(m)
}

// TestMuteSaveDoesNotHoldSubmit: while the mute state is being written, announcements
// are still answered at once; the mute applies when the save is done, and a mute change
// waiting behind it gives up with its context.
func TestMuteSaveDoesNotHoldSubmit(t *testing.T) {
	store := &slowMuteStore{memStore: newMemStore(), entered: make(chan struct{}), release: make(chan struct{})}
	v, err := New(testConfig(), &recSpeaker{hang: true}, store, time.Now, nil)
	if err != nil {
		t.Fatal(err)
	}
	muted := make(chan error, 1)
	go func() {
		_, err := v.Mute(context.Background(), nil)
		muted <- err
	}()
	<-store.entered
	done := make(chan Outcome, 1)
	go func() {
		out, _ := v.Submit(context.Background(), Announcement{Text: "during the save", Priority: High})
		done <- out
	}()
	select {
	case out := <-done:
		if out.Status != StatusQueued {
			t.Fatalf("announcement during the mute save: %+v", out)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("Submit waited for the mute state to be written")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := v.Unmute(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Unmute behind a pending save: %v, want the context's deadline", err)
	}
	close(store.release)
	if err := <-muted; err != nil {
		t.Fatal(err)
	}
	if out, _ := v.Submit(context.Background(), Announcement{Text: "after", Priority: High}); out.Status != StatusMuted {
		t.Fatalf("after the mute: %+v", out)
	}
	if got := v.History(0); got[1].Outcome != OutcomeDropped || got[1].Reason != "muted" {
		t.Fatalf("the announcement admitted during the save: %+v", got[1])
	}
}

// noPlayerSpeaker synthesizes but has nothing to play with.
type noPlayerSpeaker struct{ recSpeaker }

func (s *noPlayerSpeaker) Play(ctx context.Context, u Utterance, a Audio) error {
	return fmt.Errorf("voice: %w: tried pw-play, paplay", ErrNoPlayer)
}

// TestNoPlayerIsNotSpoken: audio that nothing played ends as synthesized, and Wait says so.
func TestNoPlayerIsNotSpoken(t *testing.T) {
	v, _, _ := newTestVoice(t, testConfig(), &noPlayerSpeaker{})
	go v.Run(context.Background())
	defer v.Close(context.Background())
	out, _ := v.Submit(context.Background(), Announcement{Text: "can you hear me", Priority: Normal})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	e, err := v.Wait(ctx, out.ID)
	if err != nil || e.Outcome != OutcomeSynthesized || e.Reason != ReasonNoPlayer {
		t.Fatalf("Wait: %+v, %v", e, err)
	}
}

// TestCancelDropsOwnWaiting: cancel drops the caller's waiting announcements (or all of
// them), leaves the one speaking, does not mute, and refuses an id that is not waiting.
func TestCancelDropsOwnWaiting(t *testing.T) {
	cfg := testConfig()
	cfg.Intervals = [3]time.Duration{}
	sp := &recSpeaker{gate: make(chan struct{}), started: make(chan string, 10)}
	v, _, _ := newTestVoice(t, cfg, sp)
	go v.Run(context.Background())
	defer func() { close(sp.gate); v.Close(context.Background()) }()
	n := 0
	submit := func(caller string) string {
		n++
		out, err := v.Submit(context.Background(), Announcement{Text: fmt.Sprintf("%d from %s", n, caller), Priority: Normal, Caller: caller})
		if err != nil || out.Status != StatusQueued {
			t.Fatalf("submit: %+v %v", out, err)
		}
		return out.ID
	}
	speaking := submit("a")
	<-sp.started
	a1, b1, a2 := submit("a"), submit("b"), submit("a")
	if _, err := v.Cancel(context.Background(), CancelRequest{ID: speaking, Caller: "a"}); !errors.Is(err, ErrNotWaiting) {
		t.Fatalf("cancel of the speaking one: %v", err)
	}
	if _, err := v.Cancel(context.Background(), CancelRequest{ID: b1, Caller: "a"}); !errors.Is(err, ErrNotWaiting) {
		t.Fatalf("cancel of another caller's: %v", err)
	}
	ids, err := v.Cancel(context.Background(), CancelRequest{Caller: "a"})
	if err != nil || strings.Join(ids, ",") != a1+","+a2 {
		t.Fatalf("cancel own: %v %v, want %s,%s", ids, err, a1, a2)
	}
	if st := v.Status(); st.Mute.Muted || st.Waiting != 1 || st.Speaking == nil || st.Speaking.ID != speaking {
		t.Fatalf("after cancel: %+v", st)
	}
	ids, err = v.Cancel(context.Background(), CancelRequest{Caller: "a", All: true})
	if err != nil || len(ids) != 1 || ids[0] != b1 {
		t.Fatalf("cancel all: %v %v", ids, err)
	}
	e, err := v.Wait(context.Background(), a1)
	if err != nil || e.Outcome != OutcomeDropped || e.Reason != ReasonCancelled {
		t.Fatalf("cancelled entry: %+v %v", e, err)
	}
}

// TestOutcomeLogLine: one info line per outcome with id, caller, agent, priority,
// outcome and reason; the text only at debug level.
func TestOutcomeLogLine(t *testing.T) {
	for _, level := range []slog.Level{slog.LevelInfo, slog.LevelDebug} {
		var buf bytes.Buffer
		log := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: level}))
		cfg := testConfig()
		cfg.QuietHours = []config.Window{mustWindow(t, "00:00-23:59")}
		v, err := New(cfg, &recSpeaker{}, newMemStore(), func() time.Time { return time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC) }, log)
		if err != nil {
			t.Fatal(err)
		}
		v.Submit(context.Background(), Announcement{Text: "secret plans of jörg", Priority: Low, Caller: "ci", Agent: "@Müller"})
		got := buf.String()
		for _, want := range []string{"msg=announcement", "id=a1", "caller=ci", "agent=@Müller", "priority=low", "outcome=discarded", "reason=quiet_hours"} {
			if !strings.Contains(got, want) {
				t.Errorf("%v: log lacks %q:\n%s", level, want, got)
			}
		}
		if strings.Contains(got, "secret plans") != (level == slog.LevelDebug) {
			t.Errorf("%v: text in the log = %v:\n%s", level, strings.Contains(got, "secret plans"), got)
		}
		if n := strings.Count(got, "msg=announcement"); n != 1 {
			t.Errorf("%v: %d announcement lines, want 1", level, n)
		}
	}
}

// TestNowPassesDeferred: under on_rate_limit = "defer", a now announcement passes the rate
// limit (ARCHITECTURE §3.2): it is not held behind a deferred one of its priority until
// that one's slot, and it does not pull the next slot forward.
func TestNowPassesDeferred(t *testing.T) {
	cfg := testConfig()
	cfg.DeferRateLimit = true
	sp := &recSpeaker{started: make(chan string, 10)}
	v, clock, _ := newTestVoice(t, cfg, sp)
	go v.Run(context.Background())
	defer v.Close(context.Background())
	submit := func(a Announcement) Outcome {
		t.Helper()
		out, err := v.Submit(context.Background(), a)
		if err != nil || out.Status != StatusQueued {
			t.Fatalf("submit %q: %+v %v", a.Text, out, err)
		}
		return out
	}
	first := submit(Announcement{Text: "first", Priority: Normal})
	if got := <-sp.started; got != first.ID {
		t.Fatalf("started %s, want %s", got, first.ID)
	}
	deferred := submit(Announcement{Text: "deferred", Priority: Normal})
	if deferred.Deferred != 5*time.Second {
		t.Fatalf("deferred by %v, want 5s", deferred.Deferred)
	}
	now := submit(Announcement{Text: "now", Priority: Normal, Now: true})
	select {
	case got := <-sp.started:
		if got != now.ID {
			t.Fatalf("started %s, want the now announcement %s", got, now.ID)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the now announcement waited for the deferred one's rate-limit slot")
	}
	// The next one still queues behind the deferred one's slot, not 5s after the now one.
	clock.advance(time.Second)
	later := submit(Announcement{Text: "later", Priority: Normal})
	if later.Deferred != 9*time.Second {
		t.Fatalf("the next one deferred by %v, want 9s (one interval after the deferred one's slot)", later.Deferred)
	}
}

// blockingHandler is a log handler whose writes hang until release is closed, as a
// stderr pipe nobody reads does.
type blockingHandler struct {
	entered chan struct{}
	once    *sync.Once
	release chan struct{}
}

func (h blockingHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h blockingHandler) Handle(context.Context, slog.Record) error {
	h.once.Do(func() { close(h.entered) })
	<-h.release
	return nil
}
func (h blockingHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h blockingHandler) WithGroup(string) slog.Handler      { return h }

// TestOutcomeLinesOutsideTheLock: the outcome lines of announcements settled together
// (cancel, mute) are written after the queue's lock is released, so a log that does not
// take them at once never holds up Submit.
func TestOutcomeLinesOutsideTheLock(t *testing.T) {
	h := blockingHandler{entered: make(chan struct{}), once: &sync.Once{}, release: make(chan struct{})}
	cfg := testConfig()
	cfg.Intervals = [3]time.Duration{}
	v, err := New(cfg, &recSpeaker{}, newMemStore(), time.Now, slog.New(h))
	if err != nil {
		t.Fatal(err)
	}
	for _, text := range []string{"one", "two", "three"} {
		if out, err := v.Submit(context.Background(), Announcement{Text: text, Priority: Normal}); err != nil || out.Status != StatusQueued {
			t.Fatalf("submit: %+v %v", out, err)
		}
	}
	var releaseOnce sync.Once
	release := func() { releaseOnce.Do(func() { close(h.release) }) }
	defer release()
	cancelled := make(chan []string, 1)
	go func() {
		ids, _ := v.Cancel(context.Background(), CancelRequest{All: true})
		cancelled <- ids
	}()
	<-h.entered
	done := make(chan error, 1)
	go func() {
		_, err := v.Submit(context.Background(), Announcement{Text: "meanwhile", Priority: Normal})
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Submit waited while the cancelled announcements' lines were written")
	}
	release()
	if ids := <-cancelled; len(ids) != 3 {
		t.Fatalf("cancelled %v, want 3", ids)
	}
}

// TestDefaultRulesKeepTheSecondAgent: with the default rules (no config file), the
// second of two agents finishing together is not discarded by the rate limit but waits
// for its slot, and the same text of one caller sent twice is spoken once, also when the
// rate limit is set to discard.
func TestDefaultRulesKeepTheSecondAgent(t *testing.T) {
	home := t.TempDir()
	c, err := config.Load(func(k string) string {
		return map[string]string{"HOME": home, "XDG_CONFIG_HOME": home + "/.config", "XDG_STATE_HOME": home + "/.local/state"}[k]
	})
	if err != nil {
		t.Fatal(err)
	}
	cfg := ConfigFrom(c)
	cfg.FlushEvery = time.Hour
	v, clock, _ := newTestVoice(t, cfg, &recSpeaker{})
	a, err := v.Submit(context.Background(), Announcement{Text: "tests pass", Priority: Normal, Caller: "a"})
	if err != nil || a.Status != StatusQueued {
		t.Fatalf("first: %+v %v", a, err)
	}
	clock.advance(100 * time.Millisecond)
	b, err := v.Submit(context.Background(), Announcement{Text: "build broken", Priority: Normal, Caller: "b"})
	if err != nil || b.Status != StatusQueued || b.Deferred != 4900*time.Millisecond {
		t.Fatalf("second agent: %+v %v, want queued and deferred 4.9s", b, err)
	}

	cfg.DeferRateLimit = false
	cfg.Intervals = [3]time.Duration{}
	w, _, _ := newTestVoice(t, cfg, &recSpeaker{})
	first, _ := w.Submit(context.Background(), Announcement{Text: "same", Priority: Normal, Caller: "a"})
	again, _ := w.Submit(context.Background(), Announcement{Text: "same", Priority: Normal, Caller: "a"})
	other, _ := w.Submit(context.Background(), Announcement{Text: "same", Priority: Normal, Caller: "b"})
	if again.SameAs != first.ID || other.SameAs != "" || w.Status().Waiting != 2 {
		t.Fatalf("merge: first %+v again %+v other %+v, waiting %d", first, again, other, w.Status().Waiting)
	}
}
