package werkbaum

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// spinScript adds a method that never returns, reachable only from tests, to prove that
// the deadline stops a runaway call without harming the next one.
const spinScript = `Werkbaum.methods.spin = function () { for (;;) {} };
Werkbaum.methods.poison = function () { Werkbaum.poisoned = true; for (;;) {} };
Werkbaum.methods.poisoned = function () { return !!Werkbaum.poisoned; };`

func newTestEngine(t testing.TB, opts Options, extra ...string) *Engine {
	t.Helper()
	e, err := newEngine(opts, extra...)
	if err != nil {
		t.Fatalf("newEngine: %v", err)
	}
	return e
}

const smallPlan = "[~] Shop #shop (XL)\n  - [x] Discovery #disc (M)\n  - [ ] Checkout #co (L) @tom\n    - [/] Cart #cart (M)\n"

func TestDeadlineStopsRunawayCallAndNextCallWorks(t *testing.T) {
	e := newTestEngine(t, Options{Runtimes: 1, Timeout: 150 * time.Millisecond}, spinScript)
	ctx := context.Background()

	start := time.Now()
	_, err := e.call(ctx, "poison", struct{}{})
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("runaway call: got %v, want ErrTimeout", err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Fatalf("runaway call took %v", took)
	}
	// The interrupted runtime was dropped: the next call gets a fresh one whose state was
	// not touched by the poisoned call, and works normally.
	raw, err := e.call(ctx, "poisoned", struct{}{})
	if err != nil || string(raw) != "false" {
		t.Fatalf("after interrupt: %s, %v; want a fresh runtime answering false", raw, err)
	}
	out, err := e.Apply(ctx, smallPlan, SetStatus{ID: "co", Status: "done"})
	if err != nil {
		t.Fatalf("Apply after interrupt: %v", err)
	}
	if !strings.Contains(out, "- [x] Checkout") {
		t.Fatalf("Apply after interrupt: %q", out)
	}
	if got := e.created.Load(); got != 2 {
		t.Fatalf("runtimes created = %d, want 2 (initial + replacement)", got)
	}
}

// slowLoadScript makes building a runtime take longer than the test engine's deadline.
const slowLoadScript = `(function () { var t0 = Date.now(); while (Date.now() - t0 < 400) {} })();`

// TestDeadlineStartsAfterTheRuntimeIsBuilt: the deadline bounds the script, not the build
// of a fresh runtime. The call after an interrupt builds one (here slower than the
// deadline, as on a busy machine) and must still get its full time; with the deadline
// taken before borrowing, it failed with ErrTimeout before running a line (the flake of
// TestDeadlineStopsRunawayCallAndNextCallWorks).
func TestDeadlineStartsAfterTheRuntimeIsBuilt(t *testing.T) {
	e := newTestEngine(t, Options{Runtimes: 1, Timeout: 200 * time.Millisecond}, spinScript, slowLoadScript)
	ctx := context.Background()
	if _, err := e.call(ctx, "poison", struct{}{}); !errors.Is(err, ErrTimeout) {
		t.Fatalf("runaway call: got %v, want ErrTimeout", err)
	}
	raw, err := e.call(ctx, "poisoned", struct{}{})
	if err != nil || string(raw) != "false" {
		t.Fatalf("call on a freshly built runtime: %s, %v; want false", raw, err)
	}
	if got := e.created.Load(); got != 2 {
		t.Fatalf("runtimes created = %d, want 2", got)
	}
}

func TestContextCancelInterruptsCall(t *testing.T) {
	e := newTestEngine(t, Options{Runtimes: 1, Timeout: time.Minute}, spinScript)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	_, err := e.call(ctx, "spin", struct{}{})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
	if errors.Is(err, ErrTimeout) {
		t.Fatalf("a cancelled call is not a timeout: %v", err)
	}
	// A context deadline earlier than Options.Timeout is a timeout of the call.
	ctx2, cancel2 := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel2()
	if _, err := e.call(ctx2, "spin", struct{}{}); err == nil {
		t.Fatal("spin under a context deadline returned without error")
	}
	if _, err := e.Warnings(context.Background(), smallPlan); err != nil {
		t.Fatalf("call after cancellations: %v", err)
	}
}

