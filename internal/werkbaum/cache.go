package werkbaum

import (
	"container/list"
	"crypto/sha256"
	"errors"
	"io"
	"sync"
	"unsafe"
)

// lru is a small least-recently-used cache of read results. Values are treated as
// immutable: callers get copies (JSON bytes are copied, typed results cloned), so nothing
// a caller does can change what the next caller sees.
//
// It is bounded by a count and by the bytes its entries keep alive (an answer and, for a
// whole plan's view, its outline: about half as much again), of which the newest entry is
// always kept: an inspect of a 10,000-node plan is 4-8 MB of JSON, so 64 of them (a run of
// writes to one large plan) would hold hundreds of MB and keep the collector busy near the
// daemon's soft memory limit.
type lru struct {
	mu       sync.Mutex
	max      int
	maxBytes int
	bytes    int
	order    *list.List // front = most recently used; elements hold *lruEntry
	items    map[string]*list.Element
}

type lruEntry struct {
	key string
	raw []byte
	// outline is the outline of a whole plan's inspect view (outline.go): written with it,
	// or decoded from raw by the first reader that asked for it (Engine.Outline, which then
	// replaces the entry by one with it). nil for other answers, for views read back from
	// the persisted analyses and after an idle shed, until a reader asks.
	outline *Outline
	// weight is what the entry counts against the cache's bytes, set by put.
	weight int
	// disk is the answer's key in the disk cache (Options.Persist); nil without one.
	disk *diskKey

	// The typed form of raw is decoded on first use only: InspectJSON, the plan store's
	// hot path, never needs it, and decoding a large plan's view costs about as much as
	// a third of producing it.
	decode   func([]byte) (any, error)
	once     sync.Once
	typedVal any // decoded form of raw, never handed out without cloning
	typedErr error
}

// typed returns the decoded form of raw (decoded once per entry).
func (ent *lruEntry) typed() (any, error) {
	ent.once.Do(func() {
		if ent.decode != nil {
			ent.typedVal, ent.typedErr = ent.decode(ent.raw)
		}
	})
	return ent.typedVal, ent.typedErr
}

func newLRU(max, maxBytes int) *lru {
	return &lru{max: max, maxBytes: maxBytes, order: list.New(), items: make(map[string]*list.Element, max)}
}

func (c *lru) get(key string) (*lruEntry, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.items[key]
	if !ok {
		return nil, false
	}
	c.order.MoveToFront(el)
	return el.Value.(*lruEntry), true
}

func (c *lru) put(ent *lruEntry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	ent.weight = len(ent.raw) + ent.outline.footprint()
	if el, ok := c.items[ent.key]; ok {
		c.bytes -= el.Value.(*lruEntry).weight
		el.Value = ent
		c.order.MoveToFront(el)
	} else {
		c.items[ent.key] = c.order.PushFront(ent)
	}
	c.bytes += ent.weight
	c.evict()
}

// evict drops the least recently used entries beyond the bounds; the caller holds c.mu.
func (c *lru) evict() {
	for c.order.Len() > c.max || (c.bytes > c.maxBytes && c.order.Len() > 1) {
		last := c.order.Back()
		c.order.Remove(last)
		old := last.Value.(*lruEntry)
		delete(c.items, old.key)
		c.bytes -= old.weight
	}
}

// withOutline returns old's answer with outline o, the outline decoded from it, and makes
// that the cached entry of old's key if old still is (an entry is replaced, not changed:
// callers may hold old), its weight counting the outline.
func (c *lru) withOutline(old *lruEntry, o *Outline) *lruEntry {
	ent := &lruEntry{key: old.key, raw: old.raw, outline: o, disk: old.disk, decode: old.decode}
	ent.weight = len(ent.raw) + o.footprint()
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.items[old.key]; ok && el.Value == old {
		el.Value = ent
		c.order.MoveToFront(el)
		c.bytes += ent.weight - old.weight
		c.evict()
	}
	return ent
}

// outlined returns the cached entry of key when it has its outline.
func (c *lru) outlined(key string) (*lruEntry, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.items[key]; ok && el.Value.(*lruEntry).outline != nil {
		return el.Value.(*lruEntry), true
	}
	return nil, false
}

