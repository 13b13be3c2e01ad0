package planfs

import (
	"fmt"
	"os"
	"sync"
	"time"
)

// Folders is what this process's writes into one folder share while they save:
// the folder lock and the folder's sync.
//
// The folder lock is an flock(2) (lockFolder), taken without blocking and polled with
// sleeps of 1 ms and more, because a blocking flock cannot be given up after a timeout.
// Between the writes of one process that poll was the wait: four plans saved in one
// folder at once slept on each other's flock for a check and a rename of some 100 µs.
// So the writes of this process first queue for the folder in memory (a hand-over, no
// sleep), and only the one at the head takes the flock, which then waits only for other
// processes.
//
// The folder's fsync makes a rename durable; one fsync makes every rename done in the
// folder before it durable. Writes that finish their renames while a sync runs share the
// next one (syncRound) instead of syncing one after the other.
//
// Measured with BenchmarkStorageAcrossPlans (docs/bench-plans.md).
type Folders struct {
	// beforeRename, when set (tests), runs between a write's last check and its rename.
	beforeRename func()

	mu sync.Mutex
	m  map[string]*folderShare // the folder's path → its share while a write uses it
}

// folderShare is one folder's: dir identifies the folder (a folder swapped in under the
// same path gets no share: its writes lock and sync it on their own).
type folderShare struct {
	dir   os.FileInfo
	users int           // writes holding the share; at 0 it leaves the map
	lock  chan struct{} // one token: the write that holds it may take the flock
	mu    sync.Mutex    // guards running and next
	// running is the sync in progress, nil if none; next the sync that starts when it
	// ends, joined by the writes that arrive meanwhile (their renames came after the
	// start of running).
	running, next *syncRound
}

// InUse is how many folders writes hold a share of now (none once they have all ended:
// a share does not outlive its writes).
func (fs *Folders) InUse() int {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return len(fs.m)
}

type syncRound struct {
	done chan struct{}
	err  error
}

// use returns the share of the folder at path, open as folder, and its release; nil when
// the folder is not the one the share was made for.
func (fs *Folders) use(path string, folder *os.File) (*folderShare, func()) {
	fi, err := folder.Stat()
	if err != nil {
		return nil, func() {}
	}
	fs.mu.Lock()
	defer fs.mu.Unlock()
	sh := fs.m[path]
	if sh == nil {
		if fs.m == nil {
			fs.m = make(map[string]*folderShare)
		}
		sh = &folderShare{dir: fi, lock: make(chan struct{}, 1)}
		fs.m[path] = sh
	} else if !os.SameFile(sh.dir, fi) {
		return nil, func() {}
	}
	sh.users++
	return sh, func() {
		fs.mu.Lock()
		defer fs.mu.Unlock()
		if sh.users--; sh.users == 0 {
			delete(fs.m, path)
		}
	}
}

// lockFolder takes the folder lock for this write: first the folder's place in this
// process (sh may be nil: no share), then the flock, both within timeout.
func (sh *folderShare) lockFolder(folder *os.File, timeout time.Duration) (func(), error) {
	if sh == nil {
		return lockFolder(folder, timeout)
	}
	deadline := time.Now().Add(timeout)
	wait := time.NewTimer(timeout)
	select {
	case sh.lock <- struct{}{}:
		wait.Stop()
	case <-wait.C:
		return nil, fmt.Errorf("the plan's folder stayed locked for %s by other writes of this daemon (waiting for another process's lock on it, or for a slow disk); nothing was written", timeout)
	}
	unlock, err := lockFolder(folder, time.Until(deadline))
	if err != nil {
		<-sh.lock
		return nil, err
	}
	return func() {
		unlock()
		<-sh.lock
	}, nil
}

// sync makes the renames done in the folder so far durable: an fsync of the folder that
// starts after the call, its own or one it shares with the writes that arrive with it.
func (sh *folderShare) sync(folder *os.File) error {
	if sh == nil {
		return folder.Sync()
	}
	return sh.syncWith(folder.Sync)
}

// syncWith is sync with the fsync as a function (tests count and order the calls).
func (sh *folderShare) syncWith(fsync func() error) error {
	sh.mu.Lock()
	if sh.running == nil {
		r := &syncRound{done: make(chan struct{})}
		sh.running = r
		sh.mu.Unlock()
		sh.run(r, fsync)
		return r.err
	}
	prev := sh.running
	r, lead := sh.next, false
	if r == nil {
		r, lead = &syncRound{done: make(chan struct{})}, true
		sh.next = r
	}
	sh.mu.Unlock()
	if lead {
		// The first to join runs the round once the sync in progress has ended (run has
		// then made it the running one).
		<-prev.done
		sh.run(r, fsync)
	} else {
		<-r.done
	}
	return r.err
}

// run syncs the folder for round r, then hands the running place to the next round (its
// leader is waiting for r to end) or leaves it empty.
func (sh *folderShare) run(r *syncRound, fsync func() error) {
	r.err = fsync()
	sh.mu.Lock()
	sh.running, sh.next = sh.next, nil
	sh.mu.Unlock()
	close(r.done)
}
