package planfs

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// The file operations of a plan. A configured plan's go by its path (resolved at start);
// a root plan's go through os.Root on the root's folder (held open), which resolves every path one
// element at a time with openat and refuses any that leaves the folder, a symlink on the
// way included, at every single open, temp file and rename: a folder swapped for a
// symlink between the lookup and the open cannot lead a read or a write outside.

// rootOp runs fn on the root's held folder (Root.dir): opened at start or by a reload,
// so a folder whose path was swapped for a symlink since still leads nowhere else; a
// reload resolves the path again.
func (p Ref) rootOp(fn func(r *os.Root) error) error {
	r, err := p.root.Handle()
	if err != nil {
		return err
	}
	return fn(r)
}

// Lstat is the file's Lstat.
func (p Ref) Lstat() (fi fs.FileInfo, err error) {
	if p.root == nil {
		return os.Lstat(p.Path)
	}
	err = p.rootOp(func(r *os.Root) error {
		fi, err = r.Lstat(p.rel)
		return err
	})
	return fi, err
}

// OpenRead opens the file for reading without following a symlink in its last element
// (a configured plan) or outside the root (a root plan; a symlink inside is followed, and
// Open's identity check against the Lstat refuses it).
func (p Ref) OpenRead() (f *os.File, err error) {
	if p.root == nil {
		return os.OpenFile(p.Path, os.O_RDONLY|openNoFollow, 0)
	}
	err = p.rootOp(func(r *os.Root) error {
		f, err = r.OpenFile(p.rel, os.O_RDONLY|openNoFollow, 0)
		return err
	})
	return f, err
}

// ReadFile reads the whole file (recovery and the checks of revisionFor).
func (p Ref) ReadFile() (data []byte, err error) {
	if p.root == nil {
		return os.ReadFile(p.Path)
	}
	err = p.rootOp(func(r *os.Root) error {
		data, err = r.ReadFile(p.rel)
		return err
	})
	return data, err
}

// relDir is the folder of a root plan below the root ("." for the root itself).
func (p Ref) relDir() string { return path.Dir(p.rel) }

// OpenFolder opens the plan's folder (for its lock and its sync).
func (p Ref) OpenFolder() (d *os.File, err error) {
	if p.root == nil {
		return os.Open(filepath.Dir(p.Path))
	}
	err = p.rootOp(func(r *os.Root) error {
		d, err = r.Open(p.relDir())
		return err
	})
	return d, err
}

var tempSeq atomic.Uint64

// TempPrefix names temp files so that recovery can find and remove ones a crash left.
func TempPrefix(path string) string { return "." + filepath.Base(path) + ".talkd-tmp-" }

// TempName is a new temp file name beside the file rel (slash-separated, below a root),
// tag naming what it is for ("" for a write's temp file): unique in this process, and
// TempPrefix's, so that recovery removes it.
func TempName(rel, tag string) string {
	return path.Join(path.Dir(rel), TempPrefix(rel)+tag+strconv.FormatInt(time.Now().UnixNano(), 36)+"-"+strconv.FormatUint(tempSeq.Add(1), 36))
}

// CreateTemp creates a new temp file beside the plan; name is what RenameTemp and
// RemoveTemp take.
func (p Ref) CreateTemp() (f *os.File, name string, err error) {
	if p.root == nil {
		f, err = os.CreateTemp(filepath.Dir(p.Path), TempPrefix(p.Path)+"*")
		if err != nil {
			return nil, "", err
		}
		return f, f.Name(), nil
	}
	err = p.rootOp(func(r *os.Root) error {
		for try := 0; ; try++ {
			name = TempName(p.rel, "")
			f, err = r.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
			if err == nil || !errors.Is(err, fs.ErrExist) || try == 100 {
				return err
			}
		}
	})
	return f, name, err
}

// RenameTemp renames the temp file over the plan.
func (p Ref) RenameTemp(tmp string) error {
	if p.root == nil {
		return os.Rename(tmp, p.Path)
	}
	return p.rootOp(func(r *os.Root) error { return r.Rename(tmp, p.rel) })
}

// lstatTemp is the Lstat of a temp file beside the plan, by the name CreateTemp gave.
func (p Ref) lstatTemp(tmp string) (fi fs.FileInfo, err error) {
	if p.root == nil {
		return os.Lstat(tmp)
	}
	err = p.rootOp(func(r *os.Root) error {
		fi, err = r.Lstat(tmp)
		return err
	})
	return fi, err
}

// RemoveTemp removes the temp file of a write that did not happen.
func (p Ref) RemoveTemp(tmp string) {
	if p.root == nil {
		os.Remove(tmp)
		return
	}
	_ = p.rootOp(func(r *os.Root) error { return r.Remove(tmp) })
}

// RemoveStaleTemps deletes temp files of earlier, interrupted writes.
func (p Ref) RemoveStaleTemps() {
	if p.root == nil {
		matches, _ := filepath.Glob(filepath.Join(filepath.Dir(p.Path), TempPrefix(p.Path)+"*"))
		for _, m := range matches {
			os.Remove(m)
		}
		return
	}
	_ = p.rootOp(func(r *os.Root) error {
		d, err := r.Open(p.relDir())
		if err != nil {
			return err
		}
		names, err := d.Readdirnames(-1)
		d.Close()
		prefix := TempPrefix(p.rel)
		for _, n := range names {
			if strings.HasPrefix(n, prefix) {
				r.Remove(path.Join(p.relDir(), n))
			}
		}
		return err
	})
}
