package planfs

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// The follower notices a change made outside talkd without waiting for a request. This
// file is its file side (which plans to look at, when a file changed and held still); the
// store reads what it reports (plans/follow.go).
//
// Without it, an edit made outside talkd (an editor's save, a git pull) became a revision
// only when a request read the plan. A document editor's parked long poll slept on until
// its wait ended (up to 30 s) before it was told, and the first inspect after the edit paid
// the whole analysis (0.35–0.45 s for 10,000 nodes on a two-core machine). The follower
// opens and stats the followed plan files every interval. A file that changed and then
// held still for one interval is read by the same path as a request's read, which records
// the revision and wakes the feed; then, when its text is new to talkd (not one of its own
// writes), it is analysed in the background, which leaves the whole-plan inspect cached.
//
// It follows the configured plans and the plans below roots that a request used within
// FollowWindow, at most maxFollowedRoots of them: a root may hold thousands of files, and
// a listing (plans_list, /status) is no use of a plan. An idle daemon does not wake up for
// it: when no request has looked a plan up for FollowWindow, the follower sleeps until the
// next one does.
//
// It compares identities only (Ident: file, size, mtime, ctime). A second change
// within one timestamp tick of a coarse file system that keeps the size is not seen here;
// the next request's read still finds it (Ident.trusted).

// FollowWindow is how long a plan below a root stays followed after a request used it, and
// how long the follower runs on after the last request.
const FollowWindow = 10 * time.Minute

// maxFollowedRoots bounds the followed plans below roots (the most recently used ones).
const maxFollowedRoots = 64

// Follower is the follower of one store.
type Follower struct {
	every  time.Duration
	window time.Duration // FollowWindow; tests shorten it
	worked func()
	cancel context.CancelFunc
	done   chan struct{}

	uses   atomic.Uint64 // plan lookups of requests so far
	asleep atomic.Bool   // the loop waits on wake
	wake   chan struct{}

	mu    sync.Mutex
	roots map[string]time.Time // plans below roots by key: when a request last used one
}

// NewFollower makes a follower that looks every interval; worked, if set, is told after
// each round that read or analysed something.
func NewFollower(every, window time.Duration, worked func()) *Follower {
	return &Follower{every: every, window: window, worked: worked, done: make(chan struct{}),
		wake: make(chan struct{}, 1), roots: map[string]time.Time{}}
}

// Start starts the loop: a round every interval while requests use plans (round reports
// whether it read or analysed something); Stop ends it.
func (f *Follower) Start(round func(ctx context.Context) bool) {
	ctx, cancel := context.WithCancel(context.Background())
	f.cancel = cancel
	go f.run(ctx, round)
}

// Stop ends the follower (nil: none) and waits for its round to finish.
func (f *Follower) Stop() {
	if f != nil {
		f.cancel()
		<-f.done
	}
}

// Asleep reports whether the loop waits for a request (none used a plan for the window).
func (f *Follower) Asleep() bool { return f.asleep.Load() }

// Busy counts a request that looked a plan up and wakes a sleeping follower.
func (f *Follower) Busy() {
	if f == nil {
		return
	}
	f.uses.Add(1)
	if f.asleep.Load() {
		select {
		case f.wake <- struct{}{}:
		default:
		}
	}
}

// Asked is Busy for a request about plan p (the result of its lookup); a plan below a
// root becomes followed.
func (f *Follower) Asked(p Ref, err error) {
	if f == nil {
		return
	}
	f.Busy()
	if err == nil && p.InRoot() {
		f.mu.Lock()
		f.roots[p.Key] = time.Now()
		f.mu.Unlock()
	}
}

// Remembered is how many plans below roots the follower remembers a use of (none once
// the window passed and FollowedRoots looked).
func (f *Follower) Remembered() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.roots)
}

// forget stops following a plan below a root (its root is no longer configured).
func (f *Follower) forget(key string) {
	f.mu.Lock()
	delete(f.roots, key)
	f.mu.Unlock()
}

