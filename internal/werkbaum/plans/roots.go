package plans

import (
	"fmt"
	"time"

	"talkd/internal/config"
	"talkd/internal/werkbaum/plans/journal"
	"talkd/internal/werkbaum/plans/planfs"
)

// The store's side of the plan set (planfs.Set): a Service holds one immutable set at a
// time and Reconfigure swaps it for a new one; every request looks its plan up once,
// through resolve, and keeps that planfs.Ref until it ends, so a write that began under
// the old set finishes on the file it started with while new requests see the new set.

// resolve looks up the plan a request is about (lookup), and tells the follower that the
// plan is in use.
func (s *Service) resolve(key string) (planfs.Ref, error) {
	p, err := s.lookup(key)
	s.follow.Asked(p, err)
	return p, err
}

// lookup looks a plan key up in the current plan set (planfs.Set.Lookup: a key below a
// root is checked by the addressing rule and then on disk) and makes sure its journal is
// ready.
func (s *Service) lookup(key string) (planfs.Ref, error) {
	ref, err := s.set.Load().Lookup(key, s.log)
	if err != nil || !ref.InRoot() {
		return ref, err
	}
	if err := s.ensureJournal(ref); err != nil {
		return planfs.Ref{}, err
	}
	return ref, nil
}

// ensureJournal gives a root plan its journal bucket and settles what a crash left
// pending in it, once per process and before its first request uses it (configured plans
// get theirs at New and Reconfigure).
func (s *Service) ensureJournal(p planfs.Ref) error {
	if _, ok := s.ready.Load(p.Key); ok {
		return nil
	}
	s.readyMu.Lock()
	defer s.readyMu.Unlock()
	if _, ok := s.ready.Load(p.Key); ok {
		return nil
	}
	if err := s.createBuckets([]string{p.Key}); err != nil {
		return err
	}
	if err := s.recover(p); err != nil {
		return fmt.Errorf("plan %s: recover journal: %w", p.Key, err)
	}
	s.ready.Store(p.Key, struct{}{})
	return nil
}

// createBuckets creates (and migrates) the journal buckets of these plans.
func (s *Service) createBuckets(keys []string) error {
	if len(keys) == 0 {
		return nil
	}
	err := s.db.Update(func(tx Tx) error {
		for _, k := range keys {
			b, err := tx.CreateBucket(journal.BucketName(k))
			if err != nil {
				return err
			}
			if err := journal.Migrate(b, config.LocalClientID); err != nil {
				return fmt.Errorf("plan %s: %w", k, err)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("prepare plan journal: %w", err)
	}
	return nil
}

// Reconfigure replaces the plan set at run time (a reloaded config). Requests that
// resolved their plan before keep it: a write in flight finishes on the file it started
// with, in its lane. Requests after it see the new set: a removed plan is ErrUnknownPlan,
// an added one is served (its journal bucket is created and what a crash left pending
// in it settled before it is visible). The set is checked first; on an error nothing
// changes.
func (s *Service) Reconfigure(plans []config.Plan, roots []config.Root) error {
	set, err := planfs.NewSet(plans, roots)
	if err != nil {
		return fmt.Errorf("plans: %w", err)
	}
	s.reconf.Lock()
	defer s.reconf.Unlock()
	old := s.set.Load()
	var added []string
	for _, k := range set.Keys() {
		if _, ok := s.ready.Load(k); !ok {
			added = append(added, k)
		}
	}
	s.readyMu.Lock()
	err = s.createBuckets(added)
	if err == nil {
		for _, k := range added {
			p, _ := set.Plan(k)
			if err = s.recover(planfs.ConfiguredRef(p)); err != nil {
				err = fmt.Errorf("plan %s: recover journal: %w", k, err)
				break
			}
			s.ready.Store(k, struct{}{})
		}
	}
	s.readyMu.Unlock()
	if err != nil {
		return err
	}
	// Listings of unchanged roots are kept: the folder is the same.
	for _, name := range set.Names() {
		r, _ := set.Root(name)
		if o, ok := old.Root(name); ok && o.Path() == r.Path() && planfs.SameFolder(o, r) {
			r.KeepListing(o)
		}
	}
	s.set.Store(set)
	for _, k := range old.Keys() {
		oldPlan, _ := old.Plan(k)
		if p, ok := set.Plan(k); !ok || p.Path != oldPlan.Path {
			s.forgetPlan(k)
		}
	}
	for _, name := range set.Names() {
		// Each root's path was resolved again and its folder opened anew: say which
		// folder it holds now, and whether that is another one than before.
		r, _ := set.Root(name)
		o, had := old.Root(name)
		s.log.Info("root folder re-resolved", "root", name, "path", r.Path(), "changed", !had || !planfs.SameFolder(o, r))
	}
	s.log.Info("plan set changed", "plans", len(set.Keys()), "roots", len(set.Names()), "added", len(added))
	s.warm(added)
	return nil
}

// forgetPlan drops what the caches hold of a plan that left the set (or moved).
func (s *Service) forgetPlan(key string) {
	s.texts.Forget(key)
	s.cache.mu.Lock()
	delete(s.cache.summaries, key)
	s.cache.mu.Unlock()
}

// Keys lists the configured plan keys in config order, then each root's plans (a bounded
// walk, reused for planfs.RootListTTL).
func (s *Service) Keys() []string {
	set := s.set.Load()
	if len(set.Names()) == 0 {
		return set.Keys()
	}
	keys := append([]string(nil), set.Keys()...)
	for _, name := range set.Names() {
		r, _ := set.Root(name)
		keys = append(keys, r.Listing(s.log)...)
	}
	return keys
}

// summaryWaitFor is how long Summarize waits for a plan's analysis: configured plans as
// summaryWait; root plans not at all, since a listing may hold a thousand of them and
// each would otherwise hold up plans_list (they read "pending" until counted).
func summaryWaitFor(p planfs.Ref) time.Duration {
	if p.InRoot() {
		return 0
	}
	return summaryWait
}
