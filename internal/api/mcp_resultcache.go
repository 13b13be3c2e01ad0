package api

import (
	"bytes"
	"encoding/json"
	"strings"
	"sync"
)

// The inspect answer of a large plan is MBs of JSON, and the tools/call result carries it
// twice: as structuredContent and, escaped, as the text copy MCP asks for beside it. The
// plan store answers an unchanged plan from its cache by handing out the same shared,
// immutable slice on every hit; resultCache makes the encoding of the tools/call result
// equally a one-time cost per distinct store answer, so a hit sends bytes computed once
// instead of escaping and copying the whole view again.
//
// An entry is found by where the request points (plan and options: a slot) and is valid
// only for the very slice it was encoded from (same first byte, same length). The entry
// holds that slice, so its memory cannot be reused for another answer while the entry
// lives, and the store never modifies a slice it handed out: equal identity therefore
// means equal bytes, and no stale answer can be served. When the plan changes, the store
// hands out a new slice; the slot's entry no longer matches and is replaced by the new
// answer's encoding, so a slot keeps at most one answer.

// resultCacheBudget bounds the bytes the cache keeps alive (encoded results plus the
// views they were made from): a few answers of 10,000-node plans (about 12 MB each). The
// answer just encoded is always kept, even when it alone exceeds the budget, so a plan at
// the input limit is served the same way as a small one; older slots are dropped, least
// recently used first.
const resultCacheBudget = 32 << 20

// resultCache maps slots to the encoded tools/call result of their latest answer.
type resultCache struct {
	mu     sync.Mutex
	budget int
	used   int    // bytes held by the entries
	clock  uint64 // increases on every use, for least-recently-used eviction
	slots  map[string]*encodedResult
}

// encodedResult is the tools/call result encoded from one store answer.
type encodedResult struct {
	view    json.RawMessage // the store's shared answer; kept so its identity stays unique
	result  []byte          // {"content":[{"type":"text","text":…}],"structuredContent":…}
	lastUse uint64
}

func newResultCache(budget int) *resultCache {
	return &resultCache{budget: budget, slots: map[string]*encodedResult{}}
}

// sameSlice reports whether a and b are the same bytes in memory (not merely equal).
func sameSlice(a, b []byte) bool {
	return len(a) == len(b) && len(a) > 0 && &a[0] == &b[0]
}

// inspectSlot names the request an inspect answer belongs to.
func inspectSlot(plan, id string, include []string) string {
	return plan + "\x00" + id + "\x00" + strings.Join(include, ",")
}

// viewResult returns the tools/call result of view (see encodeViewResult), encoding it
// only when the slot does not already hold the result of this very slice. The result is
// shared with later hits and must not be modified.
func (c *resultCache) viewResult(slot string, view json.RawMessage) []byte {
	if c == nil || len(view) == 0 {
		return encodeViewResult(view)
	}
	c.mu.Lock()
	if e := c.slots[slot]; e != nil && sameSlice(e.view, view) {
		c.clock++
		e.lastUse = c.clock
		c.mu.Unlock()
		return e.result
	}
	c.mu.Unlock()

	// Encoded outside the lock: it takes milliseconds on a large plan, and other slots'
	// hits must not wait for it. Two concurrent misses of one answer both encode it
	// (the heavy-call slots bound how many); the results are equal.
	result := encodeViewResult(view)

	c.mu.Lock()
	defer c.mu.Unlock()
	if e := c.slots[slot]; e != nil {
		if sameSlice(e.view, view) {
			return e.result // a concurrent miss stored it first
		}
		c.used -= e.size()
	}
	c.clock++
	e := &encodedResult{view: view, result: result, lastUse: c.clock}
	c.slots[slot] = e
	c.used += e.size()
	c.evict(slot)
	return result
}

// drop empties the cache and reports how many results it held.
func (c *resultCache) drop() int {
	if c == nil {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	n := len(c.slots)
	c.slots = map[string]*encodedResult{}
	c.used = 0
	return n
}

// DropEncodedResults empties the cache of encoded plan readings and reports how many it
// held: the daemon's idle release calls it beside the engine's shed. An entry is only of
// use while the engine still hands out the very answer it was encoded from, and the shed
// drops the answers its disk holds (the next reading gets a new one from there), so those
// entries would only keep the old answers and their encodings alive, up to
// resultCacheBudget; the others cost one encoding again (milliseconds on a large plan).
func (s *Server) DropEncodedResults() int { return s.planResults.drop() }

func (e *encodedResult) size() int { return len(e.view) + len(e.result) }

// evict drops the least recently used slots other than keep until the cache is within
// its budget.
func (c *resultCache) evict(keep string) {
	for c.used > c.budget && len(c.slots) > 1 {
		var oldest string
		var at uint64
		for k, e := range c.slots {
			if k != keep && (oldest == "" || e.lastUse < at) {
				oldest, at = k, e.lastUse
			}
		}
		c.used -= c.slots[oldest].size()
		delete(c.slots, oldest)
	}
}

// encodeViewResult encodes the tools/call result of an inspect view: the view as
// structuredContent, and the same JSON as the text copy MCP asks a tool with structured
// content to return beside it (a TextContent block holding the serialized JSON).
func encodeViewResult(view json.RawMessage) []byte {
	const head, mid, tail = `{"content":[{"type":"text","text":`, `}],"structuredContent":`, `}`
	// Quotes and backslashes take one more byte each in the text copy; the rest of what
	// needs escaping (<, >, &, control characters) is rare in a plan, hence the slack.
	grow := bytes.Count(view, []byte{'"'}) + bytes.Count(view, []byte{'\\'}) + len(view)/64 + 16
	out := make([]byte, 0, len(head)+2+len(view)+grow+len(mid)+len(view)+len(tail)+len(responseTail))
	out = append(out, head...)
	out = appendJSONString(out, string(view))
	out = append(out, mid...)
	out = append(out, view...)
	return endResult(append(out, tail...))
}
