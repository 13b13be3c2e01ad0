package main

import (
	"context"
	"log/slog"
	"net/http"
	"runtime/debug"
	"sync/atomic"
	"time"

	"talkd/internal/api"
)

// idleRelease is how long the daemon must have answered no request before the memory
// left over by the last burst of work is handed back to the operating system. It is
// longer than the notation engine's memo trim (2 s after a plan call, internal/werkbaum
// memoIdle), so the parsed plans that trim drops are returned too.
const idleRelease = 3 * time.Second

// modelKeep is how long the idle daemon keeps the analysis of the plan texts it worked on
// last (the engine's memos, each trimmed to the current text of each plan it worked on
// last, js/05_text.js _trimMemo) before it drops them and releases memory again. An agent
// writes, thinks for seconds and writes again; the next write starts from that analysis,
// and without it makes the old text's again, most of a write's time on a large plan. What
// it holds is the analysis of up to four plans within 1 Mi characters (about 50 bytes of
// heap per character of their texts) for the agents' pause; once they have stopped, the
// daemon is as small as before (docs/bench-plans.md, "A write after a pause").
const modelKeep = 20 * time.Second

// memoryReleaser returns the garbage of the last work to the operating system once the
// daemon has been idle for a while, so that an idle talkd is small.
//
// Before it releases, it has the daemon drop what is cheap to rebuild (shed, shedIdle).
// An idle period has a second stage (keep after the last work): the daemon drops what an agent
// that only paused would want kept (drop, dropModels), and releases again.
//
// Without it an idle daemon keeps what its last requests left behind: the Go runtime
// collects only when the heap has grown by GOGC percent (or after two minutes), and
// returns freed pages gradually. After one werkbaum_inspect that was 3–5 MB of the daemon's
// resident memory (docs/bench-memory.md). debug.FreeOSMemory (a full collection and a
// release of every free page) costs a few milliseconds of CPU, so it runs once per idle
// period, never per request, and never while a request is being answered. An idle daemon
// does not wake up for it: the watcher sleeps on a channel until a request arrives.
type memoryReleaser struct {
	delay  time.Duration
	log    *slog.Logger
	active atomic.Int64  // requests being answered
	done   atomic.Uint64 // requests answered so far
	// worked counts the answers that were work (not a held poll's) and the plan
	// follower's work: the second stage is due keep after the last of them. An open
	// editor's feed polls are answered every 25 s or less, several editors' more often,
	// and must not keep an agent's analysis while no agent works.
	worked  atomic.Uint64
	dirty   atomic.Bool   // a request was answered since the last release
	wake    chan struct{} // the first request after a release wakes the watcher
	release func()        // debug.FreeOSMemory; tests count the calls instead
	// shed drops what the daemon's parts keep that an idle daemon need not (nil: nothing),
	// before release hands the freed memory back: daemon.shedIdle.
	shed func()
	// drop, keep after the last work (keep > delay), drops what is kept for an agent's
	// pause, and release runs again (nil: no second stage): daemon.dropModels.
	drop func()
	keep time.Duration
}

func newMemoryReleaser(delay time.Duration, log *slog.Logger) *memoryReleaser {
	return &memoryReleaser{delay: delay, log: log, wake: make(chan struct{}, 1), release: debug.FreeOSMemory}
}

// wrap counts the requests of h. Per request this is four atomic operations (no clock
// read: on some virtual machines that is a system call); only the first request after a
// release also sends on a channel.
func (m *memoryReleaser) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if api.HeldPoll(r) {
			// A long poll of a document feed is held for up to 30 s doing nothing; an
			// editor always has one open. Counted as active, it would keep the daemon from
			// ever releasing memory while anyone edits; its answer still counts as work.
			defer m.answered()
			h.ServeHTTP(w, r)
			return
		}
		m.active.Add(1)
		defer func() {
			m.active.Add(-1)
			m.work()
		}()
		h.ServeHTTP(w, r)
	})
}

// work counts one answer or piece of background work that used the daemon's parts (the
// plan follower's, daemon.go) and wakes the watcher after a release.
func (m *memoryReleaser) work() {
	m.worked.Add(1)
	m.answered()
}

