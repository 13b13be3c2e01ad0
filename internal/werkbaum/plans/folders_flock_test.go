//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package plans

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Another process's flock on the folder still holds every write of this one off: the
// one that waits for it times out with the lock's error, and so do those queued behind
// it in this process, each within its own timeout (eight writes queued one timeout after
// another would take 2.4 s); once the lock is released, every plan is written.
func TestFolderLockHeldByAnotherProcess(t *testing.T) {
	const timeout = 300 * time.Millisecond
	svc, cfg := serviceWithPlans(t, 8, nil, timeout)
	other, err := os.Open(filepath.Dir(cfg[0].Path)) // its own open file: flock treats it as another process
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if err := syscall.Flock(int(other.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, len(cfg))
	start := time.Now()
	for _, p := range cfg {
		go func() {
			ref, err := svc.resolve(p.Key)
			if err == nil {
				err = saveNext(svc, ref, 0)
			}
			errs <- err
		}()
	}
	for range cfg {
		lockedError(t, <-errs)
	}
	if waited := time.Since(start); waited > 5*timeout {
		t.Errorf("%d saves behind a held folder lock, each with a timeout of %s, took %s: they waited one after another", len(cfg), timeout, waited)
	}
	for _, p := range cfg {
		if data, _ := os.ReadFile(p.Path); string(data) != string(benchTexts[0]) {
			t.Errorf("plan %s changed while its folder was locked: %q", p.Key, data)
		}
	}
	if err := syscall.Flock(int(other.Fd()), syscall.LOCK_UN); err != nil {
		t.Fatal(err)
	}
	for _, p := range cfg {
		ref, err := svc.resolve(p.Key)
		if err == nil {
			err = saveNext(svc, ref, 0)
		}
		if err != nil {
			t.Fatalf("save after the lock was released: %v", err)
		}
		if data, _ := os.ReadFile(p.Path); string(data) != string(benchTexts[1]) {
			t.Errorf("plan %s holds %q after its save", p.Key, data)
		}
	}
}

// lockedError is what a save answers when its folder's lock was not to be had.
func lockedError(t *testing.T, err error) {
	t.Helper()
	if err == nil || !strings.Contains(err.Error(), "stayed locked") || !strings.Contains(err.Error(), "nothing was written") {
		t.Fatalf("save with the folder locked elsewhere: got %v, want the folder lock's timeout", err)
	}
}
