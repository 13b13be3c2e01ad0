package werkbaum

import (
	"bytes"
	"crypto/sha256"
	"strings"
	"testing"
	"unsafe"

	"talkd/internal/werkbaum/gen"
)

// The cache's byte bound counts the outline kept beside a view: an entry whose view alone
// fits must still push out an older one when its outline does not.
func TestCacheCountsTheOutlineBesideItsView(t *testing.T) {
	outline := &Outline{Nodes: []OutlineNode{{ID: "a", Label: strings.Repeat("ö", 200), People: []string{"@jörg", "@Müller"}}}}
	if outline.footprint() <= 400 {
		t.Fatalf("footprint of an outline with a 400-byte label = %d, want more than 400", outline.footprint())
	}
	c := newLRU(10, 1000)
	c.put(&lruEntry{key: "old", raw: make([]byte, 500)})
	c.put(&lruEntry{key: "view", raw: make([]byte, 300), outline: outline})
	if _, ok := c.get("old"); ok {
		t.Fatalf("the cache holds %d bytes of views and an outline of %d bytes under a bound of 1000 and kept the older entry", 800, outline.footprint())
	}
	if _, ok := c.get("view"); !ok {
		t.Fatal("the newest entry was evicted")
	}
	// Replacing an entry takes back what it weighed.
	c.put(&lruEntry{key: "view", raw: make([]byte, 300)})
	if c.bytes != 300 {
		t.Fatalf("bytes after replacing the outlined entry = %d, want 300", c.bytes)
	}
}

// The estimate is of the right size for a real plan's outline: more than its node structs,
// less than the view it was written with.
func TestOutlineFootprintOfAPlan(t *testing.T) {
	e := newTestEngine(t, Options{})
	text := gen.Plan(2000, 1)
	view, outline, err := inspectOutline(t.Context(), e, text)
	if err != nil {
		t.Fatal(err)
	}
	fp := outline.footprint()
	if min := len(outline.Nodes) * int(unsafe.Sizeof(OutlineNode{})); fp <= min {
		t.Fatalf("footprint %d is not above the node structs' %d bytes", fp, min)
	}
	if fp >= len(view) {
		t.Fatalf("footprint %d is not below the view's %d bytes", fp, len(view))
	}
	t.Logf("2,000 nodes: view %d bytes, outline about %d (%.0f %%)", len(view), fp, 100*float64(fp)/float64(len(view)))
}

// The remembered hash of a text is its SHA-256 whatever string holds it: the same string
// again (remembered), an equal text in another string, strings that share their bytes'
// start but not their length, more texts than are remembered, and after forget.
func TestTextSumsAreTheTextsHash(t *testing.T) {
	var ts textSums
	base := strings.Repeat("- [ ] Task #t @jörg (S)\n", 50)
	texts := []string{base, base[:len(base)-1], base[:10], strings.Clone(base), "", "@Müller\n"}
	for i := range textSumsKept + 2 {
		texts = append(texts, base+strings.Repeat("x", i))
	}
	check := func(when string) {
		t.Helper()
		for i, text := range texts {
			want := sha256.Sum256([]byte(text))
			if got := ts.of(text); !bytes.Equal(got, want[:]) {
				t.Fatalf("%s: the hash of text %d (%d bytes) is not its SHA-256", when, i, len(text))
			}
		}
	}
	check("first")
	check("again")
	last := texts[len(texts)-1]
	if &ts.of(last)[0] != &ts.of(last)[0] {
		t.Fatal("the hash of the same string asked twice in a row was computed again")
	}
	ts.forget()
	for _, k := range ts.kept {
		if k.text != "" || k.sum != nil {
			t.Fatal("forget kept a text")
		}
	}
	check("after forget")
}
