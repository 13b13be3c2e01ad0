// Package queue is where talkd's laws live: it decides, for every announcement, whether it
// is spoken, and in what order, and it serialises writes per plan. It knows nothing of
// HTTP, audio formats or the notation; it runs work through the small Speaker and Store
// interfaces, and its clock is injectable so the laws can be tested by moving time.
//
// The laws, in order: mute > now > quiet hours > rate limit. Whether now passes quiet
// hours is itself a rule ([rules] now_passes_quiet_hours, or the caller's grant).
// Admitted announcements wait in three FIFO lanes (high, normal, low) and are spoken one
// at a time; one that waited longer than MaxWait is dropped as stale.
package queue

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
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

// errCapacity refuses a Config without room for one announcement.
var errCapacity = errors.New("queue capacity must be positive")

// Clock tells the time; tests pass a clock they can move.
type Clock func() time.Time

// Config are the laws' parameters.
type Config struct {
	QuietHours []config.Window
	Intervals  [3]time.Duration // minimum interval between admissions, indexed by Priority
	MaxWait    time.Duration
	// DeferRateLimit lets an announcement the rate limit does not admit yet wait for its
	// slot (within MaxWait) instead of discarding it.
	DeferRateLimit bool
	// NowPassesQuietHours lets a now announcement pass quiet hours, unless its caller's
	// own grant (Announcement.NowPassesQuietHours) says otherwise.
	NowPassesQuietHours bool
	Capacity            int
	HistorySize         int
	// SpeakTimeout bounds Prepare and Play each, so a hanging engine cannot stall the queue.
	SpeakTimeout time.Duration
	// FlushEvery is how often changed history is persisted (batched: no fsync per request).
	FlushEvery time.Duration
}

// ConfigFrom derives the laws' parameters from the daemon configuration (validated by
// config.Load, so the quiet-hours windows parse).
func ConfigFrom(c *config.Config) Config {
	return Config{
		QuietHours:          c.Rules.Windows(),
		Intervals:           [3]time.Duration{c.Rules.Interval("low"), c.Rules.Interval("normal"), c.Rules.Interval("high")},
		MaxWait:             c.Rules.MaxWait.Duration,
		DeferRateLimit:      c.Rules.OnRateLimit != config.RateLimitDiscard,
		NowPassesQuietHours: c.Rules.NowPassesQuietHours,
		Capacity:            c.Rules.QueueSize,
		HistorySize:         c.Rules.HistorySize,
		SpeakTimeout:        2*c.Voice.Timeout.Duration + time.Second,
		FlushEvery:          time.Second,
	}
}

// Announcement is a validated request to speak.
type Announcement struct {
	Text     string
	Lang     string
	Priority Priority
	Provider string
	Voice    string
	Prosody  Prosody
	Now      bool
	Caller   string
	Agent    string
	// Origin is the browser page an announcement came from (its Origin header); "" for
	// agents, scripts and the CLI. A label for the history and the log, never a grant.
	Origin string
	// NowPassesQuietHours is the caller's own grant to pass quiet hours with Now (shared
	// mode, [[clients]] now_passes_quiet_hours); nil = Config.NowPassesQuietHours decides.
	NowPassesQuietHours *bool
}

// Outcome statuses of Submit.
const (
	StatusQueued    = "queued"
	StatusMuted     = "muted"
	StatusDiscarded = "discarded"
)

// Outcomes an announcement ends with, as the history and the log record them.
const (
	OutcomeSpoken = "spoken"
	// OutcomeSynthesized means the audio was made but no player could play it (reason
	// ReasonNoPlayer): nothing was heard.
	OutcomeSynthesized = "synthesized"
	OutcomeFailed      = "failed"
	OutcomeStale       = "stale"
	OutcomeStopped     = "stopped"
	OutcomeDropped     = "dropped"
	OutcomeRejected    = "rejected"
)

// Reasons of a dropped announcement, and of one that was synthesized but not played.
const (
	ReasonCancelled = "cancelled"
	ReasonNoPlayer  = "no_player"
)

