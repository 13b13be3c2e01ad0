//go:build unix

package state

import (
	"os"
	"syscall"
)

// tryLockShared takes a shared advisory lock on f without waiting, the lock bbolt takes
// (flock). locked reports that another process holds it exclusively.
func tryLockShared(f *os.File) (unlock func(), locked bool) {
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB); err != nil {
		return nil, true
	}
	return func() { syscall.Flock(int(f.Fd()), syscall.LOCK_UN) }, false
}

// releaseLock drops the lock bbolt took on f. Closing f alone does not when bbolt has
// mapped the file: the mapping keeps the open file, and with it the lock, alive.
func releaseLock(f *os.File) { syscall.Flock(int(f.Fd()), syscall.LOCK_UN) }
