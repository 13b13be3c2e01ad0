package werkbaum

import (
	"bytes"
	"container/list"
	"context"
	"crypto/sha256"
	"debug/elf"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Persist keeps the answers of the engine's read calls (inspect in every mode, analyze,
// warnings: whatever goes through the result cache) in a folder across restarts. The
// first inspect of a 10,000-node plan costs half a second of analysis in goja; a restarted
// daemon that analysed the same text before reads it back in milliseconds instead.
//
// It sits behind the engine's memory cache (Options.Persist): it is asked only when that
// cache misses, and it is handed only answers the engine has just produced. The folder
// holds disposable data, so the rules are those of a cache, not of the state database:
//
//   - An answer is stored under a digest of everything that decides it: the build (the
//     running executable's Go build ID, see executableSum: Go writes part of the inspect
//     view, view.go, and goja runs the scripts), the scripts (Engine.scriptID, which
//     covers the vocabulary they export), the method, its options and the text's
//     SHA-256. An upgraded binary or changed scripts find nothing of the old one's
//     answers; those age out.
//   - An entry is never trusted blindly: its header names its digest, its length and the
//     SHA-256 of its bytes. An entry that fails any check is a miss, logged, and removed.
//   - Writes are off the request path: a bounded queue (persistPending answers, the
//     oldest dropped first) that one goroutine writes once the engine has handed in no
//     answer for persistSettle, and at Close. A stream of writes to a large plan, whose
//     every text is analysed once and replaced at once, so costs no disk traffic (and
//     no fsync beside the journal's) until it stops; then its newest texts are written,
//     and that is what a restart needs. Each entry is written to a temporary file,
//     synced and renamed: a crash leaves the old entry, none, or a stray temporary file
//     (removed at the next open), never a torn entry under a real name.
//   - The folder is bounded in bytes: the least recently used entries are removed when a
//     write takes it over MaxBytes. The order survives restarts through the files'
//     modification times (a hit touches its file).
//
// Its own files, not the state database (bbolt): the database's file never shrinks, its
// one writer is the journal's, whose fsyncs every plan write waits for, and an answer is
// megabytes where the database holds small records. One Persist owns a folder; two
// daemons sharing one only see each other's entries after a restart.
type Persist struct {
	dir      string
	maxBytes int64
	log      *slog.Logger

	// ready is closed once build and the index are known (open runs in the background:
	// it reads the executable and lists the folder). disabled is then set when the
	// folder cannot be used; every lookup is a miss and nothing is written.
	ready    chan struct{}
	build    [32]byte
	disabled error

	mu      sync.Mutex
	index   map[[32]byte]*list.Element // of *diskEntry
	order   *list.List                 // front = most recently used
	bytes   int64
	pending []pendingWrite // oldest first
	settle  time.Duration  // persistSettle (tests hold answers in the queue longer)
	// lastStore is when the last answer was handed in: the writer waits for quiet.
	lastStore time.Time
	closing   bool
	wake      chan struct{} // capacity 1: the writer has something to look at
	done      chan struct{} // closed when the writer has ended

	fromDisk, misses, written, skipped, corrupt, writeErrors, evicted atomic.Int64
}

// PersistOptions configure OpenPersist.
type PersistOptions struct {
	// Dir is the folder of the entries; it is created if missing.
	Dir string
	// MaxBytes bounds the entries' bytes on disk (required, > 0). An answer larger than
	// a quarter of it is not kept: it would push out everything else.
	MaxBytes int64
	// Build names the code that produces the answers besides the scripts; empty = the
	// running executable's identity (executableSum). Tests pass their own.
	Build string
	// Logger receives the cache's warnings (default slog.Default()).
	Logger *slog.Logger
}

const (
	// persistPending bounds the answers waiting to be written: a few plans' worth.
	persistPending = 4
	// persistSettle is how long the engine must hand in no answer before the waiting
	// ones are written (see Persist).
	persistSettle = time.Second
	// entrySuffix ends an entry's file name (its digest in hex before it).
	entrySuffix = ".analysis"
	// tempPrefix starts the name of an entry being written.
	tempPrefix = ".tmp-"
	// staleTemp is the age after which a temporary file at open is a crash's leftover
	// (younger ones may be another daemon's write in progress).
	staleTemp = time.Minute
)

// entryMagic starts every entry; the version changes when the layout does.
var entryMagic = []byte("talkd analysis v1\n")

// entryHeaderLen is the magic, the digest, the payload's length and its SHA-256.
var entryHeaderLen = len(entryMagic) + 32 + 8 + 32

type diskEntry struct {
	digest [32]byte
	size   int64 // the file's bytes, header included
}

type pendingWrite struct {
	digest [32]byte
	raw    []byte // shared with the memory cache, which never changes it
}

// PersistStats are the disk cache's counters, for /status.
type PersistStats struct {
	Dir      string `json:"dir"`
	Entries  int    `json:"entries"`
	Bytes    int64  `json:"bytes"`
	MaxBytes int64  `json:"max_bytes"`
	// FromDisk counts the answers read back instead of analysed.
	FromDisk int64 `json:"from_disk"`
	// Misses counts the lookups that found nothing usable (the engine then analysed).
	Misses int64 `json:"misses"`
	// Written counts the entries written, Skipped the answers not written (queue full,
	// too large, cache not ready), WriteErrors the writes that failed.
	Written     int64 `json:"written"`
	Skipped     int64 `json:"skipped"`
	WriteErrors int64 `json:"write_errors"`
	// Corrupt counts the entries that failed their checks (each logged and removed).
	Corrupt int64 `json:"corrupt"`
	// Evicted counts the entries removed to stay within MaxBytes.
	Evicted int64 `json:"evicted"`
	// Off says why the cache is not in use, when it is not.
	Off string `json:"off,omitempty"`
}

// OpenPersist starts a disk cache in opts.Dir. It returns at once; the folder is read in
// the background and lookups wait for that (bounded by their context). A folder that
// cannot be used turns the cache off with a warning: it is never a reason to fail.
func OpenPersist(opts PersistOptions) (*Persist, error) {
	if opts.Dir == "" {
		return nil, errors.New("werkbaum: the analysis cache needs a folder")
	}
	if opts.MaxBytes <= 0 {
		return nil, fmt.Errorf("werkbaum: the analysis cache's size must be greater than 0, not %d", opts.MaxBytes)
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	p := &Persist{
		dir: opts.Dir, maxBytes: opts.MaxBytes, log: opts.Logger,
		ready: make(chan struct{}), index: map[[32]byte]*list.Element{}, order: list.New(), settle: persistSettle,
		wake: make(chan struct{}, 1), done: make(chan struct{}),
	}
	go func() {
		p.open(opts.Build)
		close(p.ready)
		p.run()
	}()
	return p, nil
}

// open computes the build's identity and reads the folder into the index.
func (p *Persist) open(build string) {
	if build != "" {
		p.build = sha256.Sum256([]byte(build))
	} else if sum, err := executableSum(); err != nil {
		p.disabled = fmt.Errorf("cannot identify the running program: %w", err)
	} else {
		p.build = sum
	}
	if p.disabled == nil {
		if err := os.MkdirAll(p.dir, 0o700); err != nil {
			p.disabled = fmt.Errorf("create the folder: %w", err)
		}
	}
	if p.disabled == nil {
		p.disabled = p.scan()
	}
	if p.disabled != nil {
		p.log.Warn("analysis cache off: plans are analysed after every restart", "dir", p.dir, "err", p.disabled)
		return
	}
	p.log.Debug("analysis cache opened", "dir", p.dir, "entries", p.order.Len(), "bytes", p.bytes)
}

// executableSum identifies the running program: the SHA-256 of its Go build ID when it
// has one, else of its whole file. The build ID is a hash of everything the link read
// (every package's sources and embedded files, the toolchain, the flags), so it changes
// whenever the code can; it is read from the file's first pages, where hashing the whole
// file (25 MB) took 80 ms of CPU at every start.
func executableSum() ([32]byte, error) {
	path, err := os.Executable()
	if err != nil {
		return [32]byte{}, err
	}
	f, err := os.Open(path)
	if err != nil {
		return [32]byte{}, err
	}
	defer f.Close()
	if id := goBuildID(f); id != "" {
		return sha256.Sum256([]byte("go build ID " + id)), nil
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return [32]byte{}, fmt.Errorf("read %s: %w", path, err)
	}
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return [32]byte{}, fmt.Errorf("read %s: %w", path, err)
	}
	return [32]byte(h.Sum(nil)), nil
}

// goBuildID reads the Go build ID of an executable ("" when it has none, e.g. linked with
// -buildid=): from the ELF note .note.go.buildid, else from the marker the linker puts at
// the start of the text of every other format, within the first 32 KiB as cmd/go looks
// for it.
func goBuildID(f *os.File) string {
	if ef, err := elf.NewFile(f); err == nil {
		if sec := ef.Section(".note.go.buildid"); sec != nil {
			if data, err := sec.Data(); err == nil {
				return elfGoNote(data, ef.ByteOrder)
			}
		}
		return ""
	}
	head := make([]byte, 32<<10)
	n, _ := f.ReadAt(head, 0)
	head = head[:n]
	const marker = "\xff Go build ID: \""
	i := bytes.Index(head, []byte(marker))
	if i < 0 {
		return ""
	}
	rest := head[i+len(marker):]
	end := bytes.IndexByte(rest, '"')
	if end <= 0 {
		return ""
	}
	return string(rest[:end])
}

// elfGoNote is the description of the note named "Go" of type 4 (the build ID).
func elfGoNote(data []byte, order binary.ByteOrder) string {
	for len(data) >= 12 {
		namesz, descsz, typ := order.Uint32(data), order.Uint32(data[4:]), order.Uint32(data[8:])
		data = data[12:]
		nameEnd := int(namesz+3) &^ 3
		descEnd := nameEnd + int(descsz+3)&^3
		if nameEnd > len(data) || nameEnd+int(descsz) > len(data) {
			return ""
		}
		if typ == 4 && namesz == 4 && string(data[:4]) == "Go\x00\x00" {
			return string(data[nameEnd : nameEnd+int(descsz)])
		}
		if descEnd > len(data) {
			return ""
		}
		data = data[descEnd:]
	}
	return ""
}

// scan builds the index from the folder's entries, oldest use last, and removes a crash's
// temporary files. It runs before ready is closed, so it needs no lock.
func (p *Persist) scan() error {
	ents, err := os.ReadDir(p.dir)
	if err != nil {
		return fmt.Errorf("read the folder: %w", err)
	}
	type found struct {
		d    diskEntry
		used time.Time
	}
	var all []found
	for _, de := range ents {
		name := de.Name()
		info, err := de.Info()
		if err != nil || !info.Mode().IsRegular() {
			continue
		}
		if strings.HasPrefix(name, tempPrefix) {
			if time.Since(info.ModTime()) > staleTemp {
				_ = os.Remove(filepath.Join(p.dir, name))
			}
			continue
		}
		digest, ok := digestOfName(name)
		if !ok {
			continue // not ours: left alone
		}
		all = append(all, found{diskEntry{digest, info.Size()}, info.ModTime()})
	}
	sort.Slice(all, func(i, j int) bool { return all[i].used.Before(all[j].used) })
	for _, f := range all {
		ent := f.d
		p.index[ent.digest] = p.order.PushFront(&ent)
		p.bytes += ent.size
	}
	for _, d := range p.evictLocked() {
		_ = os.Remove(p.path(d))
	}
	return nil
}

func digestOfName(name string) ([32]byte, bool) {
	var d [32]byte
	hexPart, ok := strings.CutSuffix(name, entrySuffix)
	if !ok || len(hexPart) != 64 {
		return d, false
	}
	if _, err := hex.Decode(d[:], []byte(hexPart)); err != nil {
		return d, false
	}
	return d, true
}

func (p *Persist) path(d [32]byte) string {
	return filepath.Join(p.dir, hex.EncodeToString(d[:])+entrySuffix)
}

// diskKey is everything that decides an answer besides the build.
type diskKey struct {
	script  [32]byte // Engine.scriptID
	method  string
	opts    []byte // the options' JSON, as the memory cache's key has them
	textSum [32]byte
}

// digest names the answer of k as this build produces it.
func (p *Persist) digest(k diskKey) [32]byte {
	h := sha256.New()
	h.Write(entryMagic)
	h.Write(p.build[:])
	h.Write(k.script[:])
	// Lengths before the variable parts, so no two keys run together into one.
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], uint64(len(k.method)))
	h.Write(n[:])
	io.WriteString(h, k.method)
	binary.BigEndian.PutUint64(n[:], uint64(len(k.opts)))
	h.Write(n[:])
	h.Write(k.opts)
	h.Write(k.textSum[:])
	return [32]byte(h.Sum(nil))
}

