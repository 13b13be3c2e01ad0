package plans

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"talkd/internal/config"
	"talkd/internal/queue"
	"talkd/internal/werkbaum"
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

// Four plans saved at once in one folder by one process: every save lands, nothing is
// left behind, and the folder share is gone when no write uses it.
func TestFileSavesAcrossPlansInOneFolder(t *testing.T) {
	svc, cfg := serviceWithPlans(t, 4, nil, time.Second)
	const saves = 25
	var wg sync.WaitGroup
	for i := range cfg {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ref, err := svc.resolve(cfg[i].Key)
			for k := 0; err == nil && k < saves; k++ {
				err = saveNext(svc, ref, k)
			}
			if err != nil {
				t.Errorf("plan %s: %v", cfg[i].Key, err)
			}
		}()
	}
	wg.Wait()
	for _, p := range cfg {
		data, err := os.ReadFile(p.Path)
		if err != nil {
			t.Fatal(err)
		}
		if want := benchTexts[saves%2]; string(data) != string(want) {
			t.Errorf("plan %s holds %q after %d saves, want %q", p.Key, data, saves, want)
		}
	}
	left, _ := filepath.Glob(filepath.Join(filepath.Dir(cfg[0].Path), ".*talkd-tmp-*"))
	if len(left) > 0 {
		t.Errorf("temp files left behind: %v", left)
	}
	svc.folders.mu.Lock()
	n := len(svc.folders.m)
	svc.folders.mu.Unlock()
	if n != 0 {
		t.Errorf("%d folder shares kept after the writes ended", n)
	}
}

// serviceWithPlans makes a service with n plans in one folder, each holding benchTexts[0],
// on a real bbolt journal (eng may be nil; lockTimeout 0 is the default).
func serviceWithPlans(tb testing.TB, n int, eng *werkbaum.Engine, lockTimeout time.Duration) (*Service, []config.Plan) {
	tb.Helper()
	dir := tb.TempDir()
	var cfg []config.Plan
	for i := range n {
		p := filepath.Join(dir, fmt.Sprintf("p%d.werkbaum", i))
		if err := os.WriteFile(p, benchTexts[0], 0o644); err != nil {
			tb.Fatal(err)
		}
		cfg = append(cfg, config.Plan{Key: fmt.Sprintf("p%d", i), Path: p, Lang: "en"})
	}
	svc, err := New(Options{Plans: cfg, Engine: eng, DB: Bolt(stateDB(tb, dir)), Lanes: &queue.Lanes{}, LockTimeout: lockTimeout})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { svc.Close() })
	return svc, cfg
}