// Final reports whether outcome is an end state: everything except queued and speaking.
func Final(outcome string) bool { return outcome != StatusQueued && outcome != "speaking" }

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
	// Deferred is, for a queued announcement under on_rate_limit = "defer", how long it
	// waits for its rate-limit slot before it may be spoken.
	Deferred time.Duration
	// SameAs is set when the same text of the same caller was already waiting: the
	// announcement is spoken once, as that one (ID is then SameAs).
	SameAs string
	// NowRefused is set for a now announcement discarded by quiet hours because this
	// caller may not pass them (rules or its grant).
	NowRefused bool
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
	Voice    string     `json:"voice,omitempty"`
	Caller   string     `json:"caller"`
	Agent    string     `json:"agent,omitempty"`
	Origin   string     `json:"origin,omitempty"` // the browser page, for /speak calls from one
	Outcome  string     `json:"outcome"`          // queued, speaking, spoken, synthesized, failed, stale, stopped, dropped, muted, discarded, rejected
	Reason   string     `json:"reason,omitempty"`
	Received time.Time  `json:"received"`
	Started  *time.Time `json:"started,omitempty"`
	Ended    *time.Time `json:"ended,omitempty"`
}

type item struct {
	u     Utterance
	entry *Entry
	// notBefore is the rate-limit slot of a deferred announcement (zero = at once).
	notBefore time.Time
}

// ReasonDuplicate is the reason of an announcement merged into a waiting one: the same
// text of the same caller with the same priority is spoken once.
const ReasonDuplicate = "duplicate"

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

	// muteSem serialises mute changes and their saving. It is not v.mu: Submit needs v.mu
	// on every announcement, and must never wait for a disk write of the mute state.
	muteSem chan struct{}

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
	// What the next flush saves: every entry of history numbered above savedSeq (made
	// since the last flush; numbers only grow), and the older ones changed since (changed).
	// A map entry per announcement cost about 0.1 µs of every tools/call speak; most
	// announcements are saved once, as they were made (a muted or refused one), so only a
	// spoken one goes into changed when it ends after a flush.
	savedSeq  uint64
	changed   map[*Entry]struct{}
	waiters   map[string]chan struct{} // id → closed when that announcement ends (Wait)
	unlogged  []Entry                  // settled under v.mu, logged by unlock
	wake      chan struct{}
	runDone   chan struct{}
	flushDone chan struct{}
	stopFlush chan struct{}
}

// New restores mute and history from the store and returns a Voice ready to Run.
func New(cfg Config, speaker Speaker, store Store, now Clock, log *slog.Logger) (*Voice, error) {
	if cfg.Capacity <= 0 {
		return nil, errCapacity
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
		changed:   make(map[*Entry]struct{}),
		waiters:   make(map[string]chan struct{}),
		muteSem:   make(chan struct{}, 1),
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
			v.changed[&e] = struct{}{}
		}
		v.history = append(v.history, &e)
	}
	seq, err := store.NextSeq()
	if err != nil {
		return nil, fmt.Errorf("load announcement counter: %w", err)
	}
	v.seq, v.savedSeq = seq, seq
	go v.flushLoop(cfg.FlushEvery)
	return v, nil
}

// Submit applies the laws to one announcement.
func (v *Voice) Submit(ctx context.Context, a Announcement) (Outcome, error) {
	if err := ctx.Err(); err != nil {
		return Outcome{}, err
	}
	var notify bool
	var deferBy time.Duration
	var settled Entry // a copy of an announcement the laws ended at once, for the log
	out, err := func() (Outcome, error) {
		v.mu.Lock()
		defer v.mu.Unlock()
		if v.closed {
			return Outcome{}, ErrClosed
		}
		now := v.now()
		e := v.newEntry(a, now)
		defer func() {
			if Final(e.Outcome) {
				settled = *e
			}
		}()
		if v.mutedLocked(now) {
			e.Outcome = StatusMuted
			return Outcome{Status: StatusMuted, ID: e.ID, MutedUntil: v.mute.Until}, nil
		}
		if w, in := v.quietLocked(now); in && !(a.Now && v.nowPassesQuietLocked(a)) {
			e.Outcome, e.Reason = StatusDiscarded, ReasonQuietHours
			notify = true
			return Outcome{Status: StatusDiscarded, ID: e.ID, Reason: ReasonQuietHours, Window: w.String(), NowRefused: a.Now}, nil
		}
		if !a.Now {
			if same := v.sameWaitingLocked(a); same != nil {
				e.Outcome, e.Reason = OutcomeDropped, ReasonDuplicate
				return Outcome{Status: StatusQueued, ID: same.u.ID, SameAs: same.u.ID, Position: v.positionLocked(same)}, nil
			}
			if last := v.lastAdmitted[a.Priority]; !last.IsZero() {
				if wait := v.cfg.Intervals[a.Priority] - now.Sub(last); wait > 0 {
					if !v.cfg.DeferRateLimit || wait > v.cfg.MaxWait {
						e.Outcome, e.Reason = StatusDiscarded, ReasonRateLimit
						return Outcome{Status: StatusDiscarded, ID: e.ID, Reason: ReasonRateLimit, RetryIn: wait}, nil
					}
					deferBy = wait
				}
			}
		}
		if v.waitingLocked() >= v.cfg.Capacity {
			e.Outcome, e.Reason = "rejected", "queue_full"
			return Outcome{}, ErrQueueFull
		}
		// The slot is taken now, also by a deferred announcement: the next one of this
		// priority is counted from it. A now announcement never moves a slot already
		// given out backwards, or the next one would be spoken right after it.
		if slot := now.Add(deferBy); slot.After(v.lastAdmitted[a.Priority]) {
			v.lastAdmitted[a.Priority] = slot
		}
		it := &item{entry: e, notBefore: now.Add(deferBy), u: Utterance{
			ID: e.ID, Text: a.Text, Lang: a.Lang, Priority: a.Priority, Provider: a.Provider,
			Voice: a.Voice, Prosody: a.Prosody, Caller: a.Caller, Agent: a.Agent, Enqueued: now,
		}}
		v.lanes[a.Priority] = append(v.lanes[a.Priority], it)
		if deferBy == 0 {
			it.notBefore = time.Time{}
		}
		e.Outcome = StatusQueued
		pos := v.positionLocked(it)
		select {
		case v.wake <- struct{}{}:
		default:
		}
		return Outcome{Status: StatusQueued, ID: e.ID, Position: pos, Deferred: deferBy}, nil
	}()
	if settled.ID != "" {
		// Logged after v.mu is released: a burst of discarded announcements must not
		// serialise on stderr while holding the lock every caller needs.
		v.logOutcome(ctx, &settled)
	}
	if notify && v.OnQuietDiscard != nil {
		go v.OnQuietDiscard(a)
	}
	return out, err
}

