// Package state keeps talkd's durable state in one bbolt file under the state directory:
// the mute (saved synchronously, it must survive a crash), the announcement history
// (saved in batches by the queue) and, in their own buckets, the plans' revisions and
// request journal and the documents (used by the plan store through plans.Bolt) and the
// mirror's pending commits. It is the daemon's package, not the queue's, for that reason.
package state

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"go.etcd.io/bbolt"

	"talkd/internal/queue"
)

var (
	bucketMeta    = []byte("meta")
	bucketHistory = []byte("history")
	keyMute       = []byte("mute")
	keySeq        = []byte("seq")
)

// lockTimeout bounds the wait for the file lock, so a second daemon on the same state
// directory fails with a message instead of waiting forever.
const lockTimeout = 2 * time.Second

// DefaultMapSize is the address space mapped for the database file when it is opened, on
// 64-bit platforms other than Windows.
//
// bbolt grows its mapping by unmapping the file and mapping it again larger. When the new
// mapping fails (an ext4 file system that turned read-only after an I/O error refuses
// shared mappings of files open for writing with EROFS) bbolt stays unmapped, and every
// later transaction of every user of the file fails with bbolt.ErrInvalidMapping until the
// file is opened again. Mapping 1 GiB up front means the mapping never has to change while
// the file is smaller than that (the state database is kilobytes to a few megabytes), so
// a failing disk refuses writes but reads keep working. It costs address space only: the
// resident memory is the pages actually read, as before. Windows is left out because
// bbolt there grows the file itself to the mapped size; 32-bit platforms because 1 GiB is
// a large part of their address space.
const DefaultMapSize = 1 << 30

// Options tune Open; the zero value is what the daemon uses.
type Options struct {
	// MapSize is the address space mapped at open: 0 means DefaultMapSize where it
	// applies (see there), a negative value means bbolt's default (grow on demand).
	MapSize int
	// Log receives a line when the database is reopened after a failed mapping; nil
	// discards it.
	Log *slog.Logger

	// CheckApart, when set, runs the page-by-page check at start in another process
	// (the daemon runs its own binary on the file, which calls CheckFile): a damaged page
	// whose offsets lead outside the file makes bbolt read unbacked memory, a fault that
	// kills the process that reads it. It returns nil when the file passed, a
	// *DamagedError when it did not or the checking process died. nil runs the check
	// in this process.
	CheckApart func(path string) error

	// openFile replaces os.OpenFile for the database file (tests simulate a read-only
	// disk with it).
	openFile func(name string, flag int, perm os.FileMode) (*os.File, error)
}

func (o Options) mapSize() int {
	switch {
	case o.MapSize < 0:
		return 0
	case o.MapSize > 0:
		return o.MapSize
	case runtime.GOOS == "windows" || strconv.IntSize < 64:
		return 0
	}
	return DefaultMapSize
}

// errNotOpen is returned while the database is closed: after Close, or after a reopen
// failed entirely (then the next transaction tries again).
var errNotOpen = errors.New("state database is not open")

// DB is the daemon's state database.
//
// Every transaction goes through DB (View, Update, or the methods for the mute and the
// history; there is no Batch: bbolt runs a batch's commit on a goroutine of its own, out
// of reach of the panic recovery in run), so that a database left unmapped by a failed remap can be closed and
// opened again under the write lock of mu without anyone holding the old handle: a
// transaction that fails with bbolt.ErrInvalidMapping reopens the file and runs once more.
// When the file can no longer be opened for writing (a read-only disk) it is opened
// read-only, so reads keep working; each later write first checks whether the file can
// be opened for writing again and, if so, reopens it read-write, so talkd recovers
// without a restart once the disk is writable. Committed data is never at risk: a
// failed transaction was rolled back, and the reopened file holds every commit.
type DB struct {
	path string
	opts Options

	mu       sync.RWMutex // read-locked by each transaction, write-locked to reopen
	bolt     *bbolt.DB    // nil while not open
	readOnly bool         // opened read-only after opening for writing failed
	closed   bool         // Close was called: no reopen any more

	// damaged is set (to a *DamagedError) when a transaction panicked: bbolt panics on a
	// page it cannot read, and after that neither its pages nor its in-memory state can
	// be trusted, so every later transaction fails with the same error instead of
	// touching the file again.
	damaged atomic.Pointer[DamagedError]
}

