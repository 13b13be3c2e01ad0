//go:build linux

package planfs

import (
	"errors"
	"os"
	"path"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// exchangeTemp swaps the temp file tmp and the plan's file in one step
// (renameat2 with RENAME_EXCHANGE, relative to folder, the plan's folder held open): the
// plan's name then holds the new text, and tmp the file that held that name at that
// instant, which the write then compares with the file it checked. ok is false where the
// kernel or the file system has no exchange (EINVAL, ENOSYS, EOPNOTSUPP; EXDEV from an
// overlay that cannot exchange): the caller renames instead. An error wrapping
// fs.ErrNotExist means the plan's name held no file.
func exchangeTemp(folder *os.File, p Ref, tmp string) (ok bool, err error) {
	fd := int(folder.Fd())
	name := filepath.Base(p.Path)
	if p.root != nil {
		name = path.Base(p.rel)
	}
	err = unix.Renameat2(fd, filepath.Base(tmp), fd, name, unix.RENAME_EXCHANGE)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, unix.EINVAL), errors.Is(err, unix.ENOSYS), errors.Is(err, unix.EOPNOTSUPP), errors.Is(err, unix.EXDEV):
		return false, nil
	}
	return true, &os.LinkError{Op: "exchange", Old: tmp, New: p.Path, Err: err}
}
