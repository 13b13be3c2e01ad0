//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package planfs

import (
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"
)

// lockFolder takes an exclusive flock(2) on the plan's folder and returns its release.
//
// The lock is on the folder, not on the plan file: a write replaces the file by a rename,
// so a lock on the file would protect the old inode and the next writer would lock the
// new one and proceed; and a sibling lock file would show up in the user's `git status`
// and folder listings. The folder's inode survives every rename inside it. Two talkd
// processes (each with its own state directory) and any tool that takes the same lock
// therefore never interleave a checksum check and a rename on one plan. Advisory: a tool
// that does not take it is caught by the checksum check only.
//
// The wait is bounded (timeout): a process that holds the lock forever must not hang the
// plan's write lane.
//
// d is the open folder; the caller closes it after the release.
func lockFolder(d *os.File, timeout time.Duration) (func(), error) {
	deadline := time.Now().Add(timeout)
	wait := time.Millisecond
	for {
		err := syscall.Flock(int(d.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() { syscall.Flock(int(d.Fd()), syscall.LOCK_UN) }, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) {
			return nil, fmt.Errorf("lock the plan's folder: %w", err)
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("the plan's folder stayed locked by another process (another talkd, or a tool holding flock on it) for %s; nothing was written", timeout)
		}
		time.Sleep(wait)
		if wait < 20*time.Millisecond {
			wait *= 2
		}
	}
}
