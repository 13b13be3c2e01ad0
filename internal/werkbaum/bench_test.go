package werkbaum

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"talkd/internal/werkbaum/gen"
)

// Benchmarks of the engine (numbers and commands in docs/bench-werkbaum.md):
//
//	go test -run '^$' -bench . -benchmem ./internal/werkbaum
//
// The generated plans are exact ports of js/test/gen.js (bigPlan, coupledPlan), so
// testdata/bench/node-bench.js measures the same texts under Node.

// mulberry32 is the PRNG of js/test/gen.js, bit for bit (uint32 arithmetic = Math.imul).
func mulberry32(seed uint32) func() float64 {
	a := seed
	return func() float64 {
		a += 0x6d2b79f5
		t := a
		t = (t ^ (t >> 15)) * (t | 1)
		t ^= t + (t^(t>>7))*(t|61)
		return float64(t^(t>>14)) / 4294967296
	}
}

// bigPlan is gen.js bigPlan(n, seed): areas of tasks of alternative steps, with ids, sizes,
// tags, a dependency per task and short descriptions.
func bigPlan(n int, seed uint32) string {
	r := mulberry32(seed)
	var b strings.Builder
	i := 0
	for i < n {
		fmt.Fprintf(&b, "[~] #r%d: Area %d (XL) @ann &taiga.area%d\n", i, i, i)
		i++
		for a := 0; a < 6 && i < n; a++ {
			fmt.Fprintf(&b, "  - [ ] #t%d: Task %d (M) @bo :#r0\n", i, i)
			i++
			for s := 0; s < 4 && i < n; s++ {
				box := [...]string{"[ ]", "[x]", "[~]", "[?]"}[int(r()*4)]
				fmt.Fprintf(&b, "    | %s #s%d: Step %d (S) @cy\n", box, i, i)
				i++
			}
			fmt.Fprintf(&b, "    \" A short description of task %d\n", i)
		}
	}
	return b.String()
}

// coupledPlan is gen.js coupledPlan(groups, 0): two-way groups whose first options all
// depend on one shared pool node, i.e. one coupled component of 2^groups assignments.
func coupledPlan(groups int) string {
	var b strings.Builder
	b.WriteString("Ship (XXL)\n")
	for i := 0; i < groups; i++ {
		fmt.Fprintf(&b, "  - Pick %d\n    | A%d (S) :#db\n    | B%d (M)\n", i, i, i)
	}
	b.WriteString("  + Pool\n    - #db: DB (L)\n")
	return b.String()
}

func TestBenchPlansMatchNodeGenerator(t *testing.T) {
	// Checksums of gen.js bigPlan(2000, 7) and coupledPlan(14) as printed by
	// testdata/bench/node-bench.js: the Go ports generate the very same texts.
	want := map[string]string{
		"big2000":   "sha256:692dea44c742e445246ec2173434048678c0a1de8c58b39ceae682607176b05d",
		"coupled14": "sha256:54413be74e4eb91e84f8938241af029af8d3f4cde4e9edbb96db89d91b7e72a0",
	}
	got := map[string]string{
		"big2000":   NotationChecksum(bigPlan(2000, 7)),
		"coupled14": NotationChecksum(coupledPlan(14)),
	}
	for k := range want {
		if want[k] != got[k] {
			t.Errorf("%s: checksum %s, Node's generator gives %s", k, got[k], want[k])
		}
	}
}

func readExample(b testing.TB, name string) string {
	src, err := os.ReadFile(filepath.Join(sharedDir(b), "werkbaum", "examples", name))
	if err != nil {
		b.Skipf("shared examples not available: %v", err)
	}
	return string(src)
}

func benchEngine(b *testing.B) *Engine {
	e, err := NewEngine(Options{CacheEntries: -1})
	if err != nil {
		b.Fatal(err)
	}
	return e
}