// DamagedError says that the state database file cannot be used: a page or its header
// is not what bbolt wrote, or it is empty. Its message names the file, the problem and
// how to start again, because it is what the user reads in the log when talkd refuses
// to start.
type DamagedError struct {
	Path    string
	Problem string
}

func (e *DamagedError) Error() string {
	return fmt.Sprintf("state database %s is damaged (%s): stop talkd, move the file aside (mv %s %s.damaged) and start talkd again; it then starts with an empty state (no mute, no history; plan writes from before report unknown, the plan files themselves are untouched)",
		e.Path, e.Problem, e.Path, e.Path)
}

// Open opens (or creates) the database at path. A second daemon on the same state
// directory gets a clear error instead of waiting forever for the file lock.
func Open(path string, opts Options) (*DB, error) {
	if opts.Log == nil {
		opts.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("create state directory: %w", err)
	}
	d := &DB{path: path, opts: opts}
	if err := d.refuseEmpty(); err != nil {
		return nil, err
	}
	// Before bbolt maps the file: a header naming pages past its end (bounds.go).
	if err := d.checkBounds(); err != nil {
		return nil, err
	}
	// Every page is checked once at start (milliseconds for the few megabytes the state
	// holds), so a damaged file stops the start with a message instead of failing, or
	// panicking, later in some request.
	checked := false
	if opts.CheckApart != nil {
		if _, err := os.Stat(path); err == nil {
			if err := opts.CheckApart(path); err != nil {
				return nil, err
			}
			checked = true
		}
	}
	b, err := d.open(false)
	if err != nil {
		return nil, err
	}
	d.bolt = b
	if !checked {
		err = d.View(checkPages(d.path))
	}
	if err == nil {
		err = d.Update(func(tx *bbolt.Tx) error {
			for _, name := range [][]byte{bucketMeta, bucketHistory} {
				if _, err := tx.CreateBucketIfNotExists(name); err != nil {
					return err
				}
			}
			return nil
		})
	}
	if err != nil {
		d.Close()
		var de *DamagedError
		if errors.As(err, &de) {
			return nil, de
		}
		return nil, fmt.Errorf("prepare state database %s: %w", path, err)
	}
	return d, nil
}

// checkPages is the page-by-page check at start as a transaction: bbolt's tx.Check.
func checkPages(path string) func(tx *bbolt.Tx) error {
	return func(tx *bbolt.Tx) error {
		var first error
		n := 0
		for err := range tx.Check() {
			if first == nil {
				first = err
			}
			n++
		}
		if first != nil {
			return &DamagedError{Path: path, Problem: fmt.Sprintf("%d problem(s) found by the check at start, the first: %v", n, first)}
		}
		return nil
	}
}

