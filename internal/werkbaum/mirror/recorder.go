// Package mirror carries agent writes of plans out of the daemon: into git, as one commit
// per write that says who changed what (and nothing of the user's other work), and into
// the room, as a short spoken announcement when an agent finishes, ships or discards
// something. Both start from the same node-level diff of the write.
package mirror

import (
	"context"
	"log/slog"
	"sync/atomic"

	"talkd/internal/config"
	"talkd/internal/werkbaum"
	"talkd/internal/werkbaum/plans"
)

// Recorder is the plan store's AfterWrite hook: per plan, the git mirror and the
// announcements its configuration asks for.
type Recorder struct {
	engine *werkbaum.Engine
	// plans is the configured plans by key (SetPlans swaps it when the config is
	// reloaded); plans below a root are in no map: neither mirrored nor announced.
	plans    atomic.Pointer[map[string]config.Plan]
	mirror   *Mirror
	announce *Announcer
	log      *slog.Logger
}

// Options wire a Recorder.
type Options struct {
	Engine *werkbaum.Engine
	Plans  []config.Plan
	// Mirror commits writes of plans with mirror = true; nil disables the mirror.
	Mirror *Mirror
	// Voice receives announcements of plans with announce = true; nil disables them.
	Voice Submitter
	Log   *slog.Logger
}

// New returns the hook for the configured plans.
func New(opts Options) *Recorder {
	r := &Recorder{engine: opts.Engine, mirror: opts.Mirror, log: opts.Log}
	if r.log == nil {
		r.log = slog.New(slog.DiscardHandler)
	}
	r.SetPlans(opts.Plans)
	if opts.Voice != nil {
		r.announce = NewAnnouncer(opts.Voice, r.log)
	}
	return r
}

// SetPlans replaces the plans whose writes are mirrored and announced (a reloaded
// config). A write already past its lookup keeps the settings it saw.
func (r *Recorder) SetPlans(plans []config.Plan) {
	m := make(map[string]config.Plan, len(plans))
	for _, p := range plans {
		m[p.Key] = p
	}
	r.plans.Store(&m)
}

// AfterWrite handles one applied write (plans.Options.AfterWrite) in the plan's write
// lane: it announces first (so speech never waits for git) and queues the commit (the
// git work runs in the mirror's worker, outside the lane). The returned report, called
// by the store after the lane is released, is the write result's "mirror" field; nil
// when the plan is not mirrored.
func (r *Recorder) AfterWrite(ctx context.Context, ev plans.WriteEvent) func(context.Context) string {
	p := (*r.plans.Load())[ev.Plan]
	announce := p.Announce && r.announce != nil
	mirror := p.Mirror && r.mirror != nil
	if !announce && !mirror {
		return nil
	}
	// The write has happened; a client that hangs up now must not lose its record.
	ctx = context.WithoutCancel(ctx)
	changes, err := r.diff(ctx, ev)
	if err != nil {
		r.log.Warn("plan write: no node diff", "plan", ev.Plan, "revision", ev.Revision, "err", err)
	}
	if announce && err == nil {
		// The laws' answer (muted, quiet hours, rate limit) is logged by the announcer;
		// it is not the agent's business in the write result.
		_, _, _ = r.announce.Announce(ctx, ev, changes)
	}
	if !mirror {
		return nil
	}
	report := r.mirror.Enqueue(ctx, ev, Describe(changes))
	return func(ctx context.Context) string { return report(ctx, 0) }
}

// State is the mirror state of a plan for plans_list and /status (plans.Options.MirrorState);
// nil when the plan is not mirrored.
func (r *Recorder) State(key string) any {
	if p, ok := (*r.plans.Load())[key]; !ok || !p.Mirror || r.mirror == nil {
		return nil
	}
	return r.mirror.State(key)
}

func (r *Recorder) diff(ctx context.Context, ev plans.WriteEvent) ([]Change, error) {
	opts := werkbaum.InspectOptions{Include: []string{"tree"}}
	before, err := r.engine.Inspect(ctx, ev.OldText, opts)
	if err != nil {
		return nil, err
	}
	after, err := r.engine.Inspect(ctx, ev.NewText, opts)
	if err != nil {
		return nil, err
	}
	return Diff(before.Nodes, after.Nodes), nil
}
