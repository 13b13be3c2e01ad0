package werkbaum

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestMemoDoesNotChangeResults runs the calls of a write (inspect, apply, guard, inspect of
// the new text) and the other read methods in an order that makes the scripts' per-runtime
// memo hit, and compares every answer with an engine whose memo is off.
func TestMemoDoesNotChangeResults(t *testing.T) {
	ctx := context.Background()
	plain := newTestEngine(t, Options{Runtimes: 1, CacheEntries: -1})
	memo := newTestEngine(t, Options{Runtimes: 1, CacheEntries: 1})
	dir := filepath.Join(sharedDir(t), "werkbaum", "examples")
	files, err := filepath.Glob(filepath.Join(dir, "*.werkbaum"))
	if err != nil || len(files) == 0 {
		t.Skipf("no examples: %v", err)
	}
	texts := []string{smallPlan, "- A #a :#zz\n  - B\n  | C\n\"stray\n---\n#nope\n  x\n"}
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		texts = append(texts, string(src))
	}
	same := func(what string, a, b any, errA, errB error) {
		t.Helper()
		if (errA == nil) != (errB == nil) || !reflect.DeepEqual(a, b) {
			t.Fatalf("%s differs with the memo:\n%v %v\n%v %v", what, a, errA, b, errB)
		}
	}
	for i, text := range texts {
		for _, e := range []*Engine{plain, memo} {
			// Warm the memo with the old text (as the agent's read before a write does).
			if _, err := e.Analyze(ctx, text, AnalyzeOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		a1, errA := plain.InspectJSON(ctx, text, InspectOptions{})
		b1, errB := memo.InspectJSON(ctx, text, InspectOptions{})
		same("inspect", string(a1), string(b1), errA, errB)
		wa, errA := plain.Warnings(ctx, text)
		wb, errB := memo.Warnings(ctx, text)
		same("warnings", wa, wb, errA, errB)
		pa, errA := plain.call(ctx, "parse", map[string]string{"text": text})
		pb, errB := memo.call(ctx, "parse", map[string]string{"text": text})
		same("parse", string(pa), string(pb), errA, errB)
		if bytes.Contains(pb, []byte(`"text":`)) && !strings.Contains(text, `"text":`) {
			t.Fatalf("plan %d: the parse method shows warning texts added by an analysis", i)
		}
		var in Inspection
		if err := json.Unmarshal(a1, &in); err != nil {
			t.Fatal(err)
		}
		for _, n := range in.Nodes {
			if n.ID == "" {
				continue
			}
			for _, v := range []Verb{SetStatus{ID: n.ID, Status: "prod"}, SetSize{ID: n.ID}, RemoveNode{ID: n.ID}} {
				na, errA := plain.Apply(ctx, text, v)
				nb, errB := memo.Apply(ctx, text, v)
				same("apply", na, nb, errA, errB)
				if errA != nil {
					continue
				}
				ga, errA := plain.Guard(ctx, text, na, GuardOptions{})
				gb, errB := memo.Guard(ctx, text, nb, GuardOptions{})
				same("guard", ga, gb, errA, errB)
				ia, errA := plain.InspectJSON(ctx, na, InspectOptions{})
				ib, errB := memo.InspectJSON(ctx, nb, InspectOptions{})
				same("inspect after the write", string(ia), string(ib), errA, errB)
			}
			break
		}
	}
}

// memoProbe is an engine with test methods that report what the scripts' memos hold.
const memoProbe = `Werkbaum.methods.memoEntries = function () { return Werkbaum._memoEntries(); };
Werkbaum.methods.memoHolds = function (a) { return Werkbaum._memoHolds(a.text); };`

func memoEntries(t *testing.T, e *Engine) string {
	t.Helper()
	raw, err := e.call(context.Background(), "memoEntries", struct{}{})
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

func memoHolds(t *testing.T, e *Engine, text string) bool {
	t.Helper()
	raw, err := e.call(context.Background(), "memoHolds", struct {
		Text string `json:"text"`
	}{text})
	if err != nil {
		t.Fatal(err)
	}
	return string(raw) == "true"
}

// TestIdleRuntimeTrimsItsMemo: a runtime that has not been used for memoIdle keeps the
// current text of each plan worked on last (what the agents' next writes start from): the
// texts it used that no write has superseded since, also a text a write came back to (a
// status set and set back finds it in the memo rather than puts it), and not the old
// text of a write. DropMemos, the idle daemon's call, empties it.
func TestIdleRuntimeTrimsItsMemo(t *testing.T) {
	ctx := context.Background()
	e := newTestEngine(t, Options{Runtimes: 1}, memoProbe)
	// Two plans: an agent reads plan a and writes it, another reads plan b (non-ASCII
	// names), then the first sets its status back.
	planA := smallPlan
	planB := "Plan #root\n  [ ] Cart #cart @jörg (S)\n  [~] Checkout #co2 @Müller (M) needs #cart\n"
	if _, err := e.InspectJSON(ctx, planA, InspectOptions{}); err != nil {
		t.Fatal(err)
	}
	edited, err := e.Edit(ctx, planA, SetStatus{ID: "disc", Status: "progress"}, GuardOptions{})
	if err != nil || !edited.Guard.OK || edited.Text == planA {
		t.Fatalf("edit: %+v %v", edited, err)
	}
	setBack := func() {
		t.Helper()
		back, err := e.Edit(ctx, edited.Text, SetStatus{ID: "disc", Status: "done"}, GuardOptions{})
		if err != nil || back.Text != planA || !back.OldKnown {
			t.Fatalf("status set back: %+v %v", back, err)
		}
	}
	if _, err := e.InspectJSON(ctx, planB, InspectOptions{}); err != nil {
		t.Fatal(err)
	}
	trimmed := func() {
		t.Helper()
		time.Sleep(memoIdle + time.Second)        // no call for memoIdle: the engine trims the memo
		if got := memoEntries(t, e); got != "4" { // per text the parsed document and the analysis
			t.Fatalf("memo entries after %v idle = %s, want 4 (two texts)", memoIdle, got)
		}
	}
	trimmed()
	if a, a2, b := memoHolds(t, e, planA), memoHolds(t, e, edited.Text), memoHolds(t, e, planB); a || !a2 || !b {
		t.Fatalf("after the trim the memo holds the old text %v, the written one %v, the other plan's %v; want the current two", a, a2, b)
	}
	setBack()
	trimmed()
	if a, a2, b := memoHolds(t, e, planA), memoHolds(t, e, edited.Text), memoHolds(t, e, planB); !a || a2 || !b {
		t.Fatalf("after the status set back the memo holds the text come back to %v, the one left %v, the other plan's %v; want the current two", a, a2, b)
	}
	if n := e.DropMemos(); n != 1 {
		t.Fatalf("DropMemos emptied %d runtimes, want 1", n)
	}
	if got := memoEntries(t, e); got != "0" {
		t.Fatalf("memo entries after DropMemos = %s, want 0", got)
	}
}

// TestTrimKeepsTheNewestWithinTheBound: the trim keeps at most four current texts (05_text.js
// TRIM_KEEP), the ones used last, where a text found in the memo counts as used; and
// together no more than MEMO_MAX_CHARS (1 Mi characters), passing over a text that does
// not fit.
func TestTrimKeepsTheNewestWithinTheBound(t *testing.T) {
	ctx := context.Background()
	e := newTestEngine(t, Options{Runtimes: 1}, memoProbe)
	e.memoIdle = 50 * time.Millisecond
	trim := func() {
		t.Helper()
		memoEntries(t, e) // a call: the short idle time counts from its release
		// The trim fires 50 ms in; the rest is slack for a loaded machine.
		time.Sleep(e.memoIdle + 1500*time.Millisecond)
	}
	texts := make([]string, 5)
	for i := range texts {
		texts[i] = smallPlan + fmt.Sprintf("%%%% plan %d\n", i)
		if _, err := e.InspectJSON(ctx, texts[i], InspectOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// The first text found again (a subtree, so that the engine's answer cache does not
	// answer it instead of the script): used after the others.
	if _, err := e.InspectJSON(ctx, texts[0], InspectOptions{ID: "co"}); err != nil {
		t.Fatal(err)
	}
	trim()
	for i, want := range []bool{true, false, true, true, true} {
		if got := memoHolds(t, e, texts[i]); got != want {
			t.Errorf("after the trim the memo holds text %d: %v, want %v", i, got, want)
		}
	}
	// Two texts of 600,000 characters: together over the bound, so the trim keeps only the
	// newer (the memo's own bound already let the small ones go when they came).
	large := []string{smallPlan + "%% " + strings.Repeat("x", 600_000) + "\n", smallPlan + "%% " + strings.Repeat("y", 600_000) + "\n"}
	for _, text := range large {
		if _, err := e.InspectJSON(ctx, text, InspectOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	trim()
	if older, newer := memoHolds(t, e, large[0]), memoHolds(t, e, large[1]); older || !newer {
		t.Errorf("after the trim the memo holds the older large text %v, the newer %v; want only the newer", older, newer)
	}
	if got := memoEntries(t, e); got != "2" {
		t.Errorf("memo entries after the trim = %s, want 2 (the newer large text's document and analysis)", got)
	}
}

// TestTrimKeepsNoLargeText: the trim keeps a newest text only within the memo's size
// bound (05_text.js MEMO_MAX_CHARS, 1 Mi characters), so an idle runtime never holds the
// analysis of a plan near the input limit.
func TestTrimKeepsNoLargeText(t *testing.T) {
	ctx := context.Background()
	e := newTestEngine(t, Options{Runtimes: 1}, memoProbe)
	large := smallPlan + "%% " + strings.Repeat("x", 1<<20) + "\n"
	if _, err := e.InspectJSON(ctx, large, InspectOptions{}); err != nil {
		t.Fatal(err)
	}
	if !memoHolds(t, e, large) { // within memoIdle (2 s) of the inspect: no trim yet
		t.Fatal("the memo does not hold the text right after its inspect")
	}
	// A short idle time from the next call's release on (release reads it, on this
	// goroutine).
	e.memoIdle = 50 * time.Millisecond
	memoEntries(t, e)
	time.Sleep(e.memoIdle + 500*time.Millisecond)
	if got := memoEntries(t, e); got != "0" {
		t.Fatalf("memo entries after the trim of a text over 1 Mi characters = %s, want 0", got)
	}
}

// TestTrimKeepsTheRuntimesOrder: a trimmed runtime keeps its place in the pool, so the next
// call borrows the runtime used last, whose memo holds the last text, and ShedIdle keeps
// that one. (Trimmed runtimes used to go to the bottom: the other runtime, with an older
// text or none, came first.)
func TestTrimKeepsTheRuntimesOrder(t *testing.T) {
	ctx := context.Background()
	e := newTestEngine(t, Options{Runtimes: 2})
	e.memoIdle = 50 * time.Millisecond
	first, err := e.borrow(ctx)
	if err != nil {
		t.Fatal(err)
	}
	last, err := e.borrow(ctx)
	if err != nil {
		t.Fatal(err)
	}
	e.release(first)
	time.Sleep(20 * time.Millisecond)
	e.release(last) // its trim fires after first's
	time.Sleep(e.memoIdle + 300*time.Millisecond)
	e.mu.Lock()
	order := slices.Clone(e.idle)
	e.mu.Unlock()
	if len(order) != 2 || order[1] != last {
		t.Fatalf("after both trims the runtime released last is not on top (%d idle)", len(order))
	}
	e.ShedIdle()
	e.mu.Lock()
	kept := slices.Clone(e.idle)
	e.mu.Unlock()
	if len(kept) != 1 || kept[0] != last {
		t.Fatalf("ShedIdle kept %d runtimes, not the one released last", len(kept))
	}
}

// TestMemoTrimRacesWithCalls lets memo trims fire between the calls of many goroutines:
// every answer stays right and the pool keeps its bound.
func TestMemoTrimRacesWithCalls(t *testing.T) {
	e := newTestEngine(t, Options{Runtimes: 2})
	e.memoIdle = time.Millisecond
	ctx := context.Background()
	want, err := newTestEngine(t, Options{CacheEntries: -1}).InspectJSON(ctx, smallPlan, InspectOptions{ID: "co"})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for g := 0; g < 6; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 15; i++ {
				out, err := e.Apply(ctx, smallPlan, SetSize{ID: "cart", Size: ptrOf("XL")})
				if err == nil && !strings.Contains(out, "Cart #cart (XL)") {
					err = errors.New("wrong output: " + out)
				}
				if err == nil {
					var got []byte
					// A distinct id per call defeats the Go cache, so the script runs.
					got, err = e.InspectJSON(ctx, smallPlan, InspectOptions{ID: "co", Include: []string{"tree", "warnings", "path"}[:1+i%3]})
					if err == nil && i%3 == 2 && !bytes.Equal(got, want) {
						err = errors.New("inspect differs: " + string(got))
					}
				}
				if err != nil {
					errs <- err
					return
				}
				time.Sleep(time.Duration(i%3) * time.Millisecond)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	time.Sleep(20 * time.Millisecond)
	e.mu.Lock()
	idle := len(e.idle)
	e.mu.Unlock()
	if got := e.created.Load(); got < 1 || got > 2 || idle != int(got) {
		t.Fatalf("runtimes created = %d, idle = %d; want 1..2, all idle", got, idle)
	}
}

// countScript counts what the scripts really compute: distinct parsed documents (a memo
// hit returns the document it made before), model runs (each is a full analysis) and models
// of a status edit made from the old model.
const countScript = `
(function (W) {
  var parse = W.parse, model = W._model, fromOld = W._modelBoxEdit, docs = [], models = 0, edits = 0;
  W.parse = function (text) {
    var d = parse(text);
    if (docs.indexOf(d) < 0) docs.push(d);
    return d;
  };
  W._model = function (doc, opts) {
    models++;
    return model(doc, opts);
  };
  W._modelBoxEdit = function (prev, doc, index) {
    var m = fromOld(prev, doc, index);
    if (m !== null) edits++;
    return m;
  };
  W.methods.counts = function () {
    var out = { parses: docs.length, models: models, fromOld: edits };
    docs = [];
    models = edits = 0;
    return out;
  };
})(Werkbaum);`

// TestWriteAnalysesEachTextOnce: the calls of an agent's write (read, apply, guard, read
// of the new text) parse the old and the new text once each and analyse each once (the new
// text's model made from the old one: a status edit), also for a text far above the size
// at which the memo used to switch itself off (262,144 characters: a 10,000-node write
// then took 4 s instead of tens of milliseconds).
func TestWriteAnalysesEachTextOnce(t *testing.T) {
	ctx := context.Background()
	big := smallPlan + "%% " + strings.Repeat("ü", 600000) + "\n"
	for _, text := range []string{smallPlan, big} {
		e := newTestEngine(t, Options{Runtimes: 1, Timeout: time.Minute}, countScript)
		if _, err := e.InspectJSON(ctx, text, InspectOptions{}); err != nil {
			t.Fatal(err)
		}
		next, err := e.Apply(ctx, text, SetStatus{ID: "co", Status: "done"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.Guard(ctx, text, next, GuardOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := e.InspectJSON(ctx, next, InspectOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := e.Warnings(ctx, next); err != nil {
			t.Fatal(err)
		}
		raw, err := e.call(ctx, "counts", struct{}{})
		if err != nil {
			t.Fatal(err)
		}
		if got := string(raw); got != `{"parses":2,"models":1,"fromOld":1}` {
			t.Errorf("%d bytes: a write computed %s, want 2 parses, one model and one from the old model", len(text), got)
		}
	}
}

// TestMemoKeepsTheNewestTwoTextsAtAnySize: the memo's bound drops older entries by size
// but always keeps the two newest texts (a write's old and new text), however large.
func TestMemoKeepsTheNewestTwoTextsAtAnySize(t *testing.T) {
	e := newTestEngine(t, Options{Runtimes: 1, Timeout: time.Minute}, `
Werkbaum.methods.memoFill = function (a) {
  var m = Werkbaum._memo(), kept = [];
  for (var i = 0; i < a.texts.length; i++) {
    var t = 'x'.repeat(a.texts[i]) + i;
    m.put(t, i);
    var n = 0;
    for (var k = 0; k <= i; k++) if (m.get('x'.repeat(a.texts[k]) + k) !== null) n++;
    kept.push(n);
  }
  return kept;
};`)
	for _, c := range []struct {
		sizes []int
		want  string
	}{
		{[]int{10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10}, "[1,2,3,4,5,6,7,8,9,10,11,12,12,12]"}, // small: the count bound (12)
		{[]int{3 << 20, 3 << 20, 3 << 20}, "[1,2,2]"},                                                         // huge: the newest two stay
		{[]int{100, 3 << 20, 3 << 20, 10}, "[1,2,2,2]"},                                                       // a huge pair pushes the rest out
		{[]int{300 << 10, 300 << 10, 300 << 10, 300 << 10, 300 << 10}, "[1,2,3,3,3]"},                         // three of 300 Ki characters fit in 1 Mi, a fourth does not
	} {
		raw, err := e.call(context.Background(), "memoFill", map[string][]int{"texts": c.sizes})
		if err != nil {
			t.Fatal(err)
		}
		if string(raw) != c.want {
			t.Errorf("texts of %v characters: kept %s, want %s", c.sizes, raw, c.want)
		}
	}
}

// TestDeadlineGrowsWithTheInput: a call's deadline is Timeout plus TimeoutPerMiB per MiB of
// its largest text, so a call on a large plan that needs longer than the base deadline
// completes, the same work on a small text is still cut off, and TimeoutPerMiB < 0 turns
// the extension off. The method waits by the wall clock, so a busy machine does not change
// the outcome.
func TestDeadlineGrowsWithTheInput(t *testing.T) {
	const wait = `Werkbaum.methods.wait = function (a) {
  var end = Date.now() + a.ms;
  while (Date.now() < end) {}
  return a.text.length;
};`
	ctx := context.Background()
	big := strings.Repeat("- [ ] Task @jörg\n", (1<<20)/18+1) // just over 1 MiB
	e := newTestEngine(t, Options{Runtimes: 1, Timeout: 150 * time.Millisecond, TimeoutPerMiB: 3 * time.Second}, wait)
	if got := e.timeoutFor([]textArg{{"old", smallPlan}, {"text", big}}); got < 3150*time.Millisecond || got > 3300*time.Millisecond {
		t.Errorf("deadline for a 1 MiB text = %v, want 150ms + 3s per MiB", got)
	}
	args := map[string]int{"ms": 600}
	if _, err := e.call(ctx, "wait", args, textArg{"text", big}); err != nil {
		t.Errorf("600 ms on a 1 MiB text with 150 ms + 3 s per MiB: %v", err)
	}
	if _, err := e.call(ctx, "wait", args, textArg{"text", smallPlan}); !errors.Is(err, ErrTimeout) {
		t.Errorf("600 ms on a small text with a 150 ms deadline: got %v, want ErrTimeout", err)
	}
	fixed := newTestEngine(t, Options{Runtimes: 1, Timeout: 150 * time.Millisecond, TimeoutPerMiB: -1}, wait)
	if _, err := fixed.call(ctx, "wait", args, textArg{"text", big}); !errors.Is(err, ErrTimeout) {
		t.Errorf("TimeoutPerMiB < 0: got %v, want ErrTimeout", err)
	}
}