// CheckFile runs the checks of Open on the file at path without changing it (read-only,
// under a shared lock): the bounds of its header, then every page. It is what the daemon
// runs in a process of its own (Options.CheckApart). A damaged file is a *DamagedError.
func CheckFile(path string, opts Options) error {
	if opts.Log == nil {
		opts.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	d := &DB{path: path, opts: opts}
	if err := d.refuseEmpty(); err != nil {
		return err
	}
	if err := d.checkBounds(); err != nil {
		return err
	}
	b, err := d.open(true)
	if err != nil {
		return err
	}
	d.bolt, d.readOnly = b, true
	defer d.Close()
	err = d.View(checkPages(path))
	var de *DamagedError
	if errors.As(err, &de) {
		return de
	}
	return err
}

// refuseEmpty refuses an existing file of 0 bytes. bbolt writes the first pages of a new
// file before it returns from creating it, so it never leaves an empty file behind; one
// that is empty was truncated or replaced by something else, and bbolt would silently
// start a fresh database in it (the journal gone: applied writes reported unknown,
// revisions starting again at 1). A file another daemon is creating right now is locked:
// that gets the usual "is another talkd running" answer from the open instead.
func (d *DB) refuseEmpty() error {
	fi, err := os.Stat(d.path)
	if err != nil || fi.Size() != 0 || !fi.Mode().IsRegular() {
		return nil // missing (created by the open), or the open reports the problem
	}
	f, err := os.Open(d.path)
	if err != nil {
		return nil
	}
	defer f.Close()
	unlock, locked := tryLockShared(f)
	if locked {
		return nil // another talkd is creating it; the open says so after its timeout
	}
	defer unlock()
	if fi, err := f.Stat(); err == nil && fi.Size() == 0 {
		return &DamagedError{Path: d.path, Problem: "the file is empty (0 bytes), which bbolt never leaves behind"}
	}
	return nil
}

// open opens the file with bbolt, read-write or read-only. Where the address space is
// limited (ulimit -v) so that the reserved mapping is refused, it opens the file with
// bbolt's growing mapping instead and says so in the log.
func (d *DB) open(readOnly bool) (b *bbolt.DB, err error) {
	// The files bbolt opens, so that their lock can be released and they be closed when it
	// panics: it has locked and mapped the file by then and would keep the lock (every
	// later open of the file, a reopen in this process too, would say "is another talkd
	// running"). The mapping itself stays until the process ends.
	var opened []*os.File
	openFile := d.opts.openFile
	if openFile == nil {
		openFile = os.OpenFile
	}
	defer func() {
		// bbolt panics on some damaged pages while it opens the file (the freelist).
		if r := recover(); r != nil {
			for _, f := range opened {
				releaseLock(f)
				f.Close()
			}
			b, err = nil, &DamagedError{Path: d.path, Problem: fmt.Sprintf("opening it failed: %v", r)}
		}
	}()
	opts := bbolt.Options{
		Timeout:         lockTimeout,
		InitialMmapSize: d.opts.mapSize(),
		ReadOnly:        readOnly,
		OpenFile: func(name string, flag int, perm os.FileMode) (*os.File, error) {
			f, err := openFile(name, flag, perm)
			if err == nil {
				opened = append(opened, f)
			}
			return f, err
		},
	}
	b, err = bbolt.Open(d.path, 0o600, &opts)
	if err != nil && opts.InitialMmapSize > 0 && errors.Is(err, syscall.ENOMEM) {
		d.opts.Log.Warn("state database: the address space for its mapping was refused; it is mapped as it grows", "path", d.path, "size", opts.InitialMmapSize, "err", err)
		opts.InitialMmapSize = 0
		b, err = bbolt.Open(d.path, 0o600, &opts)
	}
	if err != nil {
		if errors.Is(err, bbolt.ErrTimeout) {
			return nil, fmt.Errorf("state database %s is locked: is another talkd running with the same state directory?", d.path)
		}
		if errors.Is(err, bbolt.ErrInvalid) || errors.Is(err, bbolt.ErrChecksum) || errors.Is(err, bbolt.ErrVersionMismatch) {
			return nil, &DamagedError{Path: d.path, Problem: err.Error()}
		}
		return nil, fmt.Errorf("open state database %s: %w", d.path, err)
	}
	return b, nil
}

// Close closes the database file.
func (d *DB) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.closed = true
	if d.bolt == nil {
		return nil
	}
	err := d.bolt.Close()
	d.bolt = nil
	return err
}

// View runs fn in a read-only transaction, like bbolt.DB.View, reopening the database
// once if it was found unmapped.
func (d *DB) View(fn func(*bbolt.Tx) error) error {
	return d.run(false, func(b *bbolt.DB) error { return b.View(fn) })
}

// Update runs fn in a read-write transaction, like bbolt.DB.Update, reopening the
// database once if it was found unmapped (fn then runs again: the failed attempt was
// rolled back).
func (d *DB) Update(fn func(*bbolt.Tx) error) error {
	return d.run(true, func(b *bbolt.DB) error { return b.Update(fn) })
}

// run runs one transaction on the current handle. When it fails because the handle is
// unmapped, closed after a failed reopen, or read-only while a write is wanted, the
// database is reopened and the transaction runs once more. A panic inside the
// transaction (bbolt panics on a page it cannot read) becomes a *DamagedError, and the
// read lock is released whatever happens, so Close and a reopen never wait for it.
func (d *DB) run(write bool, tx func(*bbolt.DB) error) error {
	for attempt := 0; ; attempt++ {
		b, readOnly, err := d.attempt(write, tx)
		if errors.Is(err, errNotOpen) && b == nil && d.isClosed() {
			return err
		}
		var de *DamagedError
		if err == nil || attempt > 0 || errors.As(err, &de) || !d.needsReopen(b, readOnly, write, err) {
			return err
		}
		if rerr := d.reopen(b, write); rerr != nil {
			return fmt.Errorf("%w (%w)", err, rerr)
		}
	}
}