func benchInspect(b *testing.B, text string) {
	e := benchEngine(b)
	ctx := context.Background()
	if _, err := e.Inspect(ctx, text, InspectOptions{}); err != nil { // warm the runtime
		b.Fatal(err)
	}
	b.SetBytes(int64(len(text)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := e.Inspect(ctx, text, InspectOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

// benchInspectJSON is benchInspect through InspectJSON, the plan store's path (no typed
// decoding in Go).
func benchInspectJSON(b *testing.B, text string) {
	e := benchEngine(b)
	ctx := context.Background()
	if _, err := e.InspectJSON(ctx, text, InspectOptions{}); err != nil { // warm the runtime
		b.Fatal(err)
	}
	b.SetBytes(int64(len(text)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := e.InspectJSON(ctx, text, InspectOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkInspectJSONWerkbaum(b *testing.B) {
	benchInspectJSON(b, readExample(b, "werkbaum.werkbaum"))
}
func BenchmarkInspectJSONGenerated2000(b *testing.B) { benchInspectJSON(b, bigPlan(2000, 7)) }
func BenchmarkInspectJSONSmall(b *testing.B)         { benchInspectJSON(b, smallPlan) }

func BenchmarkInspectWerkbaum(b *testing.B)      { benchInspect(b, readExample(b, "werkbaum.werkbaum")) }
func BenchmarkInspectGenerated2000(b *testing.B) { benchInspect(b, bigPlan(2000, 7)) }
func BenchmarkInspectCoupled14(b *testing.B)     { benchInspect(b, coupledPlan(14)) }
func BenchmarkInspectSmall(b *testing.B)         { benchInspect(b, smallPlan) }

// The exact search's hard case (issue 33, gen.Coupled): 16,384 assignments of 14 groups that
// activate backwards, in a plan of 606 and one of 186 lines. Node runs the same JS on the
// same texts: node testdata/bench/node-bench.js on werkbaum-gen -shape coupled [-width 5] 14.
func BenchmarkInspectCoupledChain14(b *testing.B)   { benchInspect(b, gen.Coupled(14, 20, 1)) }
func BenchmarkInspectCoupledChain14w5(b *testing.B) { benchInspect(b, gen.Coupled(14, 5, 1)) }

// BenchmarkCallOverhead is the host's share of a call: borrow a runtime, encode the
// arguments, cross into goja, JSON-parse and -stringify a tiny object, release.
func BenchmarkCallOverhead(b *testing.B) {
	e, err := newEngine(Options{}, `Werkbaum.methods.echo = function (a) { return a; };`)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	for i := 0; i < b.N; i++ {
		if _, err := e.call(ctx, "echo", map[string]string{"text": smallPlan}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAnalyzeWerkbaum(b *testing.B) {
	text := readExample(b, "werkbaum.werkbaum")
	e := benchEngine(b)
	ctx := context.Background()
	for i := 0; i < b.N; i++ {
		if _, err := e.Analyze(ctx, text, AnalyzeOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkInspectCacheHit(b *testing.B) {
	text := readExample(b, "werkbaum.werkbaum")
	e, err := NewEngine(Options{})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	if _, err := e.Inspect(ctx, text, InspectOptions{}); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := e.InspectJSON(ctx, text, InspectOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkInspectCacheHitTyped(b *testing.B) {
	text := readExample(b, "werkbaum.werkbaum")
	e, err := NewEngine(Options{})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	for i := 0; i < b.N; i++ {
		if _, err := e.Inspect(ctx, text, InspectOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSetStatusWerkbaum(b *testing.B) {
	text := readExample(b, "werkbaum.werkbaum")
	e := benchEngine(b)
	ctx := context.Background()
	for i := 0; i < b.N; i++ {
		if _, err := e.Apply(ctx, text, SetStatus{ID: "wb", Status: "done"}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkGuardWerkbaum(b *testing.B) {
	text := readExample(b, "werkbaum.werkbaum")
	e := benchEngine(b)
	ctx := context.Background()
	next, err := e.Apply(ctx, text, SetStatus{ID: "wb", Status: "done"})
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := e.Guard(ctx, text, next, GuardOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

// benchWriteFlow is what the plan store does for one agent write on a plan the agent has
// read: inspect the old text, apply a verb, guard old → new, inspect the new text. Every
// iteration uses a text of its own (a trailing comment with the iteration number), so no
// result carries over between iterations.
func benchWriteFlow(b *testing.B, opts Options) {
	base := readExample(b, "werkbaum.werkbaum")
	e, err := NewEngine(opts)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		old := base + "%% write " + strconv.Itoa(i) + "\n"
		if _, err := e.InspectJSON(ctx, old, InspectOptions{}); err != nil {
			b.Fatal(err)
		}
		next, err := e.Apply(ctx, old, SetStatus{ID: "wb", Status: "done"})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := e.Guard(ctx, old, next, GuardOptions{}); err != nil {
			b.Fatal(err)
		}
		if _, err := e.InspectJSON(ctx, next, InspectOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkWriteFlowWerkbaum runs the write flow with the default options (caches on).
func BenchmarkWriteFlowWerkbaum(b *testing.B) { benchWriteFlow(b, Options{}) }

// BenchmarkWriteFlowWerkbaumNoMemo runs it with every cache off (each call does all work).
func BenchmarkWriteFlowWerkbaumNoMemo(b *testing.B) { benchWriteFlow(b, Options{CacheEntries: -1}) }

func BenchmarkNewEngine(b *testing.B) {
	for i := 0; i < b.N; i++ {
		if _, err := NewEngine(Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEngineRSS reports the resident memory of this process after it built an Engine
// and warmed two runtimes (run it alone: -bench EngineRSS -benchtime 1x). "base-MB" is the
// RSS before the engine, "busy-MB" right after the warming calls (the runtimes still hold
// their memo of the last texts), "rss-MB" once the pool has been idle for memoIdle (each
// memo trimmed to the plan's current text: the daemon during an agent's pause) and
// "dropped-MB" after DropMemos (the daemon idle for longer, cmd/talkd modelKeep).
func BenchmarkEngineRSS(b *testing.B) {
	text := readExample(b, "werkbaum.werkbaum")
	base := rssMB(b)
	var engines []*Engine
	for i := 0; i < b.N; i++ {
		e, err := NewEngine(Options{Runtimes: 2})
		if err != nil {
			b.Fatal(err)
		}
		// Two concurrent calls make the pool build and warm both runtimes.
		var wg sync.WaitGroup
		for k := 0; k < 2; k++ {
			wg.Add(1)
			go func(k int) {
				defer wg.Done()
				if _, err := e.Inspect(context.Background(), text+strings.Repeat("\n", k), InspectOptions{}); err != nil {
					b.Error(err)
				}
			}(k)
		}
		wg.Wait()
		engines = append(engines[:0], e)
	}
	busy := rssMB(b)
	time.Sleep(memoIdle + 500*time.Millisecond)
	b.ReportMetric(base, "base-MB")
	b.ReportMetric(busy, "busy-MB")
	b.ReportMetric(rssMB(b), "rss-MB")
	engines[0].DropMemos()
	b.ReportMetric(rssMB(b), "dropped-MB")
	b.ReportMetric(float64(engines[0].created.Load()), "runtimes")
	runtime.KeepAlive(engines)
}

func rssMB(b testing.TB) float64 {
	runtime.GC()
	debug.FreeOSMemory()
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		b.Skipf("no /proc: %v", err)
	}
	for _, line := range strings.Split(string(status), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, _ := strconv.ParseFloat(f[1], 64)
			return kb / 1024
		}
	}
	b.Skip("VmRSS not found")
	return 0
}

// BenchmarkKeptAnalysisHeap is what the idle daemon keeps for an agent's pause (the memo
// trimmed to the plan's current text, cmd/talkd modelKeep): the live heap after ten status
// writes and the trim, minus the live heap after DropMemos, per plan size (kept-MB).
//
//	go test -run '^$' -bench KeptAnalysisHeap -benchtime 1x ./internal/werkbaum
func BenchmarkKeptAnalysisHeap(b *testing.B) {
	live := func() float64 {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return float64(ms.HeapAlloc) / 1e6
	}
	for _, n := range []int{2000, 10000} {
		b.Run(fmt.Sprintf("nodes=%d", n), func(b *testing.B) {
			var kept float64
			for range b.N {
				e, err := NewEngine(Options{Runtimes: 1})
				if err != nil {
					b.Fatal(err)
				}
				ctx := context.Background()
				text := gen.Plan(n, 1)
				for i := range 10 {
					ed, err := e.Edit(ctx, text, SetStatus{ID: "t" + strconv.Itoa(1+i%4), Status: []string{"done", "progress"}[i%2]}, GuardOptions{})
					if err != nil {
						b.Fatal(err)
					}
					text = ed.Text
				}
				e.mu.Lock()
				idle := append([]*jsRuntime(nil), e.idle...)
				e.mu.Unlock()
				for _, rt := range idle {
					e.trimMemo(rt)
				}
				trimmed := live()
				e.DropMemos()
				kept += trimmed - live()
				runtime.KeepAlive(e)
			}
			b.ReportMetric(kept/float64(b.N), "kept-MB")
		})
	}
}
