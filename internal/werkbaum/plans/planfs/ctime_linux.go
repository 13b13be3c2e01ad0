//go:build linux

package planfs

import (
	"io/fs"
	"syscall"
)

// changeTime is the inode's ctime in nanoseconds (0 if unknown).
func changeTime(fi fs.FileInfo) int64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return st.Ctim.Nano()
	}
	return 0
}
