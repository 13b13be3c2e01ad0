package werkbaum

import (
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