func TestInputOverLimitRejectedBeforeJS(t *testing.T) {
	e := newTestEngine(t, Options{Runtimes: 1})
	big := strings.Repeat("- [ ] Task with a long enough label (S)\n", (DefaultMaxInputBytes/40)+10)
	if len(big) <= DefaultMaxInputBytes {
		t.Fatalf("test plan too small: %d", len(big))
	}
	// Hold the only runtime: a rejection that needed JavaScript would block here.
	rt, err := e.borrow(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer e.release(rt)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	checks := map[string]error{}
	_, checks["Inspect"] = e.Inspect(ctx, big, InspectOptions{})
	_, checks["Analyze"] = e.Analyze(ctx, big, AnalyzeOptions{})
	_, checks["Warnings"] = e.Warnings(ctx, big)
	_, checks["Apply"] = e.Apply(ctx, big, SetStatus{ID: "a", Status: "x"})
	_, checks["Apply write"] = e.Apply(ctx, smallPlan, Write{Text: big})
	_, checks["Guard"] = e.Guard(ctx, smallPlan, big, GuardOptions{})
	for name, err := range checks {
		if !errors.Is(err, ErrTooLarge) {
			t.Errorf("%s: got %v, want ErrTooLarge", name, err)
		}
		if err != nil && !strings.Contains(err.Error(), "limit is 2097152") {
			t.Errorf("%s: error does not name the limit: %v", name, err)
		}
	}
}

func TestPoolIsBoundedAndReused(t *testing.T) {
	e := newTestEngine(t, Options{Runtimes: 2, CacheEntries: -1})
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 5; i++ {
				out, err := e.Apply(ctx, smallPlan, SetSize{ID: "cart", Size: ptrOf("XL")})
				if err != nil {
					errs <- err
					return
				}
				if !strings.Contains(out, "Cart #cart (XL)") {
					errs <- errors.New("wrong output: " + out)
					return
				}
			}
		}(g)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if got := e.created.Load(); got < 1 || got > 2 {
		t.Fatalf("runtimes created = %d, want 1..2", got)
	}
	// Sequential calls reuse one warm runtime.
	before := e.created.Load()
	for i := 0; i < 5; i++ {
		if _, err := e.Warnings(ctx, smallPlan); err != nil {
			t.Fatal(err)
		}
	}
	if e.created.Load() != before {
		t.Fatalf("sequential calls created runtimes: %d → %d", before, e.created.Load())
	}
}

func TestBorrowHonoursContext(t *testing.T) {
	e := newTestEngine(t, Options{Runtimes: 1})
	rt, err := e.borrow(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer e.release(rt)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	_, err = e.Warnings(ctx, smallPlan)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("waiting for a busy pool: got %v, want DeadlineExceeded", err)
	}
}

