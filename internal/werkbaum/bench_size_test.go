package werkbaum

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"

	"talkd/internal/werkbaum/gen"
)

// Benchmarks at the size of real plans (issue 16; figures in docs/bench-werkbaum.md, "Fourth
// round"). The plans come from package gen (seed 1): gen.Sizes nodes of realistic shape, a
// flat one and a deep one.
//
//	go test -run '^$' -bench 'Size' -benchtime 3x ./internal/werkbaum
//
// Every engine here has a deadline far beyond the daemon's, so that a slow call is measured
// rather than cut off.

const benchTimeout = 5 * time.Minute

type sizedPlan struct {
	name  string
	text  string
	nodes int
}

func sizedPlans() []sizedPlan {
	var ps []sizedPlan
	for _, n := range gen.Sizes {
		ps = append(ps, sizedPlan{"nodes=" + strconv.Itoa(n), gen.Plan(n, 1), n})
	}
	return append(ps,
		sizedPlan{"flat=10000", gen.Flat(10000, 1), 10000},
		sizedPlan{"deep=3000", gen.Deep(3000, 300, 1), 3000})
}

// sizeOps are the three things a plan of any size must do within the deadline: a first
// inspect (nothing remembered), the full analysis, and an agent's write (set_status with
// its guards, the plan store's Apply + Guard) on a text the agent has just read.
type sizeOp struct {
	name string
	// memo: the op runs in an engine with the default caches (the write relies on what the
	// agent's read left in the runtime); otherwise every cache is off.
	memo bool
	// prepare runs untimed before each op (the agent's read of the plan).
	prepare func(e *Engine, text string) error
	run     func(e *Engine, text string) error
}

var sizeOps = []sizeOp{
	{name: "inspect", run: func(e *Engine, text string) error {
		_, err := e.InspectJSON(context.Background(), text, InspectOptions{})
		return err
	}},
	{name: "analyze", run: func(e *Engine, text string) error {
		_, err := e.Analyze(context.Background(), text, AnalyzeOptions{})
		return err
	}},
	{name: "write", memo: true, prepare: func(e *Engine, text string) error {
		_, err := e.InspectJSON(context.Background(), text, InspectOptions{})
		return err
	}, run: func(e *Engine, text string) error {
		ctx := context.Background()
		// Line 1 of every generated plan is a root (gen.Plan's is #area0), and roots of
		// generated plans never carry [!], so the write always changes the text.
		next, err := e.Apply(ctx, text, SetStatus{ID: "line:1", Status: "highrisk"})
		if err != nil {
			return err
		}
		if next == text {
			return fmt.Errorf("set_status changed nothing")
		}
		g, err := e.Guard(ctx, text, next, GuardOptions{})
		if err == nil && !g.OK {
			err = fmt.Errorf("guard refused: %+v", g.Refused)
		}
		return err
	}},
}

func sizeEngine(b *testing.B, memo bool) *Engine {
	opts := Options{Runtimes: 1, Timeout: benchTimeout, CacheEntries: -1}
	if memo {
		opts.CacheEntries = 0 // the default
	}
	e, err := NewEngine(opts)
	if err != nil {
		b.Fatal(err)
	}
	return e
}

// variant makes each iteration's text new (a trailing comment), so nothing carries over.
func variant(text string, i int) string { return text + "%% round " + strconv.Itoa(i) + "\n" }

// cpuNow is the CPU time this process has used (all threads: the call and the collector).
// On a machine shared with other busy processes it is a steadier measure than the wall
// clock, which also counts the time the call waited for a core.
func cpuNow() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// timeOp runs op once on a fresh variant of text and returns how long it took (wall clock)
// and the CPU time it used.
func timeOp(b *testing.B, e *Engine, op int, text string, i int) (wall, cpu time.Duration) {
	o := sizeOps[op]
	t := variant(text, i)
	if o.prepare != nil {
		if err := o.prepare(e, t); err != nil {
			b.Fatal(err)
		}
	}
	start, startCPU := time.Now(), cpuNow()
	if err := o.run(e, t); err != nil {
		b.Fatal(err)
	}
	return time.Since(start), cpuNow() - startCPU
}

