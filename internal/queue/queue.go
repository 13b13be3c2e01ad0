// Package queue is where talkd's laws live: it decides, for every announcement, whether it
// is spoken, and in what order, and it serialises writes per plan. It knows nothing of
// HTTP, audio formats or the notation; it runs work through the small Speaker and Store
// interfaces, and its clock is injectable so the laws can be tested by moving time.
//
// The laws, in order: mute > now > quiet hours > rate limit. Admitted announcements wait in
// three FIFO lanes (high, normal, low) and are spoken one at a time; one that waited longer
// than MaxWait is dropped as stale.
package queue

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"talkd/internal/config"
)

// Errors of Submit that are not outcomes.
var (
	// ErrQueueFull means the bounded queue has no room; callers should retry later.
	ErrQueueFull = errors.New("the announcement queue is full")
	// ErrClosed means the voice is shutting down.
	ErrClosed = errors.New("the voice is shutting down")
)

// Clock tells the time; tests pass a clock they can move.
type Clock func() time.Time

// Config are the laws' parameters.
type Config struct {
	QuietHours  []config.Window
	Intervals   [3]time.Duration // minimum interval between admissions, indexed by Priority
	MaxWait     time.Duration
	Capacity    int
	HistorySize int
	// SpeakTimeout bounds Prepare and Play each, so a hanging engine cannot stall the queue.
	SpeakTimeout time.Duration
	// FlushEvery is how often changed history is persisted (batched: no fsync per request).
	FlushEvery time.Duration
}

// ConfigFrom derives the laws' parameters from the daemon configuration (validated by
// config.Load, so the quiet-hours windows parse).
func ConfigFrom(c *config.Config) Config {
	return Config{
		QuietHours:   c.Rules.Windows(),
		Intervals:    [3]time.Duration{c.Rules.Interval("low"), c.Rules.Interval("normal"), c.Rules.Interval("high")},
		MaxWait:      c.Rules.MaxWait.Duration,
		Capacity:     c.Rules.QueueSize,
		HistorySize:  c.Rules.HistorySize,
		SpeakTimeout: 2*c.Voice.Timeout.Duration + time.Second,
		FlushEvery:   time.Second,
	}
}

// Announcement is a validated request to speak.
type Announcement struct {
	Text     string
	Lang     string
	Priority Priority
	Provider string
	Now      bool
	Caller   string
	Agent    string
}

// Outcome statuses of Submit.
const (
	StatusQueued    = "queued"
	StatusMuted     = "muted"
	StatusDiscarded = "discarded"
)

// Reasons of a discarded announcement.
const (
	ReasonQuietHours = "quiet_hours"
	ReasonRateLimit  = "rate_limit"
)

// Outcome is the answer of the laws to one announcement.
type Outcome struct {
	Status     string // StatusQueued, StatusMuted or StatusDiscarded
	ID         string
	Position   int           // queued: 1 = spoken next
	Reason     string        // discarded: ReasonQuietHours or ReasonRateLimit
	MutedUntil *time.Time    // muted: nil = until unmuted
	RetryIn    time.Duration // rate_limit: when the same priority would pass again
	Window     string        // quiet_hours: the window that applies
}

// MuteState is the persisted mute.
type MuteState struct {
	Muted bool       `json:"muted"`
	Until *time.Time `json:"until,omitempty"` // nil = until unmuted
}

// Store persists mute and history. Mute is saved synchronously (it must survive a crash);
// history is saved in batches.
type Store interface {
	LoadMute() (MuteState, error)
	SaveMute(MuteState) error
	LoadHistory(limit int) ([]Entry, error)
	SaveHistory(changed []Entry, keep int) error
	NextSeq() (uint64, error) // the first free announcement number after a restart
}

// Entry is one announcement in the history, updated as it moves through the voice.
type Entry struct {
	Seq      uint64     `json:"-"`
	ID       string     `json:"id"`
	Text     string     `json:"text"`
	Lang     string     `json:"lang"`
	Priority string     `json:"priority"`
	Provider string     `json:"provider,omitempty"`
	Caller   string     `json:"caller"`
	Agent    string     `json:"agent,omitempty"`
	Outcome  string     `json:"outcome"` // queued, speaking, spoken, failed, stale, stopped, dropped, muted, discarded, rejected
	Reason   string     `json:"reason,omitempty"`
	Received time.Time  `json:"received"`
	Started  *time.Time `json:"started,omitempty"`
	Ended    *time.Time `json:"ended,omitempty"`
}

type item struct {
	u     Utterance
	entry *Entry
}

