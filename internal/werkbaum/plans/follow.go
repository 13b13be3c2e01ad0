package plans

import (
	"context"

	"talkd/internal/werkbaum/plans/planfs"
)

// The store's side of the follower (planfs.Follower, which notices a change made outside
// talkd without waiting for a request): a changed plan is read by the same path as a
// request's read, which records the revision and wakes the feed; then, when its text is
// new to talkd (not one of its own writes), it is analysed in the background, which
// leaves the whole-plan inspect cached.

// startFollower starts the loop of the service's follower; Close stops it.
func (s *Service) startFollower() {
	f, states := s.follow, planfs.FollowStates{}
	f.Start(func(ctx context.Context) bool { return s.followRound(ctx, f, states) })
}

// stopFollower ends the follower and waits for its round to finish.
func (s *Service) stopFollower() { s.follow.Stop() }

// followRound reads, then analyses, the followed plans whose file changed and held still
// since the last round (planfs.Follower.Changed); it reports whether it did.
func (s *Service) followRound(ctx context.Context, f *planfs.Follower, states planfs.FollowStates) bool {
	changed := f.Changed(ctx, s.set.Load(), s.texts, s.maxBytes, s.log, states)
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