// waitReady waits until the folder is read; false when ctx ended first or the cache is off.
func (p *Persist) waitReady(ctx context.Context) bool {
	select {
	case <-p.ready:
		return p.disabled == nil
	case <-ctx.Done():
		return false
	}
}

// load returns the stored answer of k, or false. Only an entry the index knows is read,
// so a miss costs no system call.
func (p *Persist) load(ctx context.Context, k diskKey) ([]byte, bool) {
	if !p.waitReady(ctx) {
		p.misses.Add(1)
		return nil, false
	}
	d := p.digest(k)
	p.mu.Lock()
	el, ok := p.index[d]
	if ok {
		p.order.MoveToFront(el)
	}
	p.mu.Unlock()
	if !ok {
		p.misses.Add(1)
		return nil, false
	}
	raw, err := p.readEntry(d)
	if err != nil {
		p.misses.Add(1)
		p.drop(d)
		if errors.Is(err, fs.ErrNotExist) {
			p.log.Debug("analysis cache: an entry went missing", "file", p.path(d))
			return nil, false
		}
		p.corrupt.Add(1)
		p.log.Warn("analysis cache: entry unusable, removed; the plan is analysed again", "file", p.path(d), "err", err)
		return nil, false
	}
	now := time.Now()
	_ = os.Chtimes(p.path(d), now, now) // the use order across restarts; a failure only ages it
	p.fromDisk.Add(1)
	return raw, true
}

