package test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"talkd/internal/werkbaum/gen"
)

// Benchmarks of the plan tools against a live talkd over loopback HTTP (see
// docs/bench-plans.md for the commands and recorded numbers). Each benchmark starts its
// own daemon once (b.Loop runs the setup a single time) and measures whole round trips:
// HTTP, JSON-RPC, the store (file read, SHA-256, journal in bbolt with fsync, atomic
// rename) and the notation engine.

// generatedPlan builds a plan of 1 + epics×(1+tasks) nodes without structural warnings:
// a root, epics of size XXL, tasks with sizes, people, statuses and a few dependencies.
func generatedPlan(epics, tasks int) string {
	rng := rand.New(rand.NewPCG(1, 2))
	sizes := []string{"XS", "S", "S", "M"}
	boxes := []string{" ", " ", " ", "x", "~", "?", "!"}
	people := []string{"anna", "ben", "cleo", "dev", "eli"}
	var b strings.Builder
	b.WriteString("%% generated benchmark plan\n- [~] #r: Generated root (XXL)\n")
	for e := range epics {
		fmt.Fprintf(&b, "  - [ ] #e%d: Epic %d (XXL) @%s\n", e, e, people[e%len(people)])
		for k := range tasks {
			fmt.Fprintf(&b, "    - [%s] #e%d.t%d: Task %d of epic %d (%s) @%s", boxes[rng.IntN(len(boxes))], e, k, k, e,
				sizes[rng.IntN(len(sizes))], people[rng.IntN(len(people))])
			if e > 0 && k%10 == 3 {
				fmt.Fprintf(&b, " :#e%d.t%d", e-1, k)
			}
			b.WriteString("\n")
		}
	}
	return b.String()
}

// plan2000 has 2,001 nodes (1 root, 40 epics, 40×49 tasks).
var plan2000 = generatedPlan(40, 49)

// engineTimeouts counts answers "the notation engine ran out of time" (per benchmark run).
var engineTimeouts atomic.Int64

// benchCall calls a tool that must succeed. On a loaded machine a large plan can run past
// the engine's deadline (2 s per call): nothing was done (a write's request id stays
// unknown), so the same request is sent again, and the count is reported as timeouts/op.
func benchCall(b *testing.B, c *mcpClient, name string, args map[string]any, v any) *toolAnswer {
	for try := 0; ; try++ {
		a, err := c.call(context.Background(), name, args)
		if err != nil {
			b.Fatal(err)
		}
		if a.IsError && strings.Contains(a.Text, "ran out of time") && try < 5 {
			engineTimeouts.Add(1)
			continue
		}
		if a.IsError {
			b.Fatalf("%s failed: %s", name, a.Text)
		}
		if v != nil {
			if err := a.decode(v); err != nil {
				b.Fatal(err)
			}
		}
		return a
	}
}

// reportTimeouts reports the engine timeouts since the last call as timeouts/op.
func reportTimeouts(b *testing.B) {
	b.ReportMetric(float64(engineTimeouts.Swap(0))/float64(b.N), "timeouts/op")
}

// toggler flips one node between skeleton ([/], a box the generated plans never start
// with) and progress ([~]), each write on the base the last one answered.
type toggler struct {
	c    *mcpClient
	plan string
	node string
	base planBase
	n    int
	// perLap: writes before the status changes (the nodes a rotating benchmark goes round);
	// 0 or 1 toggles on every write.
	perLap int
	// statuses are set in turn, one per lap (default skeleton, progress).
	statuses [2]string
	// nonce keeps request ids unique across runs of a benchmark on one daemon.
	nonce int64
}

func (tg *toggler) lap() int { return tg.n / max(tg.perLap, 1) }

func (tg *toggler) write(b *testing.B) {
	statuses := tg.statuses
	if statuses[0] == "" {
		statuses = [2]string{"skeleton", "progress"}
	}
	status := statuses[tg.lap()%2]
	tg.n++
	var w writeAnswer
	benchCall(b, tg.c, "werkbaum_set_status", writeArgs(tg.plan, tg.base, fmt.Sprintf("bench-%d-%s-%d", tg.nonce, tg.node, tg.n),
		map[string]any{"id": tg.node, "status": status}), &w)
	if !w.Changed {
		b.Fatalf("set_status did not change the plan: %+v", w.Base)
	}
	tg.base = w.Base
}

func newToggler(b *testing.B, c *mcpClient, plan, node string) *toggler {
	var r readAnswer
	benchCall(b, c, "werkbaum_read", map[string]any{"plan": plan}, &r)
	return &toggler{c: c, plan: plan, node: node, base: r.Base, nonce: time.Now().UnixNano()}
}

// BenchmarkPlanInspect2000: werkbaum_inspect of the whole 2,001-node plan. "cached" asks
// again about an unchanged plan (the engine answers from its cache by checksum: the cost
// is the file read, the hash and ~1 MB of JSON); "afterWrite" inspects right after a
// set_status (untimed), so the engine parses and analyses the plan anew; "subtree" limits
// the answer to one epic (49 tasks) on an unchanged plan.
func BenchmarkPlanInspect2000(b *testing.B) {
	d, _ := startPlanDaemon(b, planFile{Key: "big", Text: plan2000})
	c := newMCPClient(d)
	args := map[string]any{"plan": "big", "detail": "full"}
	var first struct {
		Nodes []map[string]any `json:"nodes"`
	}
	benchCall(b, c, "werkbaum_inspect", args, &first)
	if len(first.Nodes) != 2001 {
		b.Fatalf("the generated plan has %d nodes", len(first.Nodes))
	}
	engineTimeouts.Store(0)
	b.Run("cached", func(b *testing.B) {
		var size int
		for b.Loop() {
			size = len(benchCall(b, c, "werkbaum_inspect", args, nil).Structured)
		}
		b.ReportMetric(float64(size), "structuredB")
		reportTimeouts(b)
	})
	b.Run("subtree", func(b *testing.B) {
		sub := map[string]any{"plan": "big", "id": "e7", "detail": "full"}
		for b.Loop() {
			benchCall(b, c, "werkbaum_inspect", sub, nil)
		}
		reportTimeouts(b)
	})
	b.Run("afterWrite", func(b *testing.B) {
		tg := newToggler(b, c, "big", "e3.t5")
		for b.Loop() {
			b.StopTimer()
			tg.write(b)
			b.StartTimer()
			benchCall(b, c, "werkbaum_inspect", args, nil)
		}
		reportTimeouts(b)
	})
}

