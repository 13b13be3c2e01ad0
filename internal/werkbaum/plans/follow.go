package plans

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// The follower notices a change made outside talkd without waiting for a request.
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
// followWindow, at most maxFollowedRoots of them: a root may hold thousands of files, and
// a listing (plans_list, /status) is no use of a plan. An idle daemon does not wake up for
// it: when no request has looked a plan up for followWindow, the follower sleeps until the
// next one does.
//
// It compares identities only (fileIdent: file, size, mtime, ctime). A second change
// within one timestamp tick of a coarse file system that keeps the size is not seen here;
// the next request's read still finds it (fileIdent.trusted).

// followWindow is how long a plan below a root stays followed after a request used it, and
// how long the follower runs on after the last request.
const followWindow = 10 * time.Minute

// maxFollowedRoots bounds the followed plans below roots (the most recently used ones).
const maxFollowedRoots = 64

type follower struct {
	every  time.Duration
	window time.Duration // followWindow; tests shorten it
	worked func()
	cancel context.CancelFunc
	done   chan struct{}

	uses   atomic.Uint64 // plan lookups of requests so far
	asleep atomic.Bool   // the loop waits on wake
	wake   chan struct{}

	mu    sync.Mutex
	roots map[string]time.Time // plans below roots by key: when a request last used one
}

// newFollower makes a follower that looks every interval; worked, if set, is told after
// each round that read or analysed something.
func newFollower(every, window time.Duration, worked func()) *follower {
	return &follower{every: every, window: window, worked: worked, done: make(chan struct{}),
		wake: make(chan struct{}, 1), roots: map[string]time.Time{}}
}

// startFollower starts the loop of the service's follower; Close stops it.
func (s *Service) startFollower() {
	f := s.follow
	ctx, cancel := context.WithCancel(context.Background())
	f.cancel = cancel
	go s.runFollower(ctx, f)
}

// stopFollower ends the follower and waits for its round to finish.
func (s *Service) stopFollower() {
	if f := s.follow; f != nil {
		f.cancel()
		<-f.done
	}
}

// busy counts a request that looked a plan up and wakes a sleeping follower.
func (f *follower) busy() {
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

// asked is busy for a request about plan p (the result of its lookup); a plan below a
// root becomes followed.
func (f *follower) asked(p planRef, err error) {
	if f == nil {
		return
	}
	f.busy()
	if err == nil && p.root != nil {
		f.mu.Lock()
		f.roots[p.Key] = time.Now()
		f.mu.Unlock()
	}
}

// forget stops following a plan below a root (its root is no longer configured).
func (f *follower) forget(key string) {
	f.mu.Lock()
	delete(f.roots, key)
	f.mu.Unlock()
}

// followedRoots returns the plans below roots used within the window, the most recent
// first, at most maxFollowedRoots; older ones are forgotten.
func (f *follower) followedRoots(now time.Time) []string {
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

// runFollower is the follower's loop: a round every interval while requests use plans,
// asleep once none has for the window.
func (s *Service) runFollower(ctx context.Context, f *follower) {
	defer close(f.done)
	states := map[string]*followState{}
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
		if s.followRound(ctx, f, states) && f.worked != nil {
			f.worked()
		}
	}
}

// look is what the follower saw of a plan file: its identity, or why it could not be
// opened.
type look struct {
	ident fileIdent
	err   string
}

func (a look) same(b look) bool {
	if a.err != "" || b.err != "" {
		return a.err == b.err
	}
	return a.ident.same(b.ident)
}

// followState is what the follower knows of one plan.
type followState struct {
	known   look  // the file as last read
	pending *look // a change seen by the last round; read if this round sees it again
}

// followRound looks at every followed plan and reads, then analyses, those whose file
// changed and held still since the last round; it reports whether it did.
func (s *Service) followRound(ctx context.Context, f *follower, states map[string]*followState) bool {
	keys := append(slices.Clone(s.set.Load().keys), f.followedRoots(time.Now())...)
	live := make(map[string]bool, len(keys))
	var changed []string
	for _, key := range keys {
		if ctx.Err() != nil {
			return false
		}
		now, ok := s.lookAt(key)
		if !ok {
			f.forget(key)
			continue
		}
		live[key] = true
		st := states[key]
		if st == nil {
			st = &followState{known: now}
			if known, ok := s.cachedLook(key); ok {
				st.known = known // what was read: a change since then is found below
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
	if len(changed) == 0 {
		return false
	}
	// Read them all first: the revisions wake the feeds without waiting for analyses.
	// Only a text new to talkd is analysed: a file talkd wrote itself (or a request read
	// first) already has its revision, and its analysis is made when it is asked for.
	type read struct {
		key  string
		snap *Snapshot
	}
	var reads []read
	for _, key := range changed {
		known, _ := s.latestMeta(key) // unreadable: taken as new
		p, err := s.lookup(key)
		snap, err := s.readLooked(ctx, key, p, err) // logs what it refuses, records a deletion
		if err == nil && snap.Base.Checksum != known.Checksum {
			reads = append(reads, read{key, snap})
		}
	}
	if s.engine == nil {
		return true
	}
	// One analysis at a time: a checkout that changes many plans must not take every
	// runtime of the engine from the requests.
	for _, r := range reads {
		select {
		case <-s.startSummary(r.key, r.snap).done:
		case <-ctx.Done():
			return true
		}
	}
	return true
}

// lookAt opens the plan's file and takes its identity, as a read does; ok is false when
// key names no plan any more (or a plan on a document server, which has no file here).
func (s *Service) lookAt(key string) (look, bool) {
	p, err := s.ref(key)
	if err != nil || p.Remote() {
		return look{}, false
	}
	pf, err := openPlan(p, s.maxBytes)
	if err != nil {
		return look{err: err.Error()}, true
	}
	defer pf.close()
	return look{ident: identOf(pf.fi)}, true
}

// cachedLook is the identity of the file the plan's cached text was read from.
func (s *Service) cachedLook(key string) (look, bool) {
	s.cache.mu.Lock()
	defer s.cache.mu.Unlock()
	if fc := s.cache.files[key]; fc != nil {
		return look{ident: fc.ident}, true
	}
	return look{}, false
}