// readEntry reads and checks the entry of d.
func (p *Persist) readEntry(d [32]byte) ([]byte, error) {
	b, err := os.ReadFile(p.path(d))
	if err != nil {
		return nil, err
	}
	return decodeEntry(d, b)
}

// encodeEntryHeader is the header of an entry holding raw under digest d.
func encodeEntryHeader(d [32]byte, raw []byte) []byte {
	h := make([]byte, 0, entryHeaderLen)
	h = append(h, entryMagic...)
	h = append(h, d[:]...)
	h = binary.BigEndian.AppendUint64(h, uint64(len(raw)))
	sum := sha256.Sum256(raw)
	return append(h, sum[:]...)
}

// decodeEntry checks an entry's bytes against the digest it was looked up by and returns
// its payload.
func decodeEntry(d [32]byte, b []byte) ([]byte, error) {
	if len(b) < entryHeaderLen || !bytes.HasPrefix(b, entryMagic) {
		return nil, fmt.Errorf("not an analysis entry of this version (%d bytes)", len(b))
	}
	rest := b[len(entryMagic):]
	if !bytes.Equal(rest[:32], d[:]) {
		return nil, errors.New("the entry names another key than its file")
	}
	n := binary.BigEndian.Uint64(rest[32:40])
	payload := rest[72:]
	if uint64(len(payload)) != n {
		return nil, fmt.Errorf("truncated or overlong: %d bytes of payload, the header says %d", len(payload), n)
	}
	if sum := sha256.Sum256(payload); !bytes.Equal(sum[:], rest[40:72]) {
		return nil, errors.New("checksum mismatch")
	}
	return payload, nil
}

