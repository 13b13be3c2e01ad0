package plans

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

// rootOp runs fn on the root's held folder (rootDir.dir): opened at start or by a reload,
// so a folder whose path was swapped for a symlink since still leads nowhere else; a
// reload resolves the path again.
func (p planRef) rootOp(fn func(r *os.Root) error) error {
	r, err := p.root.handle()
	if err != nil {
		return err
	}
	return fn(r)
}

// lstat is the file's Lstat.
func (p planRef) lstat() (fi fs.FileInfo, err error) {
	if p.root == nil {
		return os.Lstat(p.Path)
	}
	err = p.rootOp(func(r *os.Root) error {
		fi, err = r.Lstat(p.rel)
		return err
	})
	return fi, err
}

// openRead opens the file for reading without following a symlink in its last element
// (a configured plan) or outside the root (a root plan; a symlink inside is followed, and
// openPlan's identity check against the Lstat refuses it).
func (p planRef) openRead() (f *os.File, err error) {
	if p.root == nil {
		return os.OpenFile(p.Path, os.O_RDONLY|openNoFollow, 0)
	}
	err = p.rootOp(func(r *os.Root) error {
		f, err = r.OpenFile(p.rel, os.O_RDONLY|openNoFollow, 0)
		return err
	})
	return f, err
}

// readFile reads the whole file (recovery and the checks of revisionFor).
func (p planRef) readFile() (data []byte, err error) {
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
func (p planRef) relDir() string { return path.Dir(p.rel) }

// openFolder opens the plan's folder (for its lock and its sync).
func (p planRef) openFolder() (d *os.File, err error) {
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

// createTemp creates a new temp file beside the plan; name is what renameTemp and
// removeTemp take.
func (p planRef) createTemp() (f *os.File, name string, err error) {
	if p.root == nil {
		f, err = os.CreateTemp(filepath.Dir(p.Path), tempPrefix(p.Path)+"*")
		if err != nil {
			return nil, "", err
		}
		return f, f.Name(), nil
	}
	err = p.rootOp(func(r *os.Root) error {
		for try := 0; ; try++ {
			name = path.Join(p.relDir(), tempPrefix(p.rel)+strconv.FormatInt(time.Now().UnixNano(), 36)+"-"+strconv.FormatUint(tempSeq.Add(1), 36))
			f, err = r.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
			if err == nil || !errors.Is(err, fs.ErrExist) || try == 100 {
				return err
			}
		}
	})
	return f, name, err
}

// renameTemp renames the temp file over the plan.
func (p planRef) renameTemp(tmp string) error {
	if p.root == nil {
		return os.Rename(tmp, p.Path)
	}
	return p.rootOp(func(r *os.Root) error { return r.Rename(tmp, p.rel) })
}

// removeTemp removes the temp file of a write that did not happen.
func (p planRef) removeTemp(tmp string) {
	if p.root == nil {
		os.Remove(tmp)
		return
	}
	_ = p.rootOp(func(r *os.Root) error { return r.Remove(tmp) })
}

// removeStaleTemps deletes temp files of earlier, interrupted writes.
func (p planRef) removeStaleTemps() {
	if p.root == nil {
		matches, _ := filepath.Glob(filepath.Join(filepath.Dir(p.Path), tempPrefix(p.Path)+"*"))
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
		prefix := tempPrefix(p.rel)
		for _, n := range names {
			if strings.HasPrefix(n, prefix) {
				r.Remove(path.Join(p.relDir(), n))
			}
		}
		return err
	})
}
