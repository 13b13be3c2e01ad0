package werkbaum

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"log/slog"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"weak"

	"talkd/internal/werkbaum/gen"
)

// TestOutlineOfTheWriterEqualsDecode: the outline the record writer yields with a whole
// plan's view (Engine.Outline) is exactly what decoding that view gives (DecodeOutline, the
// outline's definition), on every plan of the view's tests (the shared examples, the case
// plans, non-ASCII names and escapes), generated plans with @jörg and @Müller, warnings
// and a path, and a text that is not valid UTF-8; and the view is the one InspectJSON
// gives.
func TestOutlineOfTheWriterEqualsDecode(t *testing.T) {
	ctx := context.Background()
	e := newTestEngine(t, Options{CacheEntries: -1})
	texts := append(viewTestPlans(t), gen.Plan(1000, 1), gen.Plan(3000, 7), gen.Coupled(6, 5, 1),
		"- [ ] bad \xff\xfe bytes #b @j\xc3rg :#b\n  - [x] \xed\xa0\x80 surrogate #s (M) @Müller\n  - [x] x #s\n")
	var nodes, warnings, withPath int
	for _, text := range texts {
		view, o, err := inspectOutline(ctx, e, text)
		if err != nil {
			t.Fatal(err)
		}
		if o == nil {
			t.Fatalf("no outline with the view of %.80q", text)
		}
		want, err := DecodeOutline(view)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(o, want) {
			for i := range min(len(o.Nodes), len(want.Nodes)) {
				if !reflect.DeepEqual(o.Nodes[i], want.Nodes[i]) {
					t.Logf("node %d: %#v\nwant %#v", i, o.Nodes[i], want.Nodes[i])
					break
				}
			}
			t.Fatalf("the writer's outline of %.80q differs from the decoded view (nodes %d/%d, warnings equal %v, path equal %v)",
				text, len(o.Nodes), len(want.Nodes), reflect.DeepEqual(o.Warnings, want.Warnings), reflect.DeepEqual(o.Path, want.Path))
		}
		plain, err := e.InspectJSON(ctx, text, InspectOptions{})
		if err != nil || string(plain) != string(view) {
			t.Fatalf("InspectView's view differs from InspectJSON's (%v)", err)
		}
		nodes += len(o.Nodes)
		warnings += len(o.Warnings)
		if o.Path != nil && len(o.Path.Stations) > 0 {
			withPath++
		}
	}
	if nodes < 5000 || warnings < 50 || withPath < 20 {
		t.Fatalf("too little compared: %d nodes, %d warnings, %d paths with stations", nodes, warnings, withPath)
	}
	t.Logf("%d plans: %d nodes, %d warnings, %d paths with stations", len(texts), nodes, warnings, withPath)
}

