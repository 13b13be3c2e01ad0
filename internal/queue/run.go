package queue

import (
	"context"
	"errors"
	"slices"
	"time"
)

// prepared is an utterance on its way to the speaker: its synthesis runs under its own
// context, which Stop, Mute and Close cancel whether it is still being synthesized or
// already playing.
type prepared struct {
	it     *item
	ctx    context.Context
	cancel context.CancelFunc
	audio  Audio
	err    error
	done   chan struct{}
}

// Run speaks admitted announcements one at a time until ctx ends or Close is called.
// While one utterance plays, the next one in line is synthesized, so engines that are slow
// to start do not add their start-up time between two announcements; if the line changes
// meanwhile (a higher priority arrives, mute drops it) that audio is discarded.
func (v *Voice) Run(ctx context.Context) {
	defer close(v.runDone)
	ctx, cancelAll := context.WithCancel(ctx)
	defer cancelAll()
	v.mu.Lock()
	v.cancelRun = cancelAll
	v.mu.Unlock()
	var ahead *prepared
	defer func() { discard(ahead) }()
	for {
		it := v.next(ctx)
		if it == nil {
			return
		}
		var cur *prepared
		if ahead != nil && ahead.it == it {
			cur = ahead
		} else {
			discard(ahead)
			cur = v.prepare(ctx, it)
		}
		ahead = nil
		v.setAhead(nil)
		if !v.begin(it, cur.cancel) {
			discard(cur)
			continue
		}
		<-cur.done
		if cur.err != nil {
			switch {
			case errors.Is(cur.ctx.Err(), context.Canceled):
				v.finish(it, OutcomeStopped, "")
			default:
				v.finish(it, OutcomeFailed, cur.err.Error())
				v.log.Warn("synthesis failed", "id", it.u.ID, "err", cur.err)
			}
			discard(cur)
			continue
		}
		if peek := v.peek(); peek != nil {
			ahead = v.prepare(ctx, peek)
			v.setAhead(ahead.cancel)
		}
		playCtx, cancel := context.WithTimeout(cur.ctx, v.speakTimeout())
		err := v.speaker.Play(playCtx, it.u, cur.audio)
		stopped := playCtx.Err() != nil
		timedOut := errors.Is(playCtx.Err(), context.DeadlineExceeded)
		cancel()
		discard(cur)
		switch {
		case timedOut:
			v.finish(it, OutcomeFailed, "timeout")
			v.log.Warn("playback timed out", "id", it.u.ID)
		case stopped:
			v.finish(it, OutcomeStopped, "")
		case errors.Is(err, ErrNoPlayer):
			// Made but not heard: never recorded as spoken.
			v.finish(it, OutcomeSynthesized, ReasonNoPlayer)
		case err != nil:
			v.finish(it, OutcomeFailed, err.Error())
			v.log.Warn("playback failed", "id", it.u.ID, "err", err)
		default:
			v.finish(it, OutcomeSpoken, "")
		}
	}
}

// discard cancels a preparation, waits for it, and releases its audio.
func discard(p *prepared) {
	if p == nil {
		return
	}
	p.cancel()
	<-p.done
	if p.audio != nil {
		_ = p.audio.Close()
	}
}

func (v *Voice) prepare(ctx context.Context, it *item) *prepared {
	ictx, cancel := context.WithCancel(ctx)
	p := &prepared{it: it, ctx: ictx, cancel: cancel, done: make(chan struct{})}
	timeout := v.speakTimeout()
	go func() {
		defer close(p.done)
		pctx, cancelTimeout := context.WithTimeout(ictx, timeout)
		defer cancelTimeout()
		p.audio, p.err = v.speaker.Prepare(pctx, it.u)
		if p.err == nil && pctx.Err() != nil {
			p.err = pctx.Err()
		}
	}()
	return p
}

// setAhead remembers how to cancel the look-ahead synthesis, so Mute and Close can end it.
func (v *Voice) setAhead(cancel context.CancelFunc) {
	v.mu.Lock()
	v.cancelAhead = cancel
	v.mu.Unlock()
}

// next blocks until an announcement is due and takes it out of its lane, dropping stale
// ones on the way. It returns nil when the voice is closing.
func (v *Voice) next(ctx context.Context) *item {
	for {
		v.mu.Lock()
		if v.closed {
			v.mu.Unlock()
			return nil
		}
		it, due := v.popLocked()
		v.unlock() // logs the stale ones popLocked settled
		if it != nil {
			return it
		}
		var timer *time.Timer
		var slot <-chan time.Time
		if !due.IsZero() {
			// A deferred announcement's slot: wake up for it.
			timer = time.NewTimer(max(due.Sub(v.now()), time.Millisecond))
			slot = timer.C
		}
		select {
		case <-ctx.Done():
			return nil
		case <-v.wake:
		case <-slot:
		}
		if timer != nil {
			timer.Stop()
		}
	}
}

