package journal

import (
	"errors"
	"sync"
	"time"
)

// GroupCommit runs concurrent journal changes in one read-write transaction, so that
// writes on different plans share one commit (one fsync) instead of queueing for one
// each. A change that arrives while no commit runs is committed at once (no waiting for
// company, unlike bbolt's Batch with its delay); changes that arrive while one runs are
// committed together right after it.
//
// After a group of several changes, the next group waits a moment (at most groupLinger,
// a fraction of a commit's fsyncs) until as many changes have arrived as the last group
// had: the callers of the last group come back with their next change microseconds
// apart, and without the wait the first of them would always commit alone, halving the
// sharing. A lone writer never waits.
type GroupCommit struct {
	db Database

	mu      sync.Mutex
	queue   []*groupCall
	running bool
	last    int           // size of the last group committed
	arrived chan struct{} // signalled when a change is queued while a group waits
}

// NewGroupCommit returns the group commit of db.
func NewGroupCommit(db Database) *GroupCommit { return &GroupCommit{db: db} }

// groupLinger bounds the wait of a group for the company the last group had.
const groupLinger = 500 * time.Microsecond

type groupCall struct {
	fn   func(Tx) error
	done chan error  // Do's caller waits here
	then func(error) // Start's caller is called back instead
}

// finish hands the outcome of c to its caller.
func (c *groupCall) finish(err error) {
	if c.then != nil {
		c.then(err)
		return
	}
	c.done <- err
}

// Do runs fn in a shared transaction and returns when it is committed (nil) or failed.
// fn may run more than once: when another change of its group fails, the group is
// rolled back and run again without that one. fn's own error reaches only its caller.
func (g *GroupCommit) Do(fn func(Tx) error) error {
	c := &groupCall{fn: fn, done: make(chan error, 1)}
	if g.enqueue(c) {
		g.lead()
	}
	return <-c.done
}

// Start queues fn like Do and returns at once; then is told the outcome (as Do's return
// value) by the goroutine that committed it, in queue order with the other changes of its
// group and before any later group runs. So a change queued after Start returned is
// committed in the same transaction as fn or a later one, and sees what then recorded in
// memory: a write's settle after its rename is queued so, and the plan's next journal
// record can never be durable before it. then must return quickly and must not call Do.
func (g *GroupCommit) Start(fn func(Tx) error, then func(error)) {
	if g.enqueue(&groupCall{fn: fn, then: then}) {
		go g.lead()
	}
}

// enqueue queues c and reports whether the caller leads the next group (no group runs).
func (g *GroupCommit) enqueue(c *groupCall) bool {
	g.mu.Lock()
	g.queue = append(g.queue, c)
	lead := !g.running
	g.running = true
	if g.arrived != nil {
		select {
		case g.arrived <- struct{}{}:
		default:
		}
	}
	g.mu.Unlock()
	return lead
}

// lead commits what is queued, then hands the next group to a new goroutine, so its own
// caller returns as soon as its change is committed.
func (g *GroupCommit) lead() {
	g.mu.Lock()
	if want := g.last; want > 1 && len(g.queue) < want {
		if g.arrived == nil {
			g.arrived = make(chan struct{}, 1)
		}
		linger := time.NewTimer(groupLinger)
		for expired := false; !expired && len(g.queue) < want; {
			g.mu.Unlock()
			select {
			case <-g.arrived:
			case <-linger.C:
				expired = true
			}
			g.mu.Lock()
		}
		linger.Stop()
	}
	calls := g.queue
	g.queue = nil
	g.last = len(calls)
	g.mu.Unlock()
	g.commit(calls)
	g.mu.Lock()
	if len(g.queue) == 0 {
		g.running = false
		g.mu.Unlock()
		return
	}
	g.mu.Unlock()
	go g.lead()
}

// errOwnFailure marks a change's own error inside the shared transaction.
type errOwnFailure struct {
	i   int
	err error
}

func (e *errOwnFailure) Error() string { return e.err.Error() }

func (g *GroupCommit) commit(calls []*groupCall) {
	for len(calls) > 0 {
		err := g.db.Update(func(tx Tx) error {
			for i, c := range calls {
				if err := c.fn(tx); err != nil {
					return &errOwnFailure{i, err}
				}
			}
			return nil
		})
		var own *errOwnFailure
		if errors.As(err, &own) {
			// That change failed by itself: it gets its error, the others run again.
			calls[own.i].finish(own.err)
			calls = append(calls[:own.i:own.i], calls[own.i+1:]...)
			continue
		}
		for _, c := range calls {
			c.finish(err)
		}
		return
	}
}
