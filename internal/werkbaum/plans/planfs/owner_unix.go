//go:build unix

package planfs

import (
	"io/fs"
	"os"
	"syscall"
)

// keepOwner gives the temp file the owner and group of the plan it replaces. Only root
// may give a file away; an unprivileged daemon can at most keep a group it belongs to,
// and a plan it may write but does not own becomes its own by the rename, as with any
// editor that saves by rename. The error matters only for root (the caller decides).
func keepOwner(f *os.File, old fs.FileInfo) error {
	st, ok := old.Sys().(*syscall.Stat_t)
	if !ok {
		return nil
	}
	uid, gid := int(st.Uid), int(st.Gid)
	if uid == os.Geteuid() && gid == os.Getegid() {
		return nil
	}
	err := f.Chown(uid, gid)
	if err != nil && !isRoot() && gid != os.Getegid() {
		// Not root: the owner cannot be kept, but a group the daemon's user is in can.
		f.Chown(-1, gid)
	}
	return err
}

// isRoot reports whether the daemon runs with root's privileges.
func isRoot() bool { return os.Geteuid() == 0 }

// writableByDaemon reports whether the daemon's user has a write bit on the file: the
// owner's bit if it owns the file, else the group's if the file's group is one of its
// groups, else the others'. Root may write anything, so for root any write bit counts: a
// plan made 0444 is refused even then, because the rename would quietly undo what its
// owner meant by it.
func writableByDaemon(fi fs.FileInfo) bool {
	perm := fi.Mode().Perm()
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return perm&0o200 != 0
	}
	uid := os.Geteuid()
	switch {
	case uid == 0:
		return perm&0o222 != 0
	case int(st.Uid) == uid:
		return perm&0o200 != 0
	case inGroup(int(st.Gid)):
		return perm&0o020 != 0
	}
	return perm&0o002 != 0
}

func inGroup(gid int) bool {
	if gid == os.Getegid() {
		return true
	}
	groups, _ := os.Getgroups()
	for _, g := range groups {
		if g == gid {
			return true
		}
	}
	return false
}