// Voice applies the laws and drives one Speaker. Create it with New, start Run in a
// goroutine, and Close it on shutdown.
type Voice struct {
	cfg     Config
	speaker Speaker
	store   Store
	now     Clock
	log     *slog.Logger

	// OnQuietDiscard, if set, is called (in its own goroutine) for every announcement
	// discarded by quiet hours, so the daemon can show a desktop notification instead.
	OnQuietDiscard func(Announcement)

	mu           sync.Mutex
	closed       bool
	mute         MuteState
	lanes        [3][]*item
	lastAdmitted [3]time.Time
	seq          uint64
	current      *item
	stopCurrent  context.CancelFunc // ends the current utterance, in synthesis or playing
	cancelAhead  context.CancelFunc // ends the look-ahead synthesis of the next one
	cancelRun    context.CancelFunc // ends Run (Close past its deadline)
	history      []*Entry           // oldest first; the newest cfg.HistorySize count (recentLocked)
	dirty        map[*Entry]struct{}
	wake         chan struct{}
	runDone      chan struct{}
	flushDone    chan struct{}
	stopFlush    chan struct{}
}

// New restores mute and history from the store and returns a Voice ready to Run.
func New(cfg Config, speaker Speaker, store Store, now Clock, log *slog.Logger) (*Voice, error) {
	if cfg.Capacity <= 0 {
		return nil, errors.New("queue capacity must be positive")
	}
	if cfg.HistorySize <= 0 {
		cfg.HistorySize = 500
	}
	if cfg.FlushEvery <= 0 {
		cfg.FlushEvery = time.Second
	}
	if now == nil {
		now = time.Now
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	v := &Voice{
		cfg: cfg, speaker: speaker, store: store, now: now, log: log,
		dirty:     make(map[*Entry]struct{}),
		wake:      make(chan struct{}, 1),
		runDone:   make(chan struct{}),
		flushDone: make(chan struct{}),
		stopFlush: make(chan struct{}),
	}
	mute, err := store.LoadMute()
	if err != nil {
		return nil, fmt.Errorf("load mute state: %w", err)
	}
	v.mute = mute
	hist, err := store.LoadHistory(cfg.HistorySize)
	if err != nil {
		return nil, fmt.Errorf("load history: %w", err)
	}
	for i := range hist {
		e := hist[i]
		// An announcement that was waiting or speaking when the daemon died was never
		// finished; say so instead of leaving it "queued" forever.
		if e.Outcome == "queued" || e.Outcome == "speaking" {
			e.Outcome, e.Reason = "dropped", "restart"
			v.dirty[&e] = struct{}{}
		}
		v.history = append(v.history, &e)
	}
	seq, err := store.NextSeq()
	if err != nil {
		return nil, fmt.Errorf("load announcement counter: %w", err)
	}
	v.seq = seq
	go v.flushLoop()
	return v, nil
}

// Submit applies the laws to one announcement.
func (v *Voice) Submit(ctx context.Context, a Announcement) (Outcome, error) {
	if err := ctx.Err(); err != nil {
		return Outcome{}, err
	}
	var notify bool
	out, err := func() (Outcome, error) {
		v.mu.Lock()
		defer v.mu.Unlock()
		if v.closed {
			return Outcome{}, ErrClosed
		}
		now := v.now()
		e := v.newEntry(a, now)
		if v.mutedLocked(now) {
			e.Outcome = StatusMuted
			return Outcome{Status: StatusMuted, ID: e.ID, MutedUntil: v.mute.Until}, nil
		}
		if !a.Now {
			if w, in := v.quietLocked(now); in {
				e.Outcome, e.Reason = StatusDiscarded, ReasonQuietHours
				notify = true
				return Outcome{Status: StatusDiscarded, ID: e.ID, Reason: ReasonQuietHours, Window: w.String()}, nil
			}
			if last := v.lastAdmitted[a.Priority]; !last.IsZero() {
				if wait := v.cfg.Intervals[a.Priority] - now.Sub(last); wait > 0 {
					e.Outcome, e.Reason = StatusDiscarded, ReasonRateLimit
					return Outcome{Status: StatusDiscarded, ID: e.ID, Reason: ReasonRateLimit, RetryIn: wait}, nil
				}
			}
		}
		if v.waitingLocked() >= v.cfg.Capacity {
			e.Outcome, e.Reason = "rejected", "queue_full"
			return Outcome{}, ErrQueueFull
		}
		v.lastAdmitted[a.Priority] = now
		it := &item{entry: e, u: Utterance{
			ID: e.ID, Text: a.Text, Lang: a.Lang, Priority: a.Priority, Provider: a.Provider,
			Caller: a.Caller, Agent: a.Agent, Enqueued: now,
		}}
		v.lanes[a.Priority] = append(v.lanes[a.Priority], it)
		e.Outcome = StatusQueued
		pos := 0
		for p := High; p >= a.Priority; p-- {
			pos += len(v.lanes[p])
		}
		select {
		case v.wake <- struct{}{}:
		default:
		}
		return Outcome{Status: StatusQueued, ID: e.ID, Position: pos}, nil
	}()
	if notify && v.OnQuietDiscard != nil {
		go v.OnQuietDiscard(a)
	}
	return out, err
}

// newEntry numbers an announcement and records it in the history. Caller holds v.mu.
func (v *Voice) newEntry(a Announcement, now time.Time) *Entry {
	v.seq++
	e := &Entry{
		Seq: v.seq, ID: "a" + strconv.FormatUint(v.seq, 10), Text: a.Text, Lang: a.Lang,
		Priority: a.Priority.String(), Provider: a.Provider, Caller: a.Caller, Agent: a.Agent,
		Received: now,
	}
	v.history = append(v.history, e)
	// The history keeps its newest HistorySize entries (recentLocked). Dropping the oldest
	// one per announcement copied the whole slice every time once it was full (the largest
	// of talkd's own costs per tools/call under load); trimming only when the slice holds
	// twice the bound copies once per HistorySize announcements.
	if size := v.cfg.HistorySize; len(v.history) >= 2*size {
		over := len(v.history) - size
		for _, old := range v.history[:over] {
			delete(v.dirty, old)
		}
		v.history = append(v.history[:0:0], v.history[over:]...)
	}
	v.dirty[e] = struct{}{}
	return e
}

// recentLocked returns the history's newest HistorySize entries, oldest first. Caller holds
// v.mu.
func (v *Voice) recentLocked() []*Entry {
	if over := len(v.history) - v.cfg.HistorySize; over > 0 {
		return v.history[over:]
	}
	return v.history
}

func (v *Voice) touch(e *Entry) { v.dirty[e] = struct{}{} }

// mutedLocked reports whether the voice is muted now, ending an expired mute.
func (v *Voice) mutedLocked(now time.Time) bool {
	if !v.mute.Muted {
		return false
	}
	if v.mute.Until != nil && !now.Before(*v.mute.Until) {
		v.mute = MuteState{}
		if err := v.store.SaveMute(v.mute); err != nil {
			v.log.Error("save expired mute", "err", err)
		}
		return false
	}
	return true
}

func (v *Voice) quietLocked(now time.Time) (config.Window, bool) {
	for _, w := range v.cfg.QuietHours {
		if w.Contains(now) {
			return w, true
		}
	}
	return config.Window{}, false
}

func (v *Voice) waitingLocked() int {
	return len(v.lanes[0]) + len(v.lanes[1]) + len(v.lanes[2])
}

// Mute silences the voice until the given time (nil = until Unmute): the current utterance
// stops and everything waiting is dropped. The state is saved before Mute returns.
func (v *Voice) Mute(until *time.Time) (MuteState, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	state := MuteState{Muted: true, Until: until}
	if err := v.store.SaveMute(state); err != nil {
		return v.mute, fmt.Errorf("save mute: %w", err)
	}
	v.mute = state
	v.dropWaitingLocked("muted")
	if v.stopCurrent != nil {
		v.stopCurrent()
	}
	if v.cancelAhead != nil {
		v.cancelAhead()
	}
	return state, nil
}

// Unmute lets announcements through again.
func (v *Voice) Unmute() (MuteState, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if err := v.store.SaveMute(MuteState{}); err != nil {
		return v.mute, fmt.Errorf("save mute: %w", err)
	}
	v.mute = MuteState{}
	return v.mute, nil
}

// Stop ends the current utterance, if any, and returns its id ("" when silent).
func (v *Voice) Stop() string {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.current == nil {
		return ""
	}
	v.stopCurrent()
	return v.current.u.ID
}

func (v *Voice) dropWaitingLocked(reason string) {
	for p := range v.lanes {
		for _, it := range v.lanes[p] {
			it.entry.Outcome, it.entry.Reason = "dropped", reason
			v.touch(it.entry)
		}
		v.lanes[p] = nil
	}
}

// Status is a snapshot for GET /status.
type Status struct {
	Mute       MuteState
	Quiet      bool
	QuietNow   string // the active window, if any
	Waiting    int
	Capacity   int
	Speaking   *Entry
	Intervals  [3]time.Duration
	QuietHours []string
}

// Status reports the voice's state now.
func (v *Voice) Status() Status {
	v.mu.Lock()
	defer v.mu.Unlock()
	now := v.now()
	v.mutedLocked(now)
	s := Status{Mute: v.mute, Waiting: v.waitingLocked(), Capacity: v.cfg.Capacity, Intervals: v.cfg.Intervals}
	if w, in := v.quietLocked(now); in {
		s.Quiet, s.QuietNow = true, w.String()
	}
	for _, w := range v.cfg.QuietHours {
		s.QuietHours = append(s.QuietHours, w.String())
	}
	if v.current != nil {
		e := *v.current.entry
		s.Speaking = &e
	}
	return s
}

// History returns up to limit recent entries, newest first.
func (v *Voice) History(limit int) []Entry {
	v.mu.Lock()
	defer v.mu.Unlock()
	recent := v.recentLocked()
	if limit <= 0 || limit > len(recent) {
		limit = len(recent)
	}
	out := make([]Entry, 0, limit)
	for i := len(recent) - 1; i >= 0 && len(out) < limit; i-- {
		out = append(out, *recent[i])
	}
	return out
}
