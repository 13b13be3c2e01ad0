package queue

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"testing"
	"time"

	"talkd/internal/config"
)

// fakeClock is a clock the tests move by hand.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// memStore is an in-memory Store.
type memStore struct {
	mu      sync.Mutex
	mute    MuteState
	history map[uint64]Entry
	seq     uint64
}

func newMemStore() *memStore { return &memStore{history: map[uint64]Entry{}} }

func (s *memStore) LoadMute() (MuteState, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.mute, nil
}
func (s *memStore) SaveMute(m MuteState) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.mute = m
	return nil
}
func (s *memStore) LoadHistory(limit int) ([]Entry, error) { return nil, nil }
func (s *memStore) SaveHistory(changed []Entry, keep int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, e := range changed {
		s.history[e.Seq] = e
		s.seq = max(s.seq, e.Seq)
	}
	return nil
}
func (s *memStore) NextSeq() (uint64, error) { return s.seq, nil }

type nopAudio struct{}

func (nopAudio) Close() error { return nil }

// recSpeaker records what it plays. When gate is set, each Play waits for a value on it
// (or for ctx), so tests decide when an utterance ends.
type recSpeaker struct {
	mu       sync.Mutex
	played   []Utterance
	active   int
	overlap  bool
	gate     chan struct{}
	started  chan string
	failWith error
	hang     bool
}

func (s *recSpeaker) Prepare(ctx context.Context, u Utterance) (Audio, error) {
	if s.failWith != nil {
		return nil, s.failWith
	}
	return nopAudio{}, nil
}

func (s *recSpeaker) Play(ctx context.Context, u Utterance, a Audio) error {
	s.mu.Lock()
	s.active++
	if s.active > 1 {
		s.overlap = true
	}
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.active--
		s.played = append(s.played, u)
		s.mu.Unlock()
	}()
	if s.started != nil {
		s.started <- u.ID
	}
	if s.hang {
		<-ctx.Done()
		return ctx.Err()
	}
	if s.gate != nil {
		select {
		case <-s.gate:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

func (s *recSpeaker) texts() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, u := range s.played {
		out = append(out, u.Text)
	}
	return out
}

func testConfig() Config {
	return Config{
		Intervals:           [3]time.Duration{30 * time.Second, 5 * time.Second, 0},
		MaxWait:             2 * time.Minute,
		Capacity:            100,
		NowPassesQuietHours: true,
		HistorySize:         500,
		SpeakTimeout:        5 * time.Second,
		FlushEvery:          time.Hour,
	}
}

func newTestVoice(t *testing.T, cfg Config, sp Speaker) (*Voice, *fakeClock, *memStore) {
	t.Helper()
	clock := &fakeClock{t: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)}
	store := newMemStore()
	v, err := New(cfg, sp, store, clock.now, nil)
	if err != nil {
		t.Fatal(err)
	}
	return v, clock, store
}