// BenchmarkSize times each op by plan size; "ns/node" is the cost per node.
func BenchmarkSize(b *testing.B) {
	for op := range sizeOps {
		for _, p := range sizedPlans() {
			b.Run(sizeOps[op].name+"/"+p.name, func(b *testing.B) {
				e := sizeEngine(b, sizeOps[op].memo)
				timeOp(b, e, op, p.text, -1) // warm the runtime
				b.ResetTimer()
				var total, cpu time.Duration
				for i := 0; i < b.N; i++ {
					w, c := timeOp(b, e, op, p.text, i)
					total, cpu = total+w, cpu+c
				}
				per := float64(b.N)
				b.ReportMetric(float64(total)/per, "ns/op")
				b.ReportMetric(float64(total)/per/float64(p.nodes), "ns/node")
				b.ReportMetric(float64(cpu)/per/1e6, "cpu-ms/op")
			})
		}
	}
}

// BenchmarkSizeRatio is the cost per node of a plan ÷ the cost per node of the 1,000-node
// plan, measured interleaved in one engine (each iteration runs both), so that a busy
// machine slows both sides alike. Target ≤ 1.5 at every size.
func BenchmarkSizeRatio(b *testing.B) {
	base := gen.Plan(1000, 1)
	for op := range sizeOps {
		for _, p := range sizedPlans() {
			if p.nodes == 1000 {
				continue
			}
			b.Run(sizeOps[op].name+"/"+p.name, func(b *testing.B) {
				e := sizeEngine(b, sizeOps[op].memo)
				timeOp(b, e, op, base, -1)
				timeOp(b, e, op, p.text, -1)
				b.ResetTimer()
				var small, big, smallCPU, bigCPU time.Duration
				for i := 0; i < b.N; i++ {
					w, c := timeOp(b, e, op, base, i)
					small, smallCPU = small+w, smallCPU+c
					w, c = timeOp(b, e, op, p.text, i)
					big, bigCPU = big+w, bigCPU+c
				}
				perNode := func(d time.Duration, nodes int) float64 { return float64(d) / float64(nodes) }
				b.ReportMetric(perNode(big, p.nodes)/perNode(small, 1000), "ratio")
				b.ReportMetric(perNode(bigCPU, p.nodes)/perNode(smallCPU, 1000), "cpu-ratio")
				b.ReportMetric(perNode(big, p.nodes)/float64(b.N), "ns/node")
				b.ReportMetric(perNode(small, 1000)/float64(b.N), "ns/node@1000")
			})
		}
	}
}

// BenchmarkSizeLiveHeap is the live heap (after a collection) of an engine with the
// default caches that has served six agent writes (read, set_status, guard) on variants of
// a plan: what the memo and the result cache keep of large plans. Figures in
// docs/bench-werkbaum.md, seventh round.
//
//	go test -run '^$' -bench 'SizeLiveHeap' -benchtime 1x ./internal/werkbaum
func BenchmarkSizeLiveHeap(b *testing.B) {
	for _, n := range []int{10000, 40000} {
		b.Run("nodes="+strconv.Itoa(n), func(b *testing.B) {
			text := gen.Plan(n, 1)
			i := slices.IndexFunc(sizeOps, func(o sizeOp) bool { return o.name == "write" })
			if i < 0 {
				b.Fatal("sizeOps has no write")
			}
			write := sizeOps[i]
			var first, last uint64
			for i := 0; i < b.N; i++ {
				e := sizeEngine(b, true)
				for w := 0; w < 6; w++ {
					t := variant(text, w)
					if err := write.prepare(e, t); err != nil {
						b.Fatal(err)
					}
					if err := write.run(e, t); err != nil {
						b.Fatal(err)
					}
					if w == 0 {
						first = liveHeap()
					}
				}
				last = liveHeap()
				runtime.KeepAlive(e)
			}
			b.ReportMetric(float64(first)/(1<<20), "MiB-after-1")
			b.ReportMetric(float64(last)/(1<<20), "MiB-after-6")
		})
	}
}

func liveHeap() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}
