//go:build !unix

package planfs

import (
	"io/fs"
	"os"
)

// keepOwner does nothing where files have no Unix owner (Windows: the new file inherits
// the folder's ACL).
func keepOwner(f *os.File, old fs.FileInfo) error { return nil }

func isRoot() bool { return false }

// writableByDaemon: Windows' read-only attribute is the only write bit Go reports.
func writableByDaemon(fi fs.FileInfo) bool { return fi.Mode().Perm()&0o200 != 0 }
