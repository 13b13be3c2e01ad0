package planfs

import (
	"encoding/json"
	"sync"
	"time"

	"talkd/internal/werkbaum"
)

// Cache keeps, per plan, what was last read of its file, so that reading or inspecting an
// unchanged plan costs an open and a stat: the text and its checksum, trusted while the
// file's identity (Ident: the same file, size, mtime, ctime) is unchanged and not racily
// recent; any edit, by talkd or outside it, changes the identity and the file is hashed
// again. Beside the text it keeps the answers the store derived from that content (the
// inspect views, by a key the store chooses), dropped with the content.
//
// Everything cached is immutable once stored and handed out without copying.
type Cache struct {
	mu    sync.Mutex
	files map[string]*cached // by plan key
}

// MaxViews bounds the cached views per plan (one per subtree id and include set a
// client asked for); when full, the plan's views are dropped together.
const MaxViews = 16

// cached is what is known about one plan's file content.
type cached struct {
	ident  Ident
	hashed time.Time // when the content was read; see Ident.Trusted
	sum    string
	text   string

	// views: answers derived from this content, keyed by the store (inspect: revision and
	// options).
	views map[string]json.RawMessage
}

// NewCache makes an empty cache.
func NewCache() *Cache { return &Cache{files: map[string]*cached{}} }

// Load returns the plan's text and checksum, reading and hashing the file (at most limit
// bytes) only when its identity says it may have changed.
func (c *Cache) Load(p Ref, limit int64) (text, sum string, err error) {
	key := p.Key
	started := time.Now()
	pf, err := Open(p, limit)
	if err != nil {
		return "", "", err
	}
	defer pf.Close()
	id := IdentOf(pf.fi)
	c.mu.Lock()
	fc := c.files[key]
	c.mu.Unlock()
	if fc != nil && fc.ident.Same(id) && id.Trusted(fc.hashed) {
		return fc.text, fc.sum, nil
	}
	data, err := pf.ReadAll(key, limit)
	if err != nil {
		return "", "", err
	}
	sum = werkbaum.Checksum(data)
	text = string(data)
	if fc != nil && fc.sum == sum {
		// Same content under a new identity (touched, or rewritten identically): keep the
		// views, refresh the identity.
		text = fc.text
	}
	nfc := &cached{ident: id, hashed: started, sum: sum, text: text}
	c.mu.Lock()
	if fc != nil && fc.sum == sum {
		nfc.views = fc.views // under mu: StoreView replaces fc.views under it
	}
	c.files[key] = nfc
	c.mu.Unlock()
	return text, sum, nil
}

// Forget drops the cached content of a plan (after a write renamed a new file in, or the
// plan left the set).
func (c *Cache) Forget(key string) {
	c.mu.Lock()
	delete(c.files, key)
	c.mu.Unlock()
}

// Distrust makes the next Load of the plan read and hash its file again, as if it had
// changed (the views are kept if the content turns out the same).
func (c *Cache) Distrust(key string) {
	c.mu.Lock()
	if fc := c.files[key]; fc != nil {
		c.files[key] = &cached{sum: fc.sum, text: fc.text, views: fc.views}
	}
	c.mu.Unlock()
}

// Wrote records that this process just replaced the plan's file with text (checksum sum).
// The entry has no identity, so the next Load still reads and hashes the file, as after
// any change; when the content is the same it keeps this string instead of a copy of the
// bytes. Until then Known reports sum.
func (c *Cache) Wrote(key, text, sum string) {
	c.mu.Lock()
	c.files[key] = &cached{sum: sum, text: text}
	c.mu.Unlock()
}

// Known is the checksum of the content last read or written for the plan, without looking
// at the file: a hint (the file may have changed since), never an answer about the file.
func (c *Cache) Known(key string) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if fc := c.files[key]; fc != nil {
		return fc.sum, true
	}
	return "", false
}

// Ident is the identity of the file the plan's cached text was read from.
func (c *Cache) Ident(key string) (Ident, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if fc := c.files[key]; fc != nil {
		return fc.ident, true
	}
	return Ident{}, false
}

// View returns the cached view vk of this content (checksum sum), if any.
func (c *Cache) View(key, sum, vk string) (json.RawMessage, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	fc := c.files[key]
	if fc == nil || fc.sum != sum {
		return nil, false
	}
	v, ok := fc.views[vk]
	return v, ok
}

// StoreView keeps the view vk of this content (checksum sum); a content that changed
// meanwhile keeps nothing (the answer is still right for the base it carries).
func (c *Cache) StoreView(key, sum, vk string, answer json.RawMessage) {
	c.mu.Lock()
	defer c.mu.Unlock()
	fc := c.files[key]
	if fc == nil || fc.sum != sum {
		return
	}
	if fc.views == nil || len(fc.views) >= MaxViews {
		fc.views = make(map[string]json.RawMessage, 4)
	}
	fc.views[vk] = answer
}