// shed drops the entries whose answer the disk cache holds (onDisk) and replaces every
// other entry that keeps an outline by one without it; it returns how many outlines and
// answers it dropped. A dropped answer is read back from the disk by the next call that
// needs it; the outline of a view is decoded again from the view by the first reader that
// needs one (Engine.Outline). The cache is the outlines' only holder (the plan store asks
// for them, it keeps none; what readers built from one goes with it, Outline.Derived), so
// what is dropped here is freed. An entry is replaced, not changed, because callers may
// hold it: what they were handed stays as it was.
func (c *lru) shed(onDisk func(diskKey) bool) (outlines, answers int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for el := c.order.Front(); el != nil; {
		next := el.Next()
		old := el.Value.(*lruEntry)
		switch {
		case old.disk != nil && onDisk(*old.disk):
			c.order.Remove(el)
			delete(c.items, old.key)
			c.bytes -= old.weight
			answers++
		case old.outline != nil:
			ent := &lruEntry{key: old.key, raw: old.raw, disk: old.disk, decode: old.decode, weight: len(old.raw)}
			c.bytes += ent.weight - old.weight
			el.Value = ent
			outlines++
		}
		el = next
	}
	return outlines, answers
}

func (c *lru) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.order.Len()
}

// errFlightAbandoned is a flight's answer while it is produced (waiters never see it: they
// read the flight once done is closed), and stays its answer if produce panicked.
var errFlightAbandoned = errors.New("werkbaum: the call producing this answer ended without one")

// flights are the cached calls being produced, by cache key.
type flights struct {
	mu sync.Mutex
	m  map[string]*flight
}

// flight is one cached call being produced; done is closed when ent or err is set.
type flight struct {
	done      chan struct{}
	ent       *lruEntry
	err       error
	abandoned bool // err came from the producing caller's context, not from the input
}

// join returns the flight of key, and whether the caller starts it (and must land it).
func (fs *flights) join(key string) (*flight, bool) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if f := fs.m[key]; f != nil {
		return f, false
	}
	if fs.m == nil {
		fs.m = map[string]*flight{}
	}
	f := &flight{done: make(chan struct{})}
	fs.m[key] = f
	return f, true
}

// land ends the flight of key and wakes its waiters.
func (fs *flights) land(key string, f *flight) {
	fs.mu.Lock()
	delete(fs.m, key)
	fs.mu.Unlock()
	close(f.done)
}

// textSumsKept bounds the texts whose hash is remembered: a few plans read in turn.
const textSumsKept = 4

// textSums remembers the SHA-256 (the cache key's part) of the texts hashed last, by the
// string itself: the plan store hands the engine the same string for an unchanged plan
// (planfs.Cache), and hashing a 10,000-node plan's text costs more than the rest of a
// cached answer's lookup. An entry holds its string, so while it is held no other string
// can have its bytes' address: a string with the same address and length is the same
// text (Go strings are immutable).
type textSums struct {
	mu   sync.Mutex
	kept [textSumsKept]textSum
	next int // the slot the next new text takes
}

type textSum struct {
	text string
	sum  []byte
}

// of returns the SHA-256 of text.
func (ts *textSums) of(text string) []byte {
	ts.mu.Lock()
	for _, k := range ts.kept {
		if len(k.text) == len(text) && unsafe.StringData(k.text) == unsafe.StringData(text) && k.sum != nil {
			ts.mu.Unlock()
			return k.sum
		}
	}
	ts.mu.Unlock()
	h := sha256.New()
	io.WriteString(h, text) // hashes the string in place, no copy of a large text
	sum := h.Sum(nil)
	ts.mu.Lock()
	ts.kept[ts.next] = textSum{text: text, sum: sum}
	ts.next = (ts.next + 1) % textSumsKept
	ts.mu.Unlock()
	return sum
}

// forget lets go of the texts held (the idle shed: they may be superseded texts the plan
// store no longer holds).
func (ts *textSums) forget() {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	clear(ts.kept[:])
}
