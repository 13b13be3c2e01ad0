package queue

import (
	"context"
	"sync"
)

// Lanes serialise work per key: writes to one plan run strictly one after another, while
// writes to other plans (other keys) and all reads run in parallel. A waiting caller gives
// up when its context ends.
type Lanes struct {
	mu    sync.Mutex
	lanes map[string]*lane
}

type lane struct {
	slot  chan struct{} // holds one token while someone works in the lane
	users int           // holders and waiters; the lane is freed when it drops to zero
}

// Do runs fn alone in the lane of key.
func (l *Lanes) Do(ctx context.Context, key string, fn func() error) error {
	ln := l.enter(key)
	defer l.leave(key, ln)
	select {
	case ln.slot <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-ln.slot }()
	return fn()
}

func (l *Lanes) enter(key string) *lane {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.lanes == nil {
		l.lanes = make(map[string]*lane)
	}
	ln := l.lanes[key]
	if ln == nil {
		ln = &lane{slot: make(chan struct{}, 1)}
		l.lanes[key] = ln
	}
	ln.users++
	return ln
}

func (l *Lanes) leave(key string, ln *lane) {
	l.mu.Lock()
	defer l.mu.Unlock()
	ln.users--
	if ln.users == 0 {
		delete(l.lanes, key)
	}
}
