package api

import (
	"bytes"
	"encoding/json"
	"strings"
	"sync"
	"testing"
)

// checkViewResult checks that got is the tools/call result of an inspect view: one text
// block holding the view's JSON (escaped as encoding/json escapes a string) and the view
// itself, byte for byte, as structured content.
func checkViewResult(t *testing.T, got []byte, view json.RawMessage) {
	t.Helper()
	var res struct {
		Content []Content       `json:"content"`
		SC      json.RawMessage `json:"structuredContent"`
	}
	if err := json.Unmarshal(got, &res); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, got)
	}
	if len(res.Content) != 1 || res.Content[0].Type != "text" || res.Content[0].Text != string(view) || !bytes.Equal(res.SC, view) {
		t.Fatalf("got\n%s\nfor the view\n%s", got, view)
	}
	text, _ := json.Marshal(string(view))
	if !bytes.Contains(got, text) {
		t.Fatalf("the text copy is not escaped as encoding/json does (%s):\n%s", text, got)
	}
}

// TestViewResultCacheHitIsTheFreshEncoding: a hit answers the very bytes encoded on the
// miss (not a copy), and those are byte for byte what encoding/json writes for a fresh
// answer; a new store answer in the same slot (the plan changed) is encoded anew, and
// the old one is never served again.
func TestViewResultCacheHitIsTheFreshEncoding(t *testing.T) {
	c := newResultCache(1 << 20)
	v1 := json.RawMessage(`{"base":{"revision":1,"checksum":"aa"},"nodes":[{"label":"@jörg & <Müller> \"q\" \\ ` + "\u2028" + `"}]}`)
	slot := inspectSlot("p", "", nil)

	first := c.viewResult(slot, v1)
	checkViewResult(t, first, v1)
	hit := c.viewResult(slot, v1)
	if !bytes.Equal(hit, first) || &hit[0] != &first[0] {
		t.Fatalf("a hit must answer the bytes of the miss without encoding or copying them again")
	}

	// The plan changed: the store hands out a new slice (here of the same length, so only
	// the identity tells the two apart).
	v2 := json.RawMessage(strings.Replace(string(v1), `"revision":1`, `"revision":2`, 1))
	second := c.viewResult(slot, v2)
	checkViewResult(t, second, v2)
	if again := c.viewResult(slot, v2); &again[0] != &second[0] {
		t.Fatalf("the new answer is not served from the cache")
	}
	if len(c.slots) != 1 || c.used != len(v2)+len(second) {
		t.Fatalf("a slot must keep only its latest answer: %d slots, %d bytes", len(c.slots), c.used)
	}

	// Equal bytes in another slice are not trusted by identity: encoded again, equal.
	v2copy := append(json.RawMessage(nil), v2...)
	if got := c.viewResult(slot, v2copy); !bytes.Equal(got, second) || &got[0] == &second[0] {
		t.Fatalf("an equal answer in another slice must be encoded from that slice")
	}

	// A nil cache (no store wiring) encodes every time, the same bytes.
	var none *resultCache
	if got := none.viewResult(slot, v1); !bytes.Equal(got, first) {
		t.Fatalf("without a cache: %s", got)
	}
}