// FollowedRoots returns the plans below roots used within the window, the most recent
// first, at most maxFollowedRoots; older ones are forgotten.
func (f *Follower) FollowedRoots(now time.Time) []string {
	type use struct {
		key string
		at  time.Time
	}
	f.mu.Lock()
	recent := make([]use, 0, len(f.roots))
	for k, at := range f.roots {
		if now.Sub(at) > f.window {
			delete(f.roots, k)
			continue
		}
		recent = append(recent, use{k, at})
	}
	f.mu.Unlock()
	slices.SortFunc(recent, func(a, b use) int { return b.at.Compare(a.at) })
	keys := make([]string, 0, min(len(recent), maxFollowedRoots))
	for i := 0; i < len(recent) && i < maxFollowedRoots; i++ {
		keys = append(keys, recent[i].key)
	}
	return keys
}

// run is the follower's loop: a round every interval while requests use plans, asleep
// once none has for the window.
func (f *Follower) run(ctx context.Context, round func(ctx context.Context) bool) {
	defer close(f.done)
	tick := time.NewTicker(f.every)
	defer tick.Stop()
	seen, lastUse := f.uses.Load(), time.Now()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if n := f.uses.Load(); n != seen {
			seen, lastUse = n, time.Now()
		} else if time.Since(lastUse) > f.window {
			tick.Stop()
			select { // a wake left over from before is no request
			case <-f.wake:
			default:
			}
			f.asleep.Store(true)
			// A request counted after the load above saw asleep false, so it sent no
			// wake: look again now that asleep is published.
			if f.uses.Load() == seen {
				select {
				case <-ctx.Done():
					return
				case <-f.wake:
				}
			}
			f.asleep.Store(false)
			seen, lastUse = f.uses.Load(), time.Now()
			tick.Reset(f.every)
			continue
		}
		if round(ctx) && f.worked != nil {
			f.worked()
		}
	}
}

// look is what the follower saw of a plan file: its identity, or why it could not be
// opened.
type look struct {
	ident Ident
	err   string
}

func (a look) same(b look) bool {
	if a.err != "" || b.err != "" {
		return a.err == b.err
	}
	return a.ident.Same(b.ident)
}

// followState is what the follower knows of one plan.
type followState struct {
	known   look  // the file as last read
	pending *look // a change seen by the last round; read if this round sees it again
}

// FollowStates is what a follower knows of each plan it follows, kept by the store's
// rounds from one to the next.
type FollowStates map[string]*followState

// Changed looks at every followed plan of the set (the configured plans and the plans
// below roots used within the window) and returns those whose file changed and held still
// since the last round: the store reads them. texts is the store's text cache: a plan
// seen for the first time is compared with the file its cached text was read from.
func (f *Follower) Changed(ctx context.Context, set *Set, texts *Cache, limit int64, log *slog.Logger, states FollowStates) []string {
	keys := append(slices.Clone(set.Keys()), f.FollowedRoots(time.Now())...)
	live := make(map[string]bool, len(keys))
	var changed []string
	for _, key := range keys {
		if ctx.Err() != nil {
			return nil
		}
		now, ok := lookAt(set, key, limit, log)
		if !ok {
			f.forget(key)
			continue
		}
		live[key] = true
		st := states[key]
		if st == nil {
			st = &followState{known: now}
			if id, ok := texts.Ident(key); ok {
				st.known = look{ident: id} // what was read: a change since then is found below
			}
			states[key] = st
		}
		switch {
		case now.same(st.known):
			st.pending = nil
		case st.pending == nil || !now.same(*st.pending):
			st.pending = &now // changed, maybe still being written: wait a round
		default:
			st.known, st.pending = now, nil
			changed = append(changed, key)
		}
	}
	for key := range states {
		if !live[key] {
			delete(states, key)
		}
	}
	return changed
}

// lookAt opens the plan's file and takes its identity, as a read does; ok is false when
// key names no plan any more (or a plan on a document server, which has no file here).
func lookAt(set *Set, key string, limit int64, log *slog.Logger) (look, bool) {
	p, err := set.Ref(key, log)
	if err != nil || p.Remote() {
		return look{}, false
	}
	pf, err := Open(p, limit)
	if err != nil {
		return look{err: err.Error()}, true
	}
	defer pf.Close()
	return look{ident: IdentOf(pf.fi)}, true
}