// TestInspectOutlineSharedAndFromDisk: the outline is kept with the cached view (a second
// call and a concurrent caller get the same one, no other inspect makes one), and a view
// read back from the persisted analyses comes without one: the first reader decodes it,
// and the cache keeps that decode with the view, counted in its weight.
func TestInspectOutlineSharedAndFromDisk(t *testing.T) {
	ctx := context.Background()
	text := gen.Plan(300, 2)
	dir := t.TempDir()
	p1 := openTestPersist(t, dir, 1<<30, nil)
	e := newTestEngine(t, Options{Persist: p1})
	_, first, err := inspectOutline(ctx, e, text)
	if err != nil || first == nil {
		t.Fatalf("first: %v %v", first, err)
	}
	_, again, _ := inspectOutline(ctx, e, text)
	if again != first {
		t.Fatal("the cached view's outline was not the one written with it")
	}
	ent, err := e.inspect(ctx, text, InspectOptions{Include: []string{"tree"}})
	if err != nil || ent.outline != nil {
		t.Fatalf("a view of some parts has an outline: %v %v", ent.outline, err)
	}
	closePersist(t, p1)

	p2 := openTestPersist(t, dir, 1<<30, nil)
	e2 := newTestEngine(t, Options{Persist: p2})
	view, err := e2.InspectView(ctx, text, InspectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if st := p2.Stats(); st.FromDisk != 1 {
		t.Fatalf("the restarted engine did not read the view from disk: %+v", st)
	}
	if cachedOutline(e2, text) != nil {
		t.Fatal("a view read from disk came with an outline")
	}
	o, err := e2.Outline(ctx, text)
	if err != nil {
		t.Fatal(err)
	}
	decoded, err := DecodeOutline(view)
	if err != nil || !reflect.DeepEqual(decoded, first) || !reflect.DeepEqual(o, first) {
		t.Fatalf("the outline of the view from disk differs from the written one (%v)", err)
	}
	if cachedOutline(e2, text) != o {
		t.Fatal("the outline decoded from the view read back is not kept with it")
	}
	if want := len(view) + o.footprint(); e2.cache.bytes != want {
		t.Fatalf("the cache counts %d bytes, want the view's and the decoded outline's %d", e2.cache.bytes, want)
	}
}

// TestOutlineDecodedOnceForConcurrentAskers: many readers asking at once for the outline of
// a view that has none (read back from disk, or shed) wait for one decode and share it;
// the cache keeps it, and a later reader gets the same without a decode.
func TestOutlineDecodedOnceForConcurrentAskers(t *testing.T) {
	ctx := context.Background()
	var logs syncLog
	e := newTestEngine(t, Options{Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	text := gen.Plan(2000, 3)
	_, written, err := inspectOutline(ctx, e, text)
	if err != nil {
		t.Fatal(err)
	}
	if outlines, _, _ := e.ShedIdle(); outlines != 1 {
		t.Fatalf("ShedIdle dropped %d outlines, want 1", outlines)
	}
	const askers = 16
	got := make([]*Outline, askers)
	errs := make([]error, askers)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range askers {
		wg.Go(func() {
			<-start
			got[i], errs[i] = e.Outline(ctx, text)
		})
	}
	close(start)
	wg.Wait()
	for i := range askers {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		if got[i] != got[0] {
			t.Fatalf("asker %d got an outline of its own: the outline was decoded more than once", i)
		}
	}
	if got[0] == written || !reflect.DeepEqual(got[0], written) {
		t.Fatalf("after the shed the outline is the one before (nothing was dropped): %v; equal to it: %v", got[0] == written, reflect.DeepEqual(got[0], written))
	}
	if later, err := e.Outline(ctx, text); err != nil || later != got[0] || cachedOutline(e, text) != got[0] {
		t.Fatalf("a later reader did not get the kept outline (%v)", err)
	}
	if n := strings.Count(logs.String(), "outline decoded from the view"); n != 1 {
		t.Fatalf("%d decodes logged, want 1", n)
	}
}

// inspectOutline is the whole plan's view (the cache's bytes) and its outline.
func inspectOutline(ctx context.Context, e *Engine, text string) (json.RawMessage, *Outline, error) {
	view, err := e.InspectView(ctx, text, InspectOptions{})
	if err != nil {
		return nil, nil, err
	}
	o, err := e.Outline(ctx, text)
	return view, o, err
}

// cachedOutline is the outline the cache keeps with text's whole view (nil when it keeps
// none, or not the view).
func cachedOutline(e *Engine, text string) *Outline {
	opts, _ := json.Marshal(InspectOptions{})
	sum := sha256.Sum256([]byte(text))
	key := "inspect\x00" + string(opts) + "\x00" + string(sum[:])
	e.cache.mu.Lock()
	defer e.cache.mu.Unlock()
	if el, ok := e.cache.items[key]; ok {
		return el.Value.(*lruEntry).outline
	}
	return nil
}

// TestDerivedIsBuiltOnceAndGoesWithTheOutline: what a reader builds from an outline (the
// MCP door's compact model) is built once however many ask at once, and is freed with the
// outline when the idle shed drops it from the engine's cache, its only holder.
func TestDerivedIsBuiltOnceAndGoesWithTheOutline(t *testing.T) {
	e := newTestEngine(t, Options{})
	o, err := e.Outline(context.Background(), smallPlan)
	if err != nil {
		t.Fatal(err)
	}
	// With a pointer in it: a small object without pointers comes from the tiny allocator,
	// which shares a block among objects, and a weak pointer to it stays set while any of
	// them lives.
	type model struct{ o *Outline }
	var builds atomic.Int32
	got := make([]any, 16)
	var wg sync.WaitGroup
	for i := range got {
		wg.Go(func() {
			got[i] = o.Derived(func(o *Outline) any {
				builds.Add(1)
				return &model{o: o}
			})
		})
	}
	wg.Wait()
	if n := builds.Load(); n != 1 {
		t.Fatalf("16 askers built the derived value %d times, want once", n)
	}
	for i, g := range got {
		if g != got[0] {
			t.Fatalf("asker %d got another value than asker 0", i)
		}
	}
	held := weak.Make(got[0].(*model))
	o, got = nil, nil
	if outlines, _, _ := e.ShedIdle(); outlines != 1 {
		t.Fatalf("ShedIdle dropped %d outlines, want 1", outlines)
	}
	runtime.GC()
	runtime.GC()
	if held.Value() != nil {
		t.Error("the derived value outlived its outline's drop from the engine's cache")
	}
}
