package queue

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestLanesSerialisePerKey(t *testing.T) {
	var l Lanes
	var inA, maxA, inB atomic.Int32
	var bothAtOnce atomic.Bool
	var wg sync.WaitGroup
	for i := 0; i < 20; i++ {
		wg.Add(2)
		go func() {
			defer wg.Done()
			l.Do(context.Background(), "a", func() error {
				n := inA.Add(1)
				if n > maxA.Load() {
					maxA.Store(n)
				}
				if inB.Load() > 0 {
					bothAtOnce.Store(true)
				}
				time.Sleep(time.Millisecond)
				inA.Add(-1)
				return nil
			})
		}()
		go func() {
			defer wg.Done()
			l.Do(context.Background(), "b", func() error {
				inB.Add(1)
				time.Sleep(time.Millisecond)
				inB.Add(-1)
				return nil
			})
		}()
	}
	wg.Wait()
	if maxA.Load() != 1 {
		t.Errorf("%d writers in lane a at once", maxA.Load())
	}
	if !bothAtOnce.Load() {
		t.Error("lanes a and b never ran in parallel")
	}
	if len(l.lanes) != 0 {
		t.Errorf("%d lanes left behind", len(l.lanes))
	}
}

func TestLanesWaiterGivesUp(t *testing.T) {
	var l Lanes
	release := make(chan struct{})
	go l.Do(context.Background(), "a", func() error { <-release; return nil })
	time.Sleep(5 * time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	ran := false
	err := l.Do(ctx, "a", func() error { ran = true; return nil })
	if err == nil || ran {
		t.Fatalf("waiter ran (%v) or got no error (%v)", ran, err)
	}
	close(release)
}