// drop forgets the entry of d and removes its file.
func (p *Persist) drop(d [32]byte) {
	p.mu.Lock()
	if el, ok := p.index[d]; ok {
		p.bytes -= el.Value.(*diskEntry).size
		p.order.Remove(el)
		delete(p.index, d)
	}
	p.mu.Unlock()
	if err := os.Remove(p.path(d)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		p.log.Warn("analysis cache: cannot remove an entry", "file", p.path(d), "err", err)
	}
}

// store hands an answer just produced to the background writer. It never blocks: when
// the cache is not ready yet, the answer is too large, or is known already, it is not
// kept; when the queue is full, the oldest waiting answer gives way.
func (p *Persist) store(k diskKey, raw []byte) {
	select {
	case <-p.ready:
	default:
		p.skipped.Add(1)
		return
	}
	if p.disabled != nil {
		return
	}
	if int64(len(raw)+entryHeaderLen) > p.maxBytes/4 {
		p.skipped.Add(1)
		return
	}
	d := p.digest(k)
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, ok := p.index[d]; ok || p.closing {
		return
	}
	for _, w := range p.pending {
		if w.digest == d {
			return
		}
	}
	if len(p.pending) == persistPending {
		p.pending = dropFirst(p.pending)
		p.skipped.Add(1)
	}
	p.pending = append(p.pending, pendingWrite{digest: d, raw: raw})
	p.lastStore = time.Now()
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// dropFirst removes the oldest waiting answer in place, clearing the slot it frees so
// that the backing array does not keep an answer of megabytes alive.
func dropFirst(ws []pendingWrite) []pendingWrite {
	n := copy(ws, ws[1:])
	ws[n] = pendingWrite{}
	return ws[:n]
}

// run is the writer: once no answer has come for persistSettle (the engine is quiet), or
// when the cache is closing, it writes the waiting answers, oldest first; it ends when
// closing finds nothing left.
func (p *Persist) run() {
	defer close(p.done)
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		p.mu.Lock()
		if len(p.pending) == 0 {
			closing := p.closing
			p.mu.Unlock()
			if closing {
				return
			}
			<-p.wake
			continue
		}
		if quiet := time.Since(p.lastStore); !p.closing && quiet < p.settle {
			p.mu.Unlock()
			timer.Reset(p.settle - quiet)
			select {
			case <-p.wake:
			case <-timer.C:
			}
			timer.Stop()
			continue
		}
		w := p.pending[0]
		p.pending = dropFirst(p.pending)
		p.mu.Unlock()
		p.write(w)
	}
}