// attempt runs tx once under the read lock and reports the handle it used.
func (d *DB) attempt(write bool, tx func(*bbolt.DB) error) (b *bbolt.DB, readOnly bool, err error) {
	if de := d.damaged.Load(); de != nil {
		return nil, false, de
	}
	d.mu.RLock()
	defer d.mu.RUnlock()
	b, readOnly = d.bolt, d.readOnly
	switch {
	case d.closed:
		return nil, readOnly, errNotOpen
	case b == nil:
		return nil, readOnly, errNotOpen
	case write && readOnly:
		return b, readOnly, fmt.Errorf("state database: %w", bbolt.ErrDatabaseReadOnly)
	}
	defer func() {
		if r := recover(); r != nil {
			if !panickedInBolt() {
				// The caller's own code panicked (a bug), not bbolt on a page: bbolt has
				// rolled the transaction back and the file is intact, so it must not be
				// declared damaged (the message would have the user move it aside).
				d.opts.Log.Error("state database: a transaction panicked in talkd's own code and was rolled back", "path", d.path, "panic", r, "stack", string(debug.Stack()))
				err = fmt.Errorf("state transaction panicked (rolled back, nothing saved): %v", r)
				return
			}
			de := &DamagedError{Path: d.path, Problem: fmt.Sprintf("reading it failed: %v", r)}
			if d.damaged.CompareAndSwap(nil, de) {
				d.opts.Log.Error("state database damaged: every later use of it fails until it is moved aside and talkd restarted", "path", d.path, "err", de)
			}
			err = d.damaged.Load()
		}
	}()
	return b, readOnly, tx(b)
}

// panickedInBolt reports whether the panic being recovered was raised in bbolt's code: it
// is called from the deferred recovery, so the panicking frames are still on the stack,
// below runtime.gopanic and the runtime's own helpers (index checks, nil maps, faults).
func panickedInBolt() bool {
	pc := make([]uintptr, 64)
	frames := runtime.CallersFrames(pc[:runtime.Callers(2, pc)])
	inPanic := false
	for {
		f, more := frames.Next()
		switch {
		case f.Function == "runtime.gopanic":
			inPanic = true
		case inPanic && !strings.HasPrefix(f.Function, "runtime."):
			return strings.HasPrefix(f.Function, "go.etcd.io/bbolt.") || strings.HasPrefix(f.Function, "go.etcd.io/bbolt/")
		}
		if !more {
			return false
		}
	}
}

func (d *DB) isClosed() bool {
	d.mu.RLock()
	defer d.mu.RUnlock()
	return d.closed
}

// needsReopen reports whether err from a transaction on b calls for a reopen.
func (d *DB) needsReopen(b *bbolt.DB, readOnly, write bool, err error) bool {
	switch {
	case b == nil, write && readOnly, errors.Is(err, bbolt.ErrInvalidMapping):
		return true
	case !write:
		return false
	}
	// A write that needed a larger mapping fails with bbolt's "mmap allocate error" (not
	// a wrapped error) and leaves the handle unmapped: an empty read transaction shows it.
	return errors.Is(b.View(func(*bbolt.Tx) error { return nil }), bbolt.ErrInvalidMapping)
}

// reopen replaces the handle old: read-write if the file can be opened for writing,
// else read-only. It does nothing when another transaction replaced old meanwhile, and
// keeps a read-only handle when the file still cannot be opened for writing. The error
// says why a writer cannot go on; reads may still work then.
func (d *DB) reopen(old *bbolt.DB, write bool) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return errNotOpen
	}
	if d.bolt != old {
		return nil
	}
	if old != nil && d.readOnly {
		// Probe before giving up the read-only handle: its shared file lock would make a
		// read-write open wait for the lock timeout.
		if err := d.probeWritable(); err != nil {
			return fmt.Errorf("it cannot be written yet: %w", err)
		}
	}
	if old != nil {
		if err := old.Close(); err != nil {
			d.opts.Log.Warn("state database: closing the unmapped handle", "path", d.path, "err", err)
		}
		d.bolt = nil
	}
	b, err := d.open(false)
	if err == nil {
		d.bolt, d.readOnly = b, false
		d.opts.Log.Warn("state database reopened after a failed mapping", "path", d.path)
		return nil
	}
	rb, rerr := d.open(true)
	if rerr != nil {
		d.opts.Log.Error("state database cannot be reopened", "path", d.path, "err", err, "read_only_err", rerr)
		return fmt.Errorf("reopen the state database: %w", err)
	}
	d.bolt, d.readOnly = rb, true
	d.opts.Log.Warn("state database reopened read-only: it cannot be opened for writing", "path", d.path, "err", err)
	if write {
		return fmt.Errorf("reopened read-only: %w", err)
	}
	return nil
}

