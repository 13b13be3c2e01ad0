package planfs

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
	"time"
)

// Every open of a plan file goes through Open: reads, resources, inspect, the
// summaries and the check right before a write's rename. The configured path was resolved
// at start (config); a root plan's path is resolved through its root at this very open
// (Ref.OpenRead, os.Root). What is checked here is that the file there is still that
// kind of file: not a symlink (a `git pull` or a hostile user can swap one in, and following it
// would serve or overwrite a file outside the plan's folder), a regular file (a FIFO
// would block, a device would stream forever), and not larger than the engine's input
// limit (a plan grown to 400 MB must not be read into memory only to be refused by the
// engine afterwards).

// File is an open plan file and what was checked about it.
type File struct {
	f  *os.File
	fi fs.FileInfo // of the open descriptor
}

// Open opens a plan's file for reading after checking it: Lstat of the path (no
// symlink, a regular file), an open that does not follow a symlink swapped in meanwhile
// (O_NOFOLLOW where the system has it) and does not block on a FIFO, and the descriptor's
// identity (device and inode) equal to the one checked. Its errors name the plan, not the
// path: they reach clients (in shared mode over the network), and the folders of the
// daemon's host are none of their business; the caller logs the path for the daemon's
// owner.
//
// A root plan is opened through its root (Ref.OpenRead), which refuses every path
// that leads out of the root's folder, at this very open.
//
// A file saved by rename between the check and the open (another talkd's write, an
// editor's save) is simply the next version: Open checks and opens again, so that no
// caller sees the swap unless the path keeps naming new files for openAttempts tries.
func Open(p Ref, limit int64) (*File, error) {
	for attempt := 1; ; attempt++ {
		pf, err := openPlanOnce(p, limit)
		if !errors.Is(err, ErrSwapped) || attempt == openAttempts {
			return pf, err
		}
	}
}

// openAttempts bounds Open's checks and opens of one call: a check and an open take
// microseconds, a save by rename takes a write, a sync and a rename, so a few tries see
// a stable file unless something replaces it without pause.
const openAttempts = 8

// openPlanOnce is one check and open of Open.
func openPlanOnce(p Ref, limit int64) (*File, error) {
	key := p.Key
	li, err := p.Lstat()
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, &missingError{key: key}
		}
		return nil, fmt.Errorf("the file of plan %q cannot be read: %w", key, Unpath(err))
	}
	if err := checkKind(key, li, limit); err != nil {
		return nil, err
	}
	f, err := p.OpenRead()
	if err != nil {
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return nil, ErrSwapped
		case isSymlinkErr(err):
			return nil, symlinkError(key)
		}
		return nil, fmt.Errorf("the file of plan %q cannot be read: %w", key, Unpath(err))
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("the file of plan %q cannot be read: %w", key, Unpath(err))
	}
	if !os.SameFile(li, fi) {
		f.Close()
		return nil, ErrSwapped
	}
	if err := checkKind(key, fi, limit); err != nil {
		f.Close()
		return nil, err
	}
	return &File{f: f, fi: fi}, nil
}

// checkKind refuses what is not a regular file of at most limit bytes.
func checkKind(key string, fi fs.FileInfo, limit int64) error {
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		return symlinkError(key)
	case !fi.Mode().IsRegular():
		return notRegularError(key)
	case limit > 0 && fi.Size() > limit:
		return tooLargeError(key, fi.Size(), limit)
	}
	return nil
}

// isSymlinkErr reports an open refused because the last path element is a symlink
// (O_NOFOLLOW: ELOOP on Linux and the BSDs, EMLINK on FreeBSD/NetBSD before 2016).
func isSymlinkErr(err error) bool {
	return errors.Is(err, syscall.ELOOP) || errors.Is(err, syscall.EMLINK)
}

// ReadAll reads the open file, at most limit bytes: the file can grow between the stat
// and the read (an editor appending), and a read must still not exceed the limit.
func (pf *File) ReadAll(key string, limit int64) ([]byte, error) {
	size := pf.fi.Size()
	r := io.Reader(pf.f)
	if limit > 0 {
		r = io.LimitReader(pf.f, limit+1)
	}
	buf := make([]byte, 0, size+1) // +1: a read that finds the end needs no growth
	for {
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("the file of plan %q cannot be read: %w", key, Unpath(err))
		}
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
	}
	if limit > 0 && int64(len(buf)) > limit {
		return nil, tooLargeError(key, int64(len(buf)), limit)
	}
	return buf, nil
}

// Close closes the file.
func (pf *File) Close() { pf.f.Close() }

// Info is the open descriptor's FileInfo, as checked.
func (pf *File) Info() fs.FileInfo { return pf.fi }

// Ident is what decides whether a plan file may have changed since it was hashed:
// the file (device and inode, via os.SameFile), its size, mtime and, where the system
// reports it, ctime (which a tool that restores the mtime cannot set back).
type Ident struct {
	fi    fs.FileInfo
	size  int64
	mtime time.Time
	ctime int64
}

func IdentOf(fi fs.FileInfo) Ident {
	return Ident{fi: fi, size: fi.Size(), mtime: fi.ModTime(), ctime: changeTime(fi)}
}

// same reports whether two identities name the same unchanged file.
func (a Ident) Same(b Ident) bool {
	return a.fi != nil && b.fi != nil && a.size == b.size && a.mtime.Equal(b.mtime) && a.ctime == b.ctime &&
		os.SameFile(a.fi, b.fi)
}

// RacyWindow: an identity whose mtime or ctime is this close to the moment it was hashed
// is not trusted (git's "racily clean" rule): a second change within the same timestamp
// tick of a coarse file system would keep size and times, and must still be noticed.
const RacyWindow = 2 * time.Second

// trusted reports whether a hash taken at hashed may stand for a file with this identity.
func (a Ident) Trusted(hashed time.Time) bool {
	latest := a.mtime
	if a.ctime != 0 {
		if c := time.Unix(0, a.ctime); c.After(latest) {
			latest = c
		}
	}
	return hashed.Sub(latest) > RacyWindow
}