func mustWindow(t *testing.T, s string) config.Window {
	t.Helper()
	w, err := config.ParseWindow(s)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// TestLaws applies each law in isolation and in combination, in the order
// mute > now > quiet hours > rate limit.
func TestLaws(t *testing.T) {
	type step struct {
		advance  time.Duration
		prio     Priority
		now      bool
		grant    *bool  // the caller's now_passes_quiet_hours
		want     string // queued, muted, discarded:<reason>
		wantPos  int
		retryMin time.Duration
	}
	cases := []struct {
		name  string
		muted *MuteState
		quiet string
		// nowHeld: rules.now_passes_quiet_hours = false
		nowHeld bool
		at      string // clock time of day, default 12:00
		steps   []step
	}{
		{name: "plain admission", steps: []step{{prio: Normal, want: "queued", wantPos: 1}}},
		{name: "mute beats everything, now included", muted: &MuteState{Muted: true},
			steps: []step{{prio: High, now: true, want: "muted"}, {prio: Low, want: "muted"}}},
		{name: "mute with an end lets through after it", muted: &MuteState{Muted: true, Until: ptr(time.Date(2026, 11, 30, 12, 10, 0, 0, time.UTC))},
			steps: []step{{prio: Normal, want: "muted"}, {advance: 10 * time.Minute, prio: Normal, want: "queued"}}},
		{name: "quiet hours discard", quiet: "11:00-13:00",
			steps: []step{{prio: High, want: "discarded:quiet_hours"}}},
		{name: "now beats quiet hours", quiet: "11:00-13:00",
			steps: []step{{prio: Low, now: true, want: "queued"}}},
		{name: "quiet hours hold against now when the rules say so", quiet: "11:00-13:00", nowHeld: true,
			steps: []step{{prio: High, now: true, want: "discarded:quiet_hours"}, {prio: High, now: true, grant: ptr(true), want: "queued"}}},
		{name: "a client denied passing quiet hours", quiet: "11:00-13:00",
			steps: []step{{prio: High, now: true, grant: ptr(false), want: "discarded:quiet_hours"}, {prio: Normal, now: true, want: "queued"}}},
		{name: "quiet hours across midnight", quiet: "22:00-07:00", at: "23:30",
			steps: []step{{prio: Normal, want: "discarded:quiet_hours"}, {advance: 8 * time.Hour, prio: Normal, want: "queued"}}},
		{name: "outside quiet hours", quiet: "22:00-07:00", at: "21:59",
			steps: []step{{prio: Normal, want: "queued"}}},
		{name: "second low inside 30s is rate limited", steps: []step{
			{prio: Low, want: "queued"},
			{advance: 10 * time.Second, prio: Low, want: "discarded:rate_limit", retryMin: 20 * time.Second},
			{advance: 20 * time.Second, prio: Low, want: "queued"},
		}},
		{name: "rate limit is per priority", steps: []step{
			{prio: Low, want: "queued"}, {prio: Normal, want: "queued"}, {prio: High, want: "queued"},
			{prio: High, want: "queued"}, {prio: Normal, want: "discarded:rate_limit"},
		}},
		{name: "now beats the rate limit", steps: []step{
			{prio: Low, want: "queued"}, {prio: Low, now: true, want: "queued"},
		}},
		{name: "discarded announcements do not count for the rate limit", steps: []step{
			{prio: Normal, want: "queued"}, {advance: 3 * time.Second, prio: Normal, want: "discarded:rate_limit"},
			{advance: 2 * time.Second, prio: Normal, want: "queued"},
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig()
			cfg.NowPassesQuietHours = !tc.nowHeld
			if tc.quiet != "" {
				cfg.QuietHours = []config.Window{mustWindow(t, tc.quiet)}
			}
			v, clock, store := newTestVoice(t, cfg, &recSpeaker{})
			if tc.at != "" {
				hm, _ := time.Parse("15:04", tc.at)
				clock.t = time.Date(2026, 11, 30, hm.Hour(), hm.Minute(), 0, 0, time.UTC)
			}
			if tc.muted != nil {
				store.mute = *tc.muted
				v.mute = *tc.muted
			}
			for i, s := range tc.steps {
				clock.advance(s.advance)
				out, err := v.Submit(context.Background(), Announcement{Text: "t" + strconv.Itoa(i), Priority: s.prio, Now: s.now, NowPassesQuietHours: s.grant})
				if err != nil {
					t.Fatalf("step %d: %v", i, err)
				}
				got := out.Status
				if out.Reason != "" {
					got += ":" + out.Reason
				}
				if got != s.want {
					t.Fatalf("step %d: got %s, want %s", i, got, s.want)
				}
				if s.wantPos != 0 && out.Position != s.wantPos {
					t.Errorf("step %d: position %d, want %d", i, out.Position, s.wantPos)
				}
				if s.retryMin != 0 && out.RetryIn < s.retryMin {
					t.Errorf("step %d: retry in %v, want at least %v", i, out.RetryIn, s.retryMin)
				}
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

// TestOrder: high before normal before low, FIFO within one priority, one at a time.
func TestOrder(t *testing.T) {
	cfg := testConfig()
	cfg.Intervals = [3]time.Duration{}
	sp := &recSpeaker{gate: make(chan struct{}), started: make(chan string, 16)}
	v, _, _ := newTestVoice(t, cfg, sp)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go v.Run(ctx)

	submit := func(text string, p Priority) Outcome {
		out, err := v.Submit(ctx, Announcement{Text: text, Priority: p})
		if err != nil || out.Status != StatusQueued {
			t.Fatalf("submit %s: %+v %v", text, out, err)
		}
		return out
	}
	submit("first", Low) // starts speaking at once
	<-sp.started
	submit("low1", Low)
	submit("normal1", Normal)
	submit("low2", Low)
	out := submit("high1", High)
	if out.Position != 1 {
		t.Errorf("high position %d, want 1", out.Position)
	}
	submit("normal2", Normal)
	for i := 0; i < 6; i++ {
		sp.gate <- struct{}{}
		if i < 5 {
			<-sp.started
		}
	}
	cancel()
	v.Close(context.Background())
	want := []string{"first", "high1", "normal1", "normal2", "low1", "low2"}
	got := sp.texts()
	if len(got) != len(want) {
		t.Fatalf("played %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("played %v, want %v", got, want)
		}
	}
	if sp.overlap {
		t.Error("two utterances played at the same time")
	}
}

// TestStale: an announcement that waited longer than MaxWait is dropped and recorded.
func TestStale(t *testing.T) {
	cfg := testConfig()
	cfg.Intervals = [3]time.Duration{}
	sp := &recSpeaker{gate: make(chan struct{}), started: make(chan string, 4)}
	v, clock, _ := newTestVoice(t, cfg, sp)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go v.Run(ctx)
	v.Submit(ctx, Announcement{Text: "long one", Priority: Normal})
	<-sp.started
	old, _ := v.Submit(ctx, Announcement{Text: "will go stale", Priority: Normal})
	clock.advance(2*time.Minute + time.Second)
	fresh, _ := v.Submit(ctx, Announcement{Text: "fresh", Priority: Low})
	sp.gate <- struct{}{}
	<-sp.started
	sp.gate <- struct{}{}
	waitFor(t, func() bool { return len(sp.texts()) == 2 })
	if got := sp.texts(); got[1] != "fresh" {
		t.Fatalf("played %v, want the stale one skipped", got)
	}
	outcomes := map[string]string{}
	for _, e := range v.History(0) {
		outcomes[e.ID] = e.Outcome
	}
	if outcomes[old.ID] != "stale" {
		t.Errorf("stale announcement recorded as %q", outcomes[old.ID])
	}
	waitFor(t, func() bool {
		for _, e := range v.History(0) {
			if e.ID == fresh.ID {
				return e.Outcome == "spoken"
			}
		}
		return false
	})
}

// TestMuteStopsAndDrops: muting ends the current utterance and drops what waits.
func TestMuteStopsAndDrops(t *testing.T) {
	cfg := testConfig()
	cfg.Intervals = [3]time.Duration{}
	sp := &recSpeaker{gate: make(chan struct{}), started: make(chan string, 4)}
	v, _, store := newTestVoice(t, cfg, sp)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go v.Run(ctx)
	cur, _ := v.Submit(ctx, Announcement{Text: "speaking", Priority: Normal})
	<-sp.started
	waiting, _ := v.Submit(ctx, Announcement{Text: "waiting", Priority: Normal})
	if _, err := v.Mute(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if !store.mute.Muted {
		t.Fatal("mute not saved")
	}
	waitFor(t, func() bool { return len(sp.texts()) == 1 })
	got := map[string]string{}
	waitFor(t, func() bool {
		for _, e := range v.History(0) {
			got[e.ID] = e.Outcome
		}
		return got[cur.ID] == "stopped"
	})
	if got[waiting.ID] != "dropped" {
		t.Errorf("waiting announcement is %q, want dropped", got[waiting.ID])
	}
	if st := v.Status(); st.Waiting != 0 || st.Speaking != nil {
		t.Errorf("after mute: %+v", st)
	}
	if _, err := v.Unmute(context.Background()); err != nil {
		t.Fatal(err)
	}
	if out, _ := v.Submit(ctx, Announcement{Text: "again", Priority: High}); out.Status != StatusQueued {
		t.Errorf("after unmute: %+v", out)
	}
}

// TestMuteSurvivesRestart: a new Voice on the same store is still muted.
func TestMuteSurvivesRestart(t *testing.T) {
	v, clock, store := newTestVoice(t, testConfig(), &recSpeaker{})
	until := clock.now().Add(time.Hour)
	if _, err := v.Mute(context.Background(), &until); err != nil {
		t.Fatal(err)
	}
	v2, err := New(testConfig(), &recSpeaker{}, store, clock.now, nil)
	if err != nil {
		t.Fatal(err)
	}
	out, _ := v2.Submit(context.Background(), Announcement{Text: "x", Priority: High, Now: true})
	if out.Status != StatusMuted || out.MutedUntil == nil || !out.MutedUntil.Equal(until) {
		t.Fatalf("after restart: %+v", out)
	}
}

// TestQueueBound: a full queue refuses with ErrQueueFull.
func TestQueueBound(t *testing.T) {
	cfg := testConfig()
	cfg.Capacity = 3
	cfg.Intervals = [3]time.Duration{}
	v, _, _ := newTestVoice(t, cfg, &recSpeaker{})
	for i := 0; i < 3; i++ {
		if _, err := v.Submit(context.Background(), Announcement{Text: "x" + strconv.Itoa(i), Priority: Normal}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := v.Submit(context.Background(), Announcement{Text: "x", Priority: High}); !errors.Is(err, ErrQueueFull) {
		t.Fatalf("got %v, want ErrQueueFull", err)
	}
}

// TestFailingAndHangingSpeaker: neither stalls the queue.
func TestFailingAndHangingSpeaker(t *testing.T) {
	for _, sp := range []*recSpeaker{{failWith: errors.New("engine broke")}, {hang: true}} {
		cfg := testConfig()
		cfg.Intervals = [3]time.Duration{}
		cfg.SpeakTimeout = 50 * time.Millisecond
		v, _, _ := newTestVoice(t, cfg, sp)
		ctx, cancel := context.WithCancel(context.Background())
		go v.Run(ctx)
		a, _ := v.Submit(ctx, Announcement{Text: "one", Priority: Normal})
		b, _ := v.Submit(ctx, Announcement{Text: "two", Priority: Normal})
		waitFor(t, func() bool {
			done := 0
			for _, e := range v.History(0) {
				if (e.ID == a.ID || e.ID == b.ID) && e.Outcome == "failed" {
					done++
				}
			}
			return done == 2
		})
		cancel()
		v.Close(context.Background())
	}
}

// TestCloseFinishesCurrent: Close lets the current utterance end, drops what waits and
// saves the history.
func TestCloseFinishesCurrent(t *testing.T) {
	cfg := testConfig()
	cfg.Intervals = [3]time.Duration{}
	sp := &recSpeaker{gate: make(chan struct{}), started: make(chan string, 4)}
	v, _, store := newTestVoice(t, cfg, sp)
	go v.Run(context.Background())
	cur, _ := v.Submit(context.Background(), Announcement{Text: "speaking", Priority: Normal})
	<-sp.started
	waiting, _ := v.Submit(context.Background(), Announcement{Text: "waiting", Priority: Normal})
	go func() { time.Sleep(20 * time.Millisecond); sp.gate <- struct{}{} }()
	if err := v.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := v.Submit(context.Background(), Announcement{Text: "late"}); !errors.Is(err, ErrClosed) {
		t.Errorf("submit after close: %v", err)
	}
	store.mu.Lock()
	defer store.mu.Unlock()
	got := map[string]string{}
	for _, e := range store.history {
		got[e.ID] = e.Outcome
	}
	if got[cur.ID] != "spoken" || got[waiting.ID] != "dropped" {
		t.Errorf("saved history %v", got)
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached in time")
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// hangingSynth is an engine whose synthesis never ends on its own.
type hangingSynth struct{ recSpeaker }

func (h *hangingSynth) Prepare(ctx context.Context, u Utterance) (Audio, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

// TestStopAndCloseReachSynthesis: stop, mute and shutdown end an utterance that is still
// being synthesized, not only one that plays.
func TestStopAndCloseReachSynthesis(t *testing.T) {
	cfg := testConfig()
	cfg.Intervals = [3]time.Duration{}
	cfg.SpeakTimeout = time.Hour
	v, _, _ := newTestVoice(t, cfg, &hangingSynth{})
	go v.Run(context.Background())
	a, _ := v.Submit(context.Background(), Announcement{Text: "one", Priority: Normal})
	waitFor(t, func() bool { return v.Status().Speaking != nil })
	if id, _ := v.Stop(context.Background()); id != a.ID {
		t.Fatalf("Stop returned %q, want %q", id, a.ID)
	}
	waitFor(t, func() bool {
		for _, e := range v.History(0) {
			if e.ID == a.ID {
				return e.Outcome == "stopped"
			}
		}
		return false
	})
	v.Submit(context.Background(), Announcement{Text: "two", Priority: Normal})
	waitFor(t, func() bool { return v.Status().Speaking != nil })
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	v.Close(ctx)
	if took := time.Since(start); took > 2*time.Second {
		t.Fatalf("Close took %v with a hanging synthesis", took)
	}
}

// overlapSpeaker records when each synthesis starts and lets each playback wait for a gate.
type overlapSpeaker struct {
	recSpeaker
	mu        sync.Mutex
	prepared  []string
	playing   string
	preparedW map[string]string // id → the id playing when its synthesis started
}

func (o *overlapSpeaker) Prepare(ctx context.Context, u Utterance) (Audio, error) {
	o.mu.Lock()
	o.prepared = append(o.prepared, u.ID)
	o.preparedW[u.ID] = o.playing
	o.mu.Unlock()
	return nopAudio{}, nil
}

func (o *overlapSpeaker) Play(ctx context.Context, u Utterance, a Audio) error {
	o.mu.Lock()
	o.playing = u.ID
	o.mu.Unlock()
	err := o.recSpeaker.Play(ctx, u, a)
	o.mu.Lock()
	o.playing = ""
	o.mu.Unlock()
	return err
}

// TestNextIsSynthesizedWhileCurrentPlays: the look-ahead synthesis runs during playback.
func TestNextIsSynthesizedWhileCurrentPlays(t *testing.T) {
	cfg := testConfig()
	cfg.Intervals = [3]time.Duration{}
	cfg.SpeakTimeout = time.Hour // only the gate ends a playback
	sp := &overlapSpeaker{recSpeaker: recSpeaker{gate: make(chan struct{}), started: make(chan string, 4)}, preparedW: map[string]string{}}
	v, _, _ := newTestVoice(t, cfg, sp)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go v.Run(ctx)
	first, _ := v.Submit(ctx, Announcement{Text: "one", Priority: Normal})
	<-sp.started
	// Both arrive while the first plays; when the second's turn comes, the third is
	// synthesized during the second's playback.
	second, _ := v.Submit(ctx, Announcement{Text: "two", Priority: Normal})
	third, _ := v.Submit(ctx, Announcement{Text: "three", Priority: Normal})
	sp.gate <- struct{}{}
	<-sp.started
	waitFor(t, func() bool {
		sp.mu.Lock()
		defer sp.mu.Unlock()
		return len(sp.prepared) == 3
	})
	sp.mu.Lock()
	defer sp.mu.Unlock()
	if sp.preparedW[first.ID] != "" {
		t.Errorf("the first was synthesized while %q played", sp.preparedW[first.ID])
	}
	if sp.preparedW[third.ID] != second.ID {
		t.Errorf("the third was synthesized while %q played, want during the second (%s)", sp.preparedW[third.ID], second.ID)
	}
}

// TestHistoryKeepsTheNewestEntries: the history answers the newest HistorySize entries at
// every point, also while its slice holds more (it is trimmed only at twice the bound).
func TestHistoryKeepsTheNewestEntries(t *testing.T) {
	cfg := testConfig()
	cfg.HistorySize = 4
	v, _, _ := newTestVoice(t, cfg, &recSpeaker{})
	if _, err := v.Mute(context.Background(), nil); err != nil { // muted: every announcement is recorded and dropped
		t.Fatal(err)
	}
	for i := 1; i <= 19; i++ {
		if _, err := v.Submit(context.Background(), Announcement{Text: strconv.Itoa(i), Priority: Normal}); err != nil {
			t.Fatal(err)
		}
		got := v.History(0)
		want := min(i, 4)
		if len(got) != want {
			t.Fatalf("after %d announcements: %d entries, want %d", i, len(got), want)
		}
		for k, e := range got { // newest first
			if e.Text != strconv.Itoa(i-k) {
				t.Fatalf("after %d announcements: entry %d is %q, want %q", i, k, e.Text, strconv.Itoa(i-k))
			}
		}
		if last := v.History(2); len(last) != min(i, 2) || last[0].Text != strconv.Itoa(i) {
			t.Fatalf("after %d announcements: History(2) = %+v", i, last)
		}
		v.mu.Lock()
		n := len(v.history)
		v.mu.Unlock()
		if n >= 2*cfg.HistorySize {
			t.Fatalf("after %d announcements the slice holds %d entries", i, n)
		}
	}
}

// BenchmarkSubmitFullHistory: the cost of recording an announcement once the history is
// full (muted, so nothing waits or plays).
//
//	go test -run '^$' -bench SubmitFullHistory -benchmem ./internal/queue
func BenchmarkSubmitFullHistory(b *testing.B) {
	cfg := testConfig()
	v, err := New(cfg, &recSpeaker{}, newMemStore(), time.Now, nil)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := v.Mute(context.Background(), nil); err != nil {
		b.Fatal(err)
	}
	a := Announcement{Text: "x", Priority: Normal}
	for i := 0; i < cfg.HistorySize; i++ {
		v.Submit(context.Background(), a)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := v.Submit(context.Background(), a); err != nil {
			b.Fatal(err)
		}
	}
}

// TestFlushSavesEveryChange: a flush saves the announcements made since the last one and
// those that changed since (one spoken after the flush that saved it as speaking), and
// nothing twice when nothing changed.
func TestFlushSavesEveryChange(t *testing.T) {
	cfg := testConfig()
	cfg.Intervals = [3]time.Duration{}
	sp := &recSpeaker{gate: make(chan struct{}), started: make(chan string, 4)}
	v, _, store := newTestVoice(t, cfg, sp)
	go v.Run(context.Background())
	defer v.Close(context.Background())
	saved := func() map[string]string {
		store.mu.Lock()
		defer store.mu.Unlock()
		got := map[string]string{}
		for _, e := range store.history {
			got[e.ID] = e.Outcome
		}
		return got
	}
	first, _ := v.Submit(context.Background(), Announcement{Text: "für Jörg", Priority: Normal})
	<-sp.started
	v.flush()
	if got := saved(); got[first.ID] != "speaking" || len(got) != 1 {
		t.Fatalf("after the first flush: %v, want %s speaking", got, first.ID)
	}
	sp.gate <- struct{}{}
	waitFor(t, func() bool { h := v.History(10); return len(h) == 1 && h[0].Outcome == "spoken" })
	if _, err := v.Mute(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	muted, _ := v.Submit(context.Background(), Announcement{Text: "an Müller", Priority: Normal})
	v.flush()
	if got := saved(); got[first.ID] != "spoken" || got[muted.ID] != "muted" || len(got) != 2 {
		t.Fatalf("after the second flush: %v, want %s spoken and %s muted", got, first.ID, muted.ID)
	}
	v.mu.Lock()
	unsaved := len(v.unsavedLocked())
	v.mu.Unlock()
	if unsaved != 0 {
		t.Errorf("%d entries left to save after a flush with nothing new", unsaved)
	}
}