// answered counts one answered request and wakes the watcher after a release.
func (m *memoryReleaser) answered() {
	m.done.Add(1)
	if !m.dirty.Load() && m.dirty.CompareAndSwap(false, true) {
		select {
		case m.wake <- struct{}{}:
		default:
		}
	}
}

// run waits for work, then until no request has run for delay (give or take a quarter
// of it), then releases memory, and once no work has come for keep (held polls answered
// meanwhile do not count), drops and releases again; until ctx ends.
func (m *memoryReleaser) run(ctx context.Context) {
	timer := time.NewTimer(m.delay)
	timer.Stop()
	// The watcher, not each request, reads the clock: when it saw the work counter move
	// (to a quarter of the delay), and whether work came since the last drop.
	// (Work done before the watcher started counts: workSeen starts at none.)
	workSeen, lastWork, kept := uint64(0), time.Time{}, false
	noteWork := func() {
		if n := m.worked.Load(); n != workSeen {
			workSeen, lastWork, kept = n, time.Now(), true
		}
	}
	woken := false // an answer came during the second stage's wait: its wake is consumed
	for {
		if !woken {
			select {
			case <-ctx.Done():
				return
			case <-m.wake:
			}
		}
		woken = false
		noteWork()
		// Look every quarter of the delay whether requests were answered since the last
		// look; release once none was for the whole delay. This polling happens only
		// between work and its release.
		tick := m.delay / 4
		seen, quiet := m.done.Load(), time.Duration(0)
		for quiet < m.delay {
			timer.Reset(tick)
			select {
			case <-ctx.Done():
				timer.Stop()
				return
			case <-timer.C:
			}
			noteWork()
			if now := m.done.Load(); now != seen || m.active.Load() > 0 {
				seen, quiet = now, 0
				continue
			}
			quiet += tick
		}
		// Requests answered from here on set dirty again and wake the next round.
		m.dirty.Store(false)
		start := time.Now()
		if m.shed != nil {
			m.shed()
		}
		m.release()
		m.log.Debug("idle: memory returned to the system", "took", time.Since(start))
		if m.drop == nil || !kept {
			continue
		}
		// The second stage: one timer, no polling; the first answer wakes it, and a held
		// poll's answer comes back here with the same last work.
		timer.Reset(max(time.Until(lastWork.Add(m.keep)), 0))
		select {
		case <-ctx.Done():
			timer.Stop()
			return
		case <-m.wake:
			timer.Stop()
			woken = true
			continue
		case <-timer.C:
		}
		if m.active.Load() > 0 {
			// A request that began after the release is still running: its answer wakes
			// the next round, which ends in this stage again.
			continue
		}
		kept = false
		start = time.Now()
		m.drop()
		m.release()
		m.log.Debug("idle: kept analyses dropped, memory returned to the system", "took", time.Since(start))
	}
}

// shedIdle drops, once the daemon is idle, what its plan parts keep and a later request
// rebuilds cheaply (werkbaum.Engine.ShedIdle): the engine's cached answers that its disk
// analysis cache holds, the plans' outlines (the engine is their only holder: the plan
// store asks it for them) and the engine's idle runtimes beyond one (docs/bench-memory.md
// has what each is worth), and the MCP door's encodings of the readings those answers
// made (api.Server.DropEncodedResults). The price is paid once per idle spell by the first
// reading that needs an outline (decoded from the view, the view read back from disk when
// it was dropped), by the first full reading of each plan (encoded again) and by the
// first calls that run at once (a runtime built); the plans' texts and summaries stay.
func (d *daemon) shedIdle() {
	p := d.planParts()
	if p == nil {
		return
	}
	outlines, answers, runtimes := p.engine.ShedIdle()
	results := 0
	if sv := d.serving.Load(); sv != nil {
		results = sv.srv.DropEncodedResults()
	}
	d.log.Debug("idle: dropped what is cheap to rebuild", "outlines", outlines, "answers", answers, "runtimes", runtimes, "results", results)
}

// dropModels empties the engine's memos (werkbaum.Engine.DropMemos), which after their idle
// trim hold the analysis of the current texts of the plans each runtime worked on last:
// kept through the first idle stage for agents that pause (modelKeep), dropped once they
// have stopped.
func (d *daemon) dropModels() {
	p := d.planParts()
	if p == nil {
		return
	}
	n := p.engine.DropMemos()
	d.log.Debug("idle: dropped the kept analyses", "runtimes", n)
}