// TestViewResultCacheStaysWithinBudget: slots are dropped least recently used first when
// the cache holds more than its budget, and the answer just encoded is kept even when it
// alone is larger than the budget.
func TestViewResultCacheStaysWithinBudget(t *testing.T) {
	view := func(n int, c string) json.RawMessage {
		return json.RawMessage(`{"nodes":"` + strings.Repeat(c, n) + `"}`)
	}
	a, b, big := view(100, "a"), view(100, "b"), view(2000, "c")
	size := func(v json.RawMessage) int { return len(v) + len(encodeViewResult(v)) }
	c := newResultCache(size(a) + size(b))
	c.viewResult("a", a)
	c.viewResult("b", b)
	c.viewResult("a", a) // a is now the more recently used
	if len(c.slots) != 2 {
		t.Fatalf("two answers within the budget: %d slots", len(c.slots))
	}
	cv := view(100, "c")
	c.viewResult("c", cv)
	if _, ok := c.slots["b"]; ok || c.slots["a"] == nil || c.slots["c"] == nil {
		t.Fatalf("the least recently used slot (b) must go: %v", keys(c))
	}
	got := c.viewResult("big", big)
	checkViewResult(t, got, big)
	if len(c.slots) != 1 || c.slots["big"] == nil || c.used != size(big) {
		t.Fatalf("an answer above the budget is kept alone: %v, %d bytes", keys(c), c.used)
	}
	if again := c.viewResult("big", big); &again[0] != &got[0] {
		t.Fatalf("the big answer is not served from the cache")
	}
}

// TestViewResultCacheConcurrent: hits, misses and replacements of the same slots from
// several goroutines (run with -race) always answer the encoding of the view asked about.
func TestViewResultCacheConcurrent(t *testing.T) {
	views := []json.RawMessage{
		json.RawMessage(`{"nodes":[{"label":"@jörg"}]}`),
		json.RawMessage(`{"nodes":[{"label":"@Müller"}]}`),
		json.RawMessage(`{"nodes":[{"label":"plain"}]}`),
	}
	want := make([][]byte, len(views))
	for i, v := range views {
		want[i] = encodeViewResult(v)
	}
	c := newResultCache(2 * (len(views[0]) + len(want[0])))
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 300 {
				k := (g + i) % len(views)
				slot := []string{"a", "b"}[i%2]
				if got := c.viewResult(slot, views[k]); !bytes.Equal(got, want[k]) {
					t.Errorf("slot %s view %d: %s", slot, k, got)
					return
				}
			}
		})
	}
	wg.Wait()
}

func keys(c *resultCache) []string {
	var out []string
	for k := range c.slots {
		out = append(out, k)
	}
	return out
}

// BenchmarkViewResult: the encoded result of a 1.6 MB view, on a hit and fresh.
func BenchmarkViewResult(b *testing.B) {
	view := json.RawMessage(`{"nodes":[` + strings.Repeat(`{"line":1,"label":"Some node label here","status":"done","people":["jörg"]},`, 20000) + `{}]}`)
	c := newResultCache(resultCacheBudget)
	b.Run("hit", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			c.viewResult("p", view)
		}
	})
	b.Run("fresh", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			encodeViewResult(view)
		}
	})
}

// TestDropEncodedResultsEmptiesTheCache: the idle release's drop forgets every encoded
// result and the bytes they held, so the answers they were made from are no longer kept
// alive by the cache; the next reading of the same answer is encoded again, equal to the
// first.
func TestDropEncodedResultsEmptiesTheCache(t *testing.T) {
	s := &Server{planResults: newResultCache(1 << 20)}
	views := []json.RawMessage{json.RawMessage(`{"nodes":[{"label":"@jörg"}]}`), json.RawMessage(`{"nodes":[{"label":"@Müller"}]}`)}
	first := s.planResults.viewResult("a", views[0])
	s.planResults.viewResult("b", views[1])
	if n := s.DropEncodedResults(); n != 2 {
		t.Fatalf("DropEncodedResults dropped %d results, want 2", n)
	}
	if s.planResults.used != 0 || len(s.planResults.slots) != 0 {
		t.Fatalf("after the drop the cache holds %d slots, %d bytes", len(s.planResults.slots), s.planResults.used)
	}
	again := s.planResults.viewResult("a", views[0])
	if &again[0] == &first[0] || !bytes.Equal(again, first) {
		t.Fatal("the reading after the drop was not encoded again, or differs from the first")
	}
	if n := (&Server{}).DropEncodedResults(); n != 0 {
		t.Fatalf("a server without plan tools dropped %d results", n)
	}
}