// BenchmarkPlanSetStatus2000: one werkbaum_set_status round trip on the 2,001-node plan:
// read the file and hash it, run the verb and the guards in the engine (both texts are
// parsed and analysed), journal the request as pending, write the temp file, fsync,
// rename, fsync the folder, settle the journal.
func BenchmarkPlanSetStatus2000(b *testing.B) {
	d, _ := startPlanDaemon(b, planFile{Key: "big", Text: plan2000})
	tg := newToggler(b, newMCPClient(d), "big", "e20.t20")
	for b.Loop() {
		tg.write(b)
	}
	reportTimeouts(b)
}

// BenchmarkPlanSetStatus10k: the same round trip on a generated plan of realistic shape
// with 10,000 nodes (package gen, seed 1: 470 KB, half its lines non-ASCII): issue 16's
// write target (≤ 100 ms) as an agent meets it, with the plan store, the journal and the
// fsyncs around the engine. The writes go round 20 top-level nodes, each lap setting
// the other status of highrisk and progress, so no text comes back within 40 writes: each write analyses a text the
// engine has not seen (a toggle of one node would be answered from its memo of 12 texts).
func BenchmarkPlanSetStatus10k(b *testing.B) {
	text := gen.Plan(10000, 1)
	var nodes []string
	for _, m := range regexp.MustCompile(`(?m)^\S[^\n]*#(area\d+)\b`).FindAllStringSubmatch(text, -1) {
		if len(nodes) < 20 {
			nodes = append(nodes, m[1])
		}
	}
	if len(nodes) < 20 {
		b.Fatalf("the generated plan has %d top-level nodes with an id, want 20", len(nodes))
	}
	d, _ := startPlanDaemon(b, planFile{Key: "big", Text: text})
	tg := newToggler(b, newMCPClient(d), "big", "")
	tg.perLap = len(nodes)
	tg.statuses = [2]string{"highrisk", "progress"} // the generator's roots never carry [!]
	for b.Loop() {
		tg.node = nodes[tg.n%len(nodes)]
		tg.write(b)
	}
	reportTimeouts(b)
}

// BenchmarkPlanWriteThroughput: writes per second on ONE small plan (41 nodes), so the
// store's serialised write path (journal and file fsyncs) dominates rather than the
// engine. "sequential" is one client writing back to back; "8clients" are eight clients
// writing at once, each retrying a conflict with a fresh read and a new request id (the
// reported writes/s count applied writes only; conflicts/write is the retry rate).
func BenchmarkPlanWriteThroughput(b *testing.B) {
	d, _ := startPlanDaemon(b, planFile{Key: "small", Text: crashPlan("%% throughput plan")})
	b.Run("sequential", func(b *testing.B) {
		tg := newToggler(b, newMCPClient(d), "small", "n1")
		start := time.Now()
		for b.Loop() {
			tg.write(b)
		}
		b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "writes/s")
		reportTimeouts(b)
	})
	b.Run("8clients", func(b *testing.B) {
		nonce := time.Now().UnixNano()
		var next, conflicts atomic.Int64
		var wg sync.WaitGroup
		errs := make(chan error, 8)
		b.ResetTimer()
		start := time.Now()
		for i := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				c := newMCPClient(d)
				rng := rand.New(rand.NewPCG(uint64(i), 3))
				node := fmt.Sprintf("n%d", 10+i)
				mine := 0
				for k := next.Add(1); k <= int64(b.N); k = next.Add(1) {
					mine++ // each logical write flips the client's own node
					for try := 0; ; try++ {
						ra, err := c.call(context.Background(), "werkbaum_read", map[string]any{"plan": "small"})
						var r readAnswer
						if err == nil {
							err = ra.decode(&r)
						}
						if err != nil {
							errs <- err
							return
						}
						status := []string{"progress", "skeleton"}[mine%2]
						a, err := c.call(context.Background(), "werkbaum_set_status", writeArgs("small", r.Base,
							fmt.Sprintf("tp-%d-%d-%d", nonce, k, try), map[string]any{"id": node, "status": status}))
						if err != nil {
							errs <- err
							return
						}
						if !a.IsError {
							break
						}
						if a.Map["conflict"] != true {
							errs <- fmt.Errorf("not a conflict: %s", a.Text)
							return
						}
						conflicts.Add(1)
						time.Sleep(time.Duration(rng.IntN(5<<min(try, 5))) * time.Millisecond)
					}
				}
			}()
		}
		wg.Wait()
		elapsed := time.Since(start)
		close(errs)
		for err := range errs {
			b.Fatal(err)
		}
		b.ReportMetric(float64(b.N)/elapsed.Seconds(), "writes/s")
		b.ReportMetric(float64(conflicts.Load())/float64(b.N), "conflicts/write")
	})
}