// popLocked takes the first fresh item that is due, from the highest lane that has one.
// Deferred items wait for their rate-limit slot without holding up what is due behind
// them in their lane (a now announcement passes the rate limit) or in lower lanes. When
// only deferred items wait, it returns nil and the earliest slot.
func (v *Voice) popLocked() (*item, time.Time) {
	now := v.now()
	var due time.Time
	for p := High; p >= Low; p-- {
		for i := 0; i < len(v.lanes[p]); {
			it := v.lanes[p][i]
			if it.notBefore.After(now) {
				if due.IsZero() || it.notBefore.Before(due) {
					due = it.notBefore
				}
				i++
				continue
			}
			if i == 0 {
				v.lanes[p][0] = nil
				v.lanes[p] = v.lanes[p][1:]
			} else {
				v.lanes[p] = slices.Delete(v.lanes[p], i, i+1)
			}
			if v.cfg.MaxWait > 0 && now.Sub(it.u.Enqueued) > v.cfg.MaxWait {
				it.entry.Outcome, it.entry.Reason = OutcomeStale, "waited longer than "+v.cfg.MaxWait.String()
				v.settleLocked(it.entry)
				continue
			}
			return it, time.Time{}
		}
	}
	return nil, due
}

// peek returns the item that would be popped next, without taking it.
func (v *Voice) peek() *item {
	v.mu.Lock()
	defer v.mu.Unlock()
	for p := High; p >= Low; p-- {
		if len(v.lanes[p]) > 0 {
			return v.lanes[p][0]
		}
	}
	return nil
}

// begin marks it as speaking; it returns false when the item was dropped meanwhile
// (muted between pop and play).
func (v *Voice) begin(it *item, cancel context.CancelFunc) bool {
	v.mu.Lock()
	defer v.unlock()
	if v.closed || v.mutedLocked(v.now()) {
		it.entry.Outcome, it.entry.Reason = OutcomeDropped, "muted"
		if v.closed {
			it.entry.Reason = "shutdown"
		}
		v.settleLocked(it.entry)
		return false
	}
	now := v.now()
	it.entry.Outcome, it.entry.Started = "speaking", &now
	v.touch(it.entry)
	v.current, v.stopCurrent = it, cancel
	return true
}

func (v *Voice) finish(it *item, outcome, reason string) {
	v.mu.Lock()
	defer v.unlock()
	now := v.now()
	it.entry.Outcome, it.entry.Reason, it.entry.Ended = outcome, reason, &now
	v.settleLocked(it.entry)
	if v.current == it {
		v.current, v.stopCurrent = nil, nil
	}
}

// flushLoop persists changed history entries in batches, off the request path.
func (v *Voice) flushLoop(every time.Duration) {
	defer close(v.flushDone)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			v.flush()
		case <-v.stopFlush:
			v.flush()
			return
		}
	}
}

func (v *Voice) flush() {
	v.mu.Lock()
	unsaved := v.unsavedLocked()
	if len(unsaved) == 0 {
		v.mu.Unlock()
		return
	}
	batch := make([]Entry, 0, len(unsaved))
	for _, e := range unsaved {
		batch = append(batch, *e)
	}
	clear(v.changed)
	v.savedSeq = v.seq
	keep := v.cfg.HistorySize
	v.mu.Unlock()
	if err := v.store.SaveHistory(batch, keep); err != nil {
		v.log.Error("save history", "err", err)
		v.mu.Lock()
		for _, e := range v.recentLocked() {
			for _, b := range batch {
				if e.Seq == b.Seq {
					v.changed[e] = struct{}{}
				}
			}
		}
		v.mu.Unlock()
	}
}

// Close stops admitting, lets the current utterance finish until ctx ends (then stops it),
// records what was still waiting as dropped, and saves the history. Run must have been
// started; Close waits for it to return.
func (v *Voice) Close(ctx context.Context) error {
	v.mu.Lock()
	if v.closed {
		v.mu.Unlock()
		return nil
	}
	v.closed = true
	v.dropWaitingLocked("shutdown")
	v.unlock()
	select {
	case v.wake <- struct{}{}:
	default:
	}
	select {
	case <-v.runDone:
	case <-ctx.Done():
		v.mu.Lock()
		if v.cancelRun != nil {
			v.cancelRun()
		}
		v.mu.Unlock()
		<-v.runDone
	}
	close(v.stopFlush)
	<-v.flushDone
	return nil
}