func TestInputErrorsAreTyped(t *testing.T) {
	e := newTestEngine(t, Options{})
	ctx := context.Background()
	cases := []struct {
		verb Verb
		code string
	}{
		{SetStatus{ID: "nope", Status: "x"}, "unknownId"},
		{SetStatus{ID: "co", Status: "finished"}, "badStatus"},
		{SetSize{ID: "co", Size: ptrOf("XXXL")}, "badSize"},
		{MoveNode{ID: "shop", Parent: "cart"}, "moveIntoItself"},
		{AddNode{Parent: "co", Line: "a\nb"}, "badLine"},
		{ApplyOps{Ops: []Op{{Op: "delete", Index: 99, Count: ptrOf(1)}}}, "badOps"},
	}
	for _, c := range cases {
		_, err := e.Apply(ctx, smallPlan, c.verb)
		var ie *InputError
		if !errors.As(err, &ie) || ie.Code != c.code || !errors.Is(err, ErrBadInput) {
			t.Errorf("%T: got %v, want InputError %s", c.verb, err, c.code)
			continue
		}
		if errors.Is(err, ErrEngine) || errors.Is(err, ErrTimeout) {
			t.Errorf("%T: input error also matches an engine error: %v", c.verb, err)
		}
		if ie.Message == "" {
			t.Errorf("%T: empty message", c.verb)
		}
	}
	if _, err := e.Inspect(ctx, smallPlan, InspectOptions{ID: "nope"}); !errors.Is(err, ErrBadInput) {
		t.Errorf("Inspect unknown id: %v", err)
	}
	if _, err := e.Inspect(ctx, smallPlan, InspectOptions{Include: []string{"everything"}}); !errors.Is(err, ErrBadInput) {
		t.Errorf("Inspect bad include: %v", err)
	}
	var ie *InputError
	if _, err := e.Apply(ctx, "- A #a\n- B \xe4\n", SetStatus{ID: "a", Status: "x"}); !errors.As(err, &ie) || ie.Code != "badEncoding" || !strings.Contains(ie.Message, "line 2") {
		t.Errorf("Latin-1 text: got %v, want badEncoding naming line 2", err)
	}
	if _, err := e.Apply(ctx, smallPlan, AddNode{Parent: "co", Line: "- M\xfcller"}); !errors.As(err, &ie) || ie.Code != "badEncoding" {
		t.Errorf("Latin-1 node line: got %v, want badEncoding", err)
	}
	if _, err := e.Apply(ctx, smallPlan, nil); !errors.Is(err, ErrBadInput) {
		t.Errorf("nil verb: %v", err)
	}
}

func TestEngineFailureIsNotInputError(t *testing.T) {
	e := newTestEngine(t, Options{}, `Werkbaum.methods.broken = function () { return null.x; };`)
	_, err := e.call(context.Background(), "broken", struct{}{})
	if !errors.Is(err, ErrEngine) || errors.Is(err, ErrBadInput) {
		t.Fatalf("got %v, want ErrEngine only", err)
	}
	if !strings.Contains(err.Error(), "TypeError") {
		t.Fatalf("engine error should name the JS error: %v", err)
	}
}