// probeWritable opens the file for writing and closes it again.
func (d *DB) probeWritable() error {
	open := d.opts.openFile
	if open == nil {
		open = os.OpenFile
	}
	f, err := open(d.path, os.O_RDWR, 0o600)
	if err != nil {
		return err
	}
	return f.Close()
}

// LoadMute returns the saved mute state (not muted when none was saved).
func (d *DB) LoadMute() (queue.MuteState, error) {
	var m queue.MuteState
	err := d.View(func(tx *bbolt.Tx) error {
		raw := tx.Bucket(bucketMeta).Get(keyMute)
		if raw == nil {
			return nil
		}
		return json.Unmarshal(raw, &m)
	})
	return m, err
}

// SaveMute stores the mute state durably.
func (d *DB) SaveMute(m queue.MuteState) error {
	raw, err := json.Marshal(m)
	if err != nil {
		return err
	}
	return d.Update(func(tx *bbolt.Tx) error {
		return tx.Bucket(bucketMeta).Put(keyMute, raw)
	})
}

// LoadHistory returns up to limit most recent entries, oldest first.
func (d *DB) LoadHistory(limit int) ([]queue.Entry, error) {
	var out []queue.Entry
	err := d.View(func(tx *bbolt.Tx) error {
		c := tx.Bucket(bucketHistory).Cursor()
		for k, v := c.Last(); k != nil && len(out) < limit; k, v = c.Prev() {
			var e queue.Entry
			if err := json.Unmarshal(v, &e); err != nil {
				return fmt.Errorf("history entry %x: %w", k, err)
			}
			e.Seq = binary.BigEndian.Uint64(k)
			out = append(out, e)
		}
		return nil
	})
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out, err
}

// SaveHistory writes changed entries in one transaction, remembers the highest number
// used, and trims the history to the newest keep entries.
func (d *DB) SaveHistory(changed []queue.Entry, keep int) error {
	return d.Update(func(tx *bbolt.Tx) error {
		b := tx.Bucket(bucketHistory)
		meta := tx.Bucket(bucketMeta)
		maxSeq := seqOf(meta.Get(keySeq))
		for _, e := range changed {
			raw, err := json.Marshal(e)
			if err != nil {
				return err
			}
			if err := b.Put(seqKey(e.Seq), raw); err != nil {
				return err
			}
			maxSeq = max(maxSeq, e.Seq)
		}
		if err := meta.Put(keySeq, seqKey(maxSeq)); err != nil {
			return err
		}
		// Numbers are handed out contiguously, so everything at or below maxSeq-keep is
		// outside the window; deleting from the front costs only what is deleted.
		if maxSeq > uint64(keep) {
			limit := maxSeq - uint64(keep)
			var old [][]byte
			c := b.Cursor()
			for k, _ := c.First(); k != nil && seqOf(k) <= limit; k, _ = c.Next() {
				old = append(old, k)
			}
			for _, k := range old {
				if err := b.Delete(k); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

// NextSeq returns the highest announcement number ever saved, so numbering continues
// after a restart.
func (d *DB) NextSeq() (uint64, error) {
	var n uint64
	err := d.View(func(tx *bbolt.Tx) error {
		n = seqOf(tx.Bucket(bucketMeta).Get(keySeq))
		return nil
	})
	return n, err
}

func seqKey(n uint64) []byte {
	var k [8]byte
	binary.BigEndian.PutUint64(k[:], n)
	return k[:]
}

func seqOf(b []byte) uint64 {
	if len(b) != 8 {
		return 0
	}
	return binary.BigEndian.Uint64(b)
}