// nowPassesQuietLocked reports whether a's now may pass quiet hours: its caller's grant
// when it has one, else the rule. Caller holds v.mu.
func (v *Voice) nowPassesQuietLocked(a Announcement) bool {
	if a.NowPassesQuietHours != nil {
		return *a.NowPassesQuietHours
	}
	return v.cfg.NowPassesQuietHours
}

// sameWaitingLocked returns a waiting announcement of a's caller with a's text and
// priority, if any. Caller holds v.mu.
func (v *Voice) sameWaitingLocked(a Announcement) *item {
	for _, it := range v.lanes[a.Priority] {
		if it.u.Caller == a.Caller && it.u.Text == a.Text {
			return it
		}
	}
	return nil
}

// positionLocked is it's place in the speaking order (1 = next), counting every
// announcement of a higher priority and those before it in its own lane.
func (v *Voice) positionLocked(it *item) int {
	p := it.u.Priority
	pos := 0
	for q := High; q > p; q-- {
		pos += len(v.lanes[q])
	}
	for i, o := range v.lanes[p] {
		if o == it {
			return pos + i + 1
		}
	}
	return pos + len(v.lanes[p])
}

// logOutcome writes the one info line of an announcement's end: who, what priority, what
// became of it and why. The text is added only at debug level, since announcements may
// carry what a user would not want in a log file; tokens never reach the queue at all.
//
// The record goes to the handler directly, without a caller's program counter: Logger's
// methods walk the stack for it (runtime.Callers, about 1.5 µs) on every line, although
// talkd's handler never prints a source location, and this line is written once per
// announcement, on the request's path.
func (v *Voice) logOutcome(ctx context.Context, e *Entry) {
	h := v.log.Handler()
	if !h.Enabled(ctx, slog.LevelInfo) {
		return
	}
	r := slog.NewRecord(time.Now(), slog.LevelInfo, "announcement", 0)
	r.AddAttrs(slog.String("id", e.ID), slog.String("caller", e.Caller))
	if e.Agent != "" {
		r.AddAttrs(slog.String("agent", e.Agent))
	}
	if e.Origin != "" {
		r.AddAttrs(slog.String("origin", e.Origin))
	}
	r.AddAttrs(slog.String("priority", e.Priority), slog.String("outcome", e.Outcome))
	if e.Reason != "" {
		r.AddAttrs(slog.String("reason", e.Reason))
	}
	if h.Enabled(ctx, slog.LevelDebug) {
		r.AddAttrs(slog.String("text", e.Text))
	}
	_ = h.Handle(ctx, r)
}

// settleLocked records that e reached its final outcome: it is saved with the next flush,
// logged once v.mu is released (unlock), and every Wait for it returns. Caller holds v.mu
// and releases it with unlock.
func (v *Voice) settleLocked(e *Entry) {
	v.touch(e)
	v.unlogged = append(v.unlogged, *e)
	if ch, ok := v.waiters[e.ID]; ok {
		close(ch)
		delete(v.waiters, e.ID)
	}
}

