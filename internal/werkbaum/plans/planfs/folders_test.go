package planfs

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Every caller of sync gets a sync that started after its call and ended before its
// return, and callers that arrive while one runs share the next.
func TestFolderSyncCoversEveryCallerAndIsShared(t *testing.T) {
	const callers = 64
	sh := &folderShare{lock: make(chan struct{}, 1)}
	var clock atomic.Int64
	type round struct{ start, end int64 }
	var (
		mu     sync.Mutex
		rounds []round
	)
	arrived := make(chan struct{}, callers)
	first := true
	fsync := func() error {
		mu.Lock()
		wait := first
		first = false
		mu.Unlock()
		start := clock.Add(1)
		if wait {
			// The first sync runs until every caller has called: they must share what follows.
			for range callers - 1 {
				<-arrived
			}
			time.Sleep(5 * time.Millisecond)
		}
		end := clock.Add(1)
		mu.Lock()
		rounds = append(rounds, round{start, end})
		mu.Unlock()
		return nil
	}
	var wg sync.WaitGroup
	calls := make([][2]int64, callers)
	for i := range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if i > 0 {
				// The first caller starts the first sync alone.
				for clock.Load() == 0 {
					time.Sleep(10 * time.Microsecond)
				}
			}
			at := clock.Add(1)
			if i > 0 {
				arrived <- struct{}{}
			}
			if err := sh.syncWith(fsync); err != nil {
				t.Error(err)
			}
			calls[i] = [2]int64{at, clock.Add(1)}
		}()
	}
	wg.Wait()
	for i, c := range calls {
		covered := false
		for _, r := range rounds {
			if r.start > c[0] && r.end < c[1] {
				covered = true
			}
		}
		if !covered {
			t.Errorf("caller %d (called at %d, returned at %d) had no sync that started after its call and ended before its return; syncs: %v", i, c[0], c[1], rounds)
		}
	}
	if len(rounds) > callers/4 {
		t.Errorf("%d callers that arrived during one sync ran %d syncs; they should share them", callers, len(rounds))
	}
	if sh.running != nil || sh.next != nil {
		t.Errorf("after the last sync the share still has a sync running (%v) or waiting (%v)", sh.running, sh.next)
	}
}

// A failed sync fails every write that shares it: none of their renames is known durable.
func TestFolderSyncErrorReachesEverySharer(t *testing.T) {
	sh := &folderShare{lock: make(chan struct{}, 1)}
	release := make(chan struct{})
	boom := errors.New("disk gone")
	var syncs atomic.Int32
	fsync := func() error {
		if syncs.Add(1) == 1 {
			<-release
			return nil
		}
		return boom
	}
	firstDone := make(chan error)
	go func() { firstDone <- sh.syncWith(fsync) }()
	for syncs.Load() == 0 {
		time.Sleep(10 * time.Microsecond)
	}
	errs := make(chan error, 3)
	for range 3 {
		go func() { errs <- sh.syncWith(fsync) }()
	}
	for {
		sh.mu.Lock()
		joined := sh.next != nil
		sh.mu.Unlock()
		if joined {
			break
		}
		time.Sleep(10 * time.Microsecond)
	}
	time.Sleep(5 * time.Millisecond) // let the other two join the waiting sync too
	close(release)
	if err := <-firstDone; err != nil {
		t.Fatalf("the first sync: %v", err)
	}
	for range 3 {
		if err := <-errs; !errors.Is(err, boom) {
			t.Errorf("a write that shared the failed sync got %v, want %v", err, boom)
		}
	}
}