func TestInspectCacheReturnsPrivateCopies(t *testing.T) {
	e := newTestEngine(t, Options{})
	ctx := context.Background()
	a, err := e.Inspect(ctx, smallPlan, InspectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Nodes) != 4 || a.Nodes[2].ID != "co" || a.Nodes[2].People[0] != "tom" || a.Path == nil {
		t.Fatalf("unexpected inspection: %+v", a)
	}
	created := e.created.Load()
	// Scribble over everything the caller got.
	a.Nodes[2].ID = "changed"
	a.Nodes[2].People[0] = "changed"
	a.Path.Needed[0] = -1
	for k := range a.Path.AssigneeLoads {
		a.Path.AssigneeLoads[k] = -1
	}
	for i := range a.JSON {
		a.JSON[i] = ' '
	}
	b, err := e.Inspect(ctx, smallPlan, InspectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if b.Nodes[2].ID != "co" || b.Nodes[2].People[0] != "tom" || b.Path.Needed[0] != 1 || b.Path.AssigneeLoads["tom"] <= 0 {
		t.Fatalf("cache hit returned mutated state: %+v", b.Nodes[2])
	}
	if !strings.Contains(string(b.JSON), `"id":"co"`) {
		t.Fatalf("cached JSON mutated: %.80s", b.JSON)
	}
	if e.cache.len() != 1 {
		t.Fatalf("cache entries = %d, want 1", e.cache.len())
	}
	// Options are part of the key.
	sub, err := e.Inspect(ctx, smallPlan, InspectOptions{ID: "co", Include: []string{"tree"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(sub.Nodes) != 2 || sub.Path != nil || sub.Warnings != nil {
		t.Fatalf("subtree view: %+v", sub)
	}
	if e.cache.len() != 2 || e.created.Load() != created {
		t.Fatalf("cache entries = %d, runtimes %d→%d", e.cache.len(), created, e.created.Load())
	}
}

func TestCacheEvictsLeastRecentlyUsed(t *testing.T) {
	c := newLRU(2, 1<<20)
	c.put(&lruEntry{key: "a"})
	c.put(&lruEntry{key: "b"})
	if _, ok := c.get("a"); !ok {
		t.Fatal("a missing")
	}
	c.put(&lruEntry{key: "c"}) // evicts b, the least recently used
	if _, ok := c.get("b"); ok {
		t.Fatal("b should be evicted")
	}
	if _, ok := c.get("a"); !ok {
		t.Fatal("a should survive")
	}
	if c.len() != 2 {
		t.Fatalf("len = %d", c.len())
	}
}

// TestCacheBoundedByBytes: large answers evict older ones before the count is reached,
// and the newest answer stays even when it alone is over the bound.
func TestCacheBoundedByBytes(t *testing.T) {
	c := newLRU(64, 100)
	c.put(&lruEntry{key: "a", raw: make([]byte, 40)})
	c.put(&lruEntry{key: "b", raw: make([]byte, 40)})
	c.put(&lruEntry{key: "c", raw: make([]byte, 40)}) // 120 bytes: a goes
	if _, ok := c.get("a"); ok || c.len() != 2 {
		t.Fatalf("a kept or len %d, want b and c", c.len())
	}
	c.put(&lruEntry{key: "b", raw: make([]byte, 10)}) // replaced: 50 bytes
	c.put(&lruEntry{key: "d", raw: make([]byte, 40)}) // 90 bytes: all three fit
	if c.len() != 3 || c.bytes != 90 {
		t.Fatalf("len %d, bytes %d; want 3 entries, 90 bytes", c.len(), c.bytes)
	}
	c.put(&lruEntry{key: "huge", raw: make([]byte, 500)})
	if _, ok := c.get("huge"); !ok || c.len() != 1 || c.bytes != 500 {
		t.Fatalf("the newest answer must stay alone: len %d, bytes %d", c.len(), c.bytes)
	}
}

func TestChecksums(t *testing.T) {
	// Values from NOTATION.md §27.
	if got := NotationChecksum("a\nb"); got != "sha256:7e18f737311b2dc3b2f269dd78396b0351f14fb66efa879f768cb23181883c78" {
		t.Errorf("NotationChecksum(a\\nb) = %s", got)
	}
	if NotationChecksum("a\r\nb") != NotationChecksum("a\nb") || NotationChecksum("a\rb") != NotationChecksum("a\nb") {
		t.Error("NotationChecksum must normalise CRLF and CR")
	}
	if got := NotationChecksum("a\nb\n"); got != "sha256:911169ddaaf146aff539f58c26c489af3b892dff0fe283c1c264c65ae5aa59a2" {
		t.Errorf("NotationChecksum(a\\nb\\n) = %s", got)
	}
	// Checksum is over the raw bytes: line endings matter.
	if Checksum([]byte("a\nb")) != "7e18f737311b2dc3b2f269dd78396b0351f14fb66efa879f768cb23181883c78" {
		t.Errorf("Checksum(a\\nb) = %s", Checksum([]byte("a\nb")))
	}
	if Checksum([]byte("a\r\nb")) == Checksum([]byte("a\nb")) {
		t.Error("Checksum must hash the raw bytes")
	}
}

func ptrOf[T any](v T) *T { return &v }

// TestInspectViewDecodesStrictly keeps the typed API in step with js/55_inspect.js: every
// field the script emits for the shared examples must have a home in Inspection.
func TestInspectViewDecodesStrictly(t *testing.T) {
	e := newTestEngine(t, Options{})
	names, _ := filepath.Glob(filepath.Join(sharedDir(t), "werkbaum", "examples", "*.werkbaum"))
	if len(names) == 0 {
		t.Skip("shared examples not available")
	}
	for _, name := range names {
		text, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		raw, err := e.InspectJSON(context.Background(), string(text), InspectOptions{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		d := json.NewDecoder(bytes.NewReader(raw))
		d.DisallowUnknownFields()
		var in Inspection
		if err := d.Decode(&in); err != nil {
			t.Errorf("%s: inspect view has a field the Go types lack: %v", filepath.Base(name), err)
			continue
		}
		if len(in.Nodes) == 0 || in.Path == nil {
			t.Errorf("%s: empty view", filepath.Base(name))
		}
	}
}