// write puts one answer on disk: a temporary file, synced, renamed over the entry's name
// (no folder sync: an entry lost in a crash is a miss, not a wrong answer).
func (p *Persist) write(w pendingWrite) {
	err := p.writeFile(w)
	if err != nil {
		p.writeErrors.Add(1)
		p.log.Warn("analysis cache: cannot write an entry; the answer is not kept", "dir", p.dir, "err", err)
		return
	}
	p.written.Add(1)
	size := int64(entryHeaderLen + len(w.raw))
	p.mu.Lock()
	if el, ok := p.index[w.digest]; ok {
		p.bytes -= el.Value.(*diskEntry).size
		el.Value.(*diskEntry).size = size
		p.order.MoveToFront(el)
	} else {
		p.index[w.digest] = p.order.PushFront(&diskEntry{digest: w.digest, size: size})
	}
	p.bytes += size
	victims := p.evictLocked()
	p.mu.Unlock()
	for _, d := range victims {
		if err := os.Remove(p.path(d)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			p.log.Warn("analysis cache: cannot remove an old entry", "file", p.path(d), "err", err)
		}
	}
}

func (p *Persist) writeFile(w pendingWrite) (err error) {
	f, err := os.CreateTemp(p.dir, tempPrefix+"*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if _, err = f.Write(encodeEntryHeader(w.digest, w.raw)); err != nil {
		return err
	}
	if _, err = f.Write(w.raw); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, p.path(w.digest))
}

