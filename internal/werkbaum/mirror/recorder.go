// Package mirror carries agent writes of plans out of the daemon: into git, as one commit
// per write that says who changed what (and nothing of the user's other work), and into
// the room, as a short spoken announcement when an agent finishes, ships or discards
// something. Both start from the same node-level diff of the write.
package mirror

import (
	"context"
	"log/slog"

	"talkd/internal/werkbaum"
	"talkd/internal/werkbaum/plans"
)

// Recorder is the plan store's WriteRecorder: per write, the git mirror and the
// announcements the plan's configuration asks for. The settings come with each write
// (plans.WriteEvent), so a reload needs nothing of the recorder; plans below a root are
// neither mirrored nor announced.
type Recorder struct {
	engine   *werkbaum.Engine
	mirror   *Mirror
	announce *Announcer
	log      *slog.Logger
}

// Options wire a Recorder.
type Options struct {
	Engine *werkbaum.Engine
	// Mirror commits writes of plans with mirror = true; nil disables the mirror.
	Mirror *Mirror
	// Voice receives announcements of plans with announce = true; nil disables them.
	Voice Submitter
	Log   *slog.Logger
}

// New returns the recorder.
func New(opts Options) *Recorder {
	r := &Recorder{engine: opts.Engine, mirror: opts.Mirror, log: opts.Log}
	if r.log == nil {
		r.log = slog.New(slog.DiscardHandler)
	}
	if opts.Voice != nil {
		r.announce = NewAnnouncer(opts.Voice, r.log)
	}
	return r
}

// AfterWrite handles one applied write (plans.WriteRecorder) in the plan's write
// lane: it announces first (so speech never waits for git) and queues the commit (the
// git work runs in the mirror's worker, outside the lane). The returned report, called
// by the store after the lane is released, is the write result's "mirror" field; nil
// when the plan is not mirrored.
func (r *Recorder) AfterWrite(ctx context.Context, ev plans.WriteEvent) func(context.Context) string {
	announce := ev.Announce && r.announce != nil
	mirror := ev.Mirror && r.mirror != nil
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

// State is the mirror state of a mirrored plan for plans_list and /status
// (plans.WriteRecorder; the store asks only for plans with mirror = true); nil without a
// mirror.
func (r *Recorder) State(key string) any {
	if r.mirror == nil {
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