// unlock releases v.mu and then writes the outcome lines of the announcements settled
// under it: a cancel or mute settles up to the queue's capacity at once, and no caller
// must wait for v.mu while they go to stderr.
func (v *Voice) unlock() {
	settled := v.unlogged
	v.unlogged = nil
	v.mu.Unlock()
	for i := range settled {
		v.logOutcome(context.Background(), &settled[i])
	}
}

// newEntry numbers an announcement and records it in the history. Caller holds v.mu.
func (v *Voice) newEntry(a Announcement, now time.Time) *Entry {
	v.seq++
	e := &Entry{
		Seq: v.seq, ID: entryID(v.seq), Text: a.Text, Lang: a.Lang,
		Priority: a.Priority.String(), Provider: a.Provider, Voice: a.Voice, Caller: a.Caller, Agent: a.Agent,
		Origin: a.Origin, Received: now,
	}
	v.history = append(v.history, e)
	// The history keeps its newest HistorySize entries (recentLocked). Dropping the oldest
	// one per announcement copied the whole slice every time once it was full (the largest
	// of talkd's own costs per tools/call under load); trimming only when the slice holds
	// twice the bound copies once per HistorySize announcements.
	if size := v.cfg.HistorySize; len(v.history) >= 2*size {
		over := len(v.history) - size
		for _, old := range v.history[:over] {
			delete(v.changed, old)
		}
		v.history = append(v.history[:0:0], v.history[over:]...)
	}
	return e // saved with the next flush: its number is above savedSeq
}

// entryID is the id of announcement number seq, "a" and the number, made with one
// allocation ("a" + strconv.FormatUint takes two, on every announcement).
func entryID(seq uint64) string {
	var buf [21]byte
	return string(strconv.AppendUint(append(buf[:0], 'a'), seq, 10))
}

// recentLocked returns the history's newest HistorySize entries, oldest first. Caller holds
// v.mu.
func (v *Voice) recentLocked() []*Entry {
	if over := len(v.history) - v.cfg.HistorySize; over > 0 {
		return v.history[over:]
	}
	return v.history
}

// touch marks e to be saved with the next flush. Caller holds v.mu.
func (v *Voice) touch(e *Entry) {
	if e.Seq <= v.savedSeq {
		v.changed[e] = struct{}{}
	}
}

// unsavedLocked returns the entries the next flush saves: those made since the last one
// (the end of history) and those changed since. Caller holds v.mu.
func (v *Voice) unsavedLocked() []*Entry {
	start := len(v.history)
	for start > 0 && v.history[start-1].Seq > v.savedSeq {
		start--
	}
	if len(v.changed) == 0 {
		return v.history[start:]
	}
	out := make([]*Entry, 0, len(v.history)-start+len(v.changed))
	out = append(out, v.history[start:]...)
	for e := range v.changed {
		out = append(out, e)
	}
	return out
}