// evictLocked drops the least recently used entries from the index until the bytes fit
// (the newest always stays) and returns their digests, whose files the caller removes.
func (p *Persist) evictLocked() [][32]byte {
	var victims [][32]byte
	for p.bytes > p.maxBytes && p.order.Len() > 1 {
		el := p.order.Back()
		ent := el.Value.(*diskEntry)
		p.order.Remove(el)
		delete(p.index, ent.digest)
		p.bytes -= ent.size
		victims = append(victims, ent.digest)
		p.evicted.Add(1)
	}
	return victims
}

// isOpen reports whether open has finished.
func (p *Persist) isOpen() bool {
	select {
	case <-p.ready:
		return true
	default:
		return false
	}
}

// Close writes the answers still waiting and stops the writer; ctx bounds the wait (the
// writer then finishes the write under way on its own).
func (p *Persist) Close(ctx context.Context) error {
	p.mu.Lock()
	already := p.closing
	p.closing = true
	p.mu.Unlock()
	select {
	case p.wake <- struct{}{}:
	default:
	}
	select {
	case <-p.done:
	case <-ctx.Done():
		return fmt.Errorf("analysis cache: answers still waiting to be written: %w", ctx.Err())
	}
	if !already {
		// What the cache did for this run, for someone reading the daemon's log.
		st := p.Stats()
		p.log.Info("analysis cache closed", "from_disk", st.FromDisk, "misses", st.Misses, "written", st.Written,
			"corrupt", st.Corrupt, "entries", st.Entries, "bytes", st.Bytes)
	}
	return nil
}

// Stats returns the counters and the folder's size now.
func (p *Persist) Stats() PersistStats {
	p.mu.Lock()
	st := PersistStats{Dir: p.dir, Entries: p.order.Len(), Bytes: p.bytes, MaxBytes: p.maxBytes}
	p.mu.Unlock()
	if p.isOpen() && p.disabled != nil {
		st.Off = p.disabled.Error()
	}
	st.FromDisk, st.Misses, st.Written = p.fromDisk.Load(), p.misses.Load(), p.written.Load()
	st.Skipped, st.WriteErrors, st.Corrupt, st.Evicted = p.skipped.Load(), p.writeErrors.Load(), p.corrupt.Load(), p.evicted.Load()
	return st
}

// diskKeyOf is the disk cache's key of a cached call's answer; nil without a disk cache.
func (e *Engine) diskKeyOf(method string, opts, textSum []byte) *diskKey {
	if e.opts.Persist == nil {
		return nil
	}
	return &diskKey{script: e.scriptID, method: method, opts: opts, textSum: [32]byte(textSum)}
}

// holds reports whether the folder holds the answer of k, written (not only waiting to
// be): a later load reads it back, or, should its file have gone or gone bad meanwhile,
// the answer is produced again.
func (p *Persist) holds(k diskKey) bool {
	select {
	case <-p.ready:
	default:
		return false
	}
	if p.disabled != nil {
		return false
	}
	d := p.digest(k)
	p.mu.Lock()
	defer p.mu.Unlock()
	_, ok := p.index[d]
	return ok
}

// persisted wraps the producer of a cached call with the disk cache (k, nil when there is
// none): the answer is read back when the cache has it, else produced and handed to the
// cache's writer.
func (e *Engine) persisted(ctx context.Context, k *diskKey, produce func() (json.RawMessage, *Outline, error)) func() (json.RawMessage, *Outline, error) {
	p := e.opts.Persist
	if p == nil || k == nil {
		return produce
	}
	return func() (json.RawMessage, *Outline, error) {
		if raw, ok := p.load(ctx, *k); ok {
			return raw, nil, nil // the outline is decoded when asked for (Engine.Outline)
		}
		raw, outline, err := produce()
		if err == nil {
			p.store(*k, raw)
		}
		return raw, outline, err
	}
}