// mutedLocked reports whether the voice is muted now, ending an expired mute.
func (v *Voice) mutedLocked(now time.Time) bool {
	if !v.mute.Muted {
		return false
	}
	if v.mute.Until != nil && !now.Before(*v.mute.Until) {
		// Nothing is written: a saved mute whose end has passed is expired again when it
		// is loaded, so Submit never waits for the disk.
		v.mute = MuteState{}
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

// lockMute takes the right to change the mute state, or gives up when ctx ends first.
func (v *Voice) lockMute(ctx context.Context) error {
	select {
	case v.muteSem <- struct{}{}:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("waiting for another mute change: %w", ctx.Err())
	}
}

func (v *Voice) unlockMute() { <-v.muteSem }

// Mute silences the voice until the given time (nil = until Unmute): the current utterance
// stops and everything waiting is dropped. The state is saved before Mute returns, so it
// survives a crash; the save runs outside the lock Submit needs (mute changes are
// serialised by their own), so announcements are never held up by the disk.
func (v *Voice) Mute(ctx context.Context, until *time.Time) (MuteState, error) {
	if err := v.lockMute(ctx); err != nil {
		return MuteState{}, err
	}
	defer v.unlockMute()
	state := MuteState{Muted: true, Until: until}
	if err := v.store.SaveMute(state); err != nil {
		v.mu.Lock()
		defer v.mu.Unlock()
		return v.mute, fmt.Errorf("save mute: %w", err)
	}
	v.mu.Lock()
	defer v.unlock()
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

// Unmute lets announcements through again; like Mute, it is saved before it returns.
func (v *Voice) Unmute(ctx context.Context) (MuteState, error) {
	if err := v.lockMute(ctx); err != nil {
		return MuteState{}, err
	}
	defer v.unlockMute()
	if err := v.store.SaveMute(MuteState{}); err != nil {
		v.mu.Lock()
		defer v.mu.Unlock()
		return v.mute, fmt.Errorf("save mute: %w", err)
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	v.mute = MuteState{}
	return v.mute, nil
}

// Stop ends the current utterance, if any, and returns its id ("" when silent).
func (v *Voice) Stop(ctx context.Context) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.current == nil {
		return "", nil
	}
	v.stopCurrent()
	return v.current.u.ID, nil
}

// CancelRequest says which waiting announcements Cancel drops.
type CancelRequest struct {
	// ID drops this one announcement; "" drops every waiting one that matches.
	ID string
	// Caller is who asks; unless All is set, only its own announcements are dropped.
	Caller string
	// All drops announcements of every caller (the control grant decides, not the queue).
	All bool
}

// ErrNotWaiting means Cancel was given an id that is not waiting (unknown, another
// caller's, already speaking or already ended).
var ErrNotWaiting = errors.New("the announcement is not waiting")

// Cancel drops waiting announcements without muting and returns their ids, oldest first.
// The utterance being spoken is left alone (Stop ends it).
func (v *Voice) Cancel(ctx context.Context, r CancelRequest) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	v.mu.Lock()
	defer v.unlock()
	var dropped []*Entry
	for p := range v.lanes {
		kept := v.lanes[p][:0]
		for _, it := range v.lanes[p] {
			match := (r.All || it.u.Caller == r.Caller) && (r.ID == "" || it.u.ID == r.ID)
			if !match {
				kept = append(kept, it)
				continue
			}
			it.entry.Outcome, it.entry.Reason = OutcomeDropped, ReasonCancelled
			dropped = append(dropped, it.entry)
		}
		clear(v.lanes[p][len(kept):])
		v.lanes[p] = kept
	}
	if r.ID != "" && len(dropped) == 0 {
		why := "unknown"
		for _, e := range v.recentLocked() {
			if e.ID == r.ID {
				why = e.Outcome
			}
		}
		if why != "unknown" && !r.All && v.entryCaller(r.ID) != r.Caller {
			why = "another caller's"
		}
		return nil, fmt.Errorf("%w: %s is %s", ErrNotWaiting, r.ID, why)
	}
	slices.SortFunc(dropped, func(a, b *Entry) int { return cmp.Compare(a.Seq, b.Seq) })
	ids := make([]string, len(dropped))
	for i, e := range dropped {
		v.settleLocked(e)
		ids[i] = e.ID
	}
	return ids, nil
}

// entryCaller is the caller of the announcement id in the recent history. Caller holds v.mu.
func (v *Voice) entryCaller(id string) string {
	for _, e := range v.recentLocked() {
		if e.ID == id {
			return e.Caller
		}
	}
	return ""
}

// ErrUnknownAnnouncement means Wait was given an id the recent history does not hold.
var ErrUnknownAnnouncement = errors.New("no such announcement in the recent history")

// Wait blocks until the announcement id has reached its final outcome (spoken, failed,
// dropped, …) or ctx ends, and returns its history entry as it is then; with ctx ended
// the entry is returned as well, still queued or speaking, together with ctx's error.
func (v *Voice) Wait(ctx context.Context, id string) (Entry, error) {
	v.mu.Lock()
	var e *Entry
	recent := v.recentLocked()
	for i := len(recent) - 1; i >= 0; i-- {
		if recent[i].ID == id {
			e = recent[i]
			break
		}
	}
	if e == nil {
		v.mu.Unlock()
		return Entry{}, fmt.Errorf("%w: %q", ErrUnknownAnnouncement, id)
	}
	if Final(e.Outcome) {
		out := *e
		v.mu.Unlock()
		return out, nil
	}
	ch, ok := v.waiters[id]
	if !ok {
		ch = make(chan struct{})
		v.waiters[id] = ch
	}
	v.mu.Unlock()
	select {
	case <-ch:
	case <-ctx.Done():
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	return *e, ctx.Err()
}

func (v *Voice) dropWaitingLocked(reason string) {
	for p := range v.lanes {
		for _, it := range v.lanes[p] {
			it.entry.Outcome, it.entry.Reason = OutcomeDropped, reason
			v.settleLocked(it.entry)
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
