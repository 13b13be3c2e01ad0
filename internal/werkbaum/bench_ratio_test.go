package werkbaum

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"testing"
	"time"

	"github.com/dop251/goja"

	"talkd/internal/werkbaum/gctune"
	"talkd/internal/werkbaum/gen"
	"talkd/internal/werkbaum/nodebench"
)

// BenchmarkNodeRatio is goja ÷ Node on the same JavaScript, both sides measured interleaved
// in one run (issue 33), so that a machine shared with other work slows both alike:
//
//	go test -run '^$' -bench 'NodeRatio/' -benchtime 10x ./internal/werkbaum
//
// Each side first runs the op on the plan (Node twenty times: its JIT compiles the hot
// functions then; goja at least three times and until the collector has run twice, so that
// its heap's memory is in use, not fresh from the system). Each iteration runs the op on a
// new text (variant: nothing carries over) in goja and then in one Node process
// (testdata/bench/node-bench.js --serve), the order swapped every other iteration. Every
// side times only the call itself: wall clock and the process's CPU time.
// The ops:
//   - inspect: the engine's inspect as the daemon calls it (InspectJSON, the node records
//     written by Go) against the script's inspect under Node (W.call: records and JSON written
//     by the script); warm on both sides, cache and memo off.
//   - records: the whole analysis with the script's own records (W.inspect), the same call on
//     both sides (BenchmarkPhase's "records").
//   - path: the cheapest path alone (W._cheapPath, NOTATION §20, the exact search of the
//     coupled plans) on the model of the text, made untimed first on both sides
//     (BenchmarkPhase's "path").
//   - compute, parse, model: the phases inside records, so that goja ÷ Node can be read
//     per phase in one interleaved run: compute is the analysis without the node records
//     (W._compute: parse, model, path, loads, warnings; records − compute is what the
//     script's node records cost), parse the parse alone (W.parse), model the model alone
//     (W._model) on the text's document, parsed untimed first (BenchmarkPhase's phases of
//     those names).
//   - first: the first inspect of a fresh engine (its runtime made, nothing parsed yet)
//     against the first inspect of a fresh Node process (node-bench.js --first, the JIT cold).
//
// goja runs under talkd's collector settings (gctune.Apply, as the daemon starts; GOGC and
// GOMEMLIMIT in the environment override them there and here alike): the engine allocates
// several times a plan's size per call, and under `go test`'s default GOGC=100 the collector
// takes a fifth to a quarter of goja's CPU at 10,000 nodes, which the daemon does not pay.
//
// ratio is goja's wall time ÷ Node's, cpu-ratio the same for CPU time; goja-ms and node-ms
// are the mean wall times. Skipped when node is not installed.
func BenchmarkNodeRatio(b *testing.B) {
	percent, limit := debug.SetGCPercent(-1), debug.SetMemoryLimit(-1)
	debug.SetGCPercent(percent)
	stopTuning := gctune.Apply(os.Getenv)
	b.Cleanup(func() {
		stopTuning()
		debug.SetGCPercent(percent)
		debug.SetMemoryLimit(limit)
	})
	nodeBin, err := exec.LookPath("node")
	if err != nil {
		b.Skip("node is not installed")
	}
	benchJS, err := filepath.Abs(filepath.Join("testdata", "bench", "node-bench.js"))
	if err != nil {
		b.Fatal(err)
	}
	plans := []struct{ name, text string }{
		{"nodes=1000", gen.Plan(1000, 1)},
		{"nodes=2000", gen.Plan(2000, 1)},
		{"nodes=5000", gen.Plan(5000, 1)},
		{"nodes=10000", gen.Plan(10000, 1)},
		{"coupled14w20", gen.Coupled(14, 20, 1)},
		{"coupled14w5", gen.Coupled(14, 5, 1)},
	}
	fixedWarm := -1 // goja's warm-up calls when WERKBAUM_GOJA_WARM sets them
	if v := os.Getenv("WERKBAUM_GOJA_WARM"); v != "" {
		if fixedWarm, err = strconv.Atoi(v); err != nil || fixedWarm < 0 {
			b.Fatalf("WERKBAUM_GOJA_WARM=%q: want a number of calls", v)
		}
	}
	// warmMore says whether goja's warm-up goes on to call w: at least three calls, then
	// until gojaWarmCollections collections have run since it began (gcs collections at
	// warmStart).
	warmMore := func(w int, gcs uint64, warmStart time.Time) bool {
		if fixedWarm >= 0 {
			return w <= fixedWarm
		}
		return w <= 3 || (gcCount() < gcs+gojaWarmCollections && time.Since(warmStart) < gojaWarmMax)
	}
	node := nodebench.Start(b, nodeBin, benchJS)
	records, recordsRT := scriptFuncs(b, `Werkbaum._benchRecords = function (text) { Werkbaum.inspect(text, {}); };
(function (W) {
  var model = null;
  var doc = null;
  W._benchPathModel = function (text) { model = W._model(W.parse(text), {}); };
  W._benchPath = function () { W._cheapPath(model); };
  W._benchCompute = function (text) { W._compute(text, {}); };
  W._benchParse = function (text) { W.parse(text); };
  W._benchModelDoc = function (text) { doc = W.parse(text); };
  W._benchModel = function () { W._model(doc, {}); };
})(Werkbaum);`, "_benchRecords", "_benchPathModel", "_benchPath", "_benchCompute", "_benchParse", "_benchModelDoc", "_benchModel")
	// script calls the script function fn, with the text as its argument unless it is "".
	script := func(fn goja.Callable, text string) {
		args := []goja.Value{}
		if text != "" {
			args = append(args, recordsRT.vm.ToValue(text))
		}
		if _, err := fn(goja.Undefined(), args...); err != nil {
			b.Fatal(err)
		}
	}
	warm := sizeEngine(b, false)
	gojaOps := map[string]func(text string){
		"inspect": func(text string) {
			if _, err := warm.InspectJSON(context.Background(), text, InspectOptions{}); err != nil {
				b.Fatal(err)
			}
		},
		"records": func(text string) { script(records[0], text) },
		"compute": func(text string) { script(records[3], text) },
		"parse":   func(text string) { script(records[4], text) },
		"model":   func(string) { script(records[6], "") },
		"path":    func(string) { script(records[2], "") },
	}
	// gojaPrep runs before the timed call of an op on a text: what the op starts from.
	gojaPrep := map[string]func(text string){
		"model": func(text string) { script(records[5], text) },
		"path":  func(text string) { script(records[1], text) },
	}
	for _, op := range []string{"inspect", "records", "compute", "parse", "model", "path", "first"} {
		for _, p := range plans {
			b.Run(op+"/"+p.name, func(b *testing.B) {
				var gojaOp func(string)
				var nodeOp func(string) (wall, cpu time.Duration)
				if op == "first" {
					nodeOp = func(text string) (time.Duration, time.Duration) { return nodebench.First(b, nodeBin, benchJS, text) }
				} else {
					if prep := gojaPrep[op]; prep != nil {
						gojaOp = func(text string) { prep(text); gojaOps[op](text) }
					} else {
						gojaOp = gojaOps[op]
					}
					nodeOp = func(text string) (time.Duration, time.Duration) { return node.Call(b, op, text) }
					// Warm both sides on this plan. Node's JIT optimises a function only after
					// many calls. goja has nothing to warm but its shapes and its heap, and the
					// heap is warm only once the collector has run: under talkd's settings the
					// heap grows to a minimum goal of 96 MiB (gctune) before the first
					// collection, and until then every call takes its memory as fresh pages
					// from the system. Records on coupled14w20 (4 MB a call, a collection every
					// 20–25 calls): about 1,050 page faults a call and 10.3 ms before the first
					// collection, 50–106 and 8.8–9.3 ms until the third, then 0–12 and 8.3–8.8
					// ms. With three warm-up calls every timed call of a small plan ran before
					// the first one (docs/bench-werkbaum.md, issue 33 seventh round), so goja
					// is warmed until two collections have run; WERKBAUM_GOJA_WARM=N warms it
					// with exactly N calls instead.
					// Node runs beside goja's warm-up, at least twenty calls: left idle for the
					// half second goja's warm-up can take, its next calls were slower.
					gcs, warmStart := gcCount(), time.Now()
					gojaWarming := true
					for w := 1; w <= 20 || gojaWarming; w++ {
						if gojaWarming = gojaWarming && warmMore(w, gcs, warmStart); gojaWarming {
							gojaOp(variant(p.text, -w))
						}
						nodeOp(variant(p.text, -w))
					}
					if fixedWarm < 0 && gcCount() < gcs+gojaWarmCollections {
						b.Logf("goja's heap is not warm: fewer than %d collections in %v of warm-up calls", gojaWarmCollections, gojaWarmMax)
					}
				}
				var gWall, gCPU, nWall, nCPU time.Duration
				runGoja := func(text string) {
					var e *Engine
					if op == "first" {
						e = sizeEngine(b, false) // a fresh runtime: made here, untimed
					} else if prep := gojaPrep[op]; prep != nil {
						prep(text) // untimed
					}
					start, startCPU := time.Now(), cpuNow()
					if e != nil {
						if _, err := e.InspectJSON(context.Background(), text, InspectOptions{}); err != nil {
							b.Fatal(err)
						}
					} else {
						gojaOps[op](text)
					}
					gWall, gCPU = gWall+time.Since(start), gCPU+cpuNow()-startCPU
				}
				runNode := func(text string) {
					w, c := nodeOp(text)
					nWall, nCPU = nWall+w, nCPU+c
				}
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					text := variant(p.text, i)
					if i%2 == 0 {
						runGoja(text)
						runNode(text)
					} else {
						runNode(text)
						runGoja(text)
					}
				}
				b.ReportMetric(float64(gWall)/float64(nWall), "ratio")
				b.ReportMetric(float64(gCPU)/float64(nCPU), "cpu-ratio")
				b.ReportMetric(float64(gWall)/float64(b.N)/1e6, "goja-ms")
				b.ReportMetric(float64(nWall)/float64(b.N)/1e6, "node-ms")
			})
		}
	}
}

// BenchmarkNodeRatio warms goja until gojaWarmCollections collections have run, for at most
// gojaWarmMax: the cheapest op there (the parse of coupled14w5, 0.4 MB a call) reaches a
// collection in about 0.3 s.
const (
	gojaWarmCollections = 2
	gojaWarmMax         = 3 * time.Second
)

// gcCount is the number of collections the process has completed.
func gcCount() uint64 {
	sample := []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}}
	metrics.Read(sample)
	return sample[0].Value.Uint64()
}

// BenchmarkKernelRatio is goja ÷ Node on small kernels of the kinds of work the engine does
// (testdata/bench/kernels.js: an integer loop, marking through a typed array, reading a typed
// array of small or large values or with its length in the loop's condition, objects with
// a few fields, a regexp split of a node line, the same line read by a charCodeAt scanner),
// each side warm, interleaved per iteration:
//
//	go test -run '^$' -bench 'KernelRatio/' -benchtime 5x ./internal/werkbaum
//
// It shows what bounds the ratio of a whole analysis: goja is tens of times slower than
// V8 on interpreted loops and a few times on work done by built-ins (regexps, allocation),
// so a plan whose analysis is mostly tight integer loops (the exact search) has a larger
// ratio than one that is mostly parsing. Skipped when node is not installed.
func BenchmarkKernelRatio(b *testing.B) {
	nodeBin, err := exec.LookPath("node")
	if err != nil {
		b.Skip("node is not installed")
	}
	file, err := filepath.Abs(filepath.Join("testdata", "bench", "kernels.js"))
	if err != nil {
		b.Fatal(err)
	}
	src, err := os.ReadFile(file)
	if err != nil {
		b.Fatal(err)
	}
	vm := goja.New()
	if _, err := vm.RunScript("kernels.js", string(src)); err != nil {
		b.Fatal(err)
	}
	kernels := vm.Get("KERNELS").ToObject(vm)
	const rounds = 1000
	for _, name := range []string{"sum", "mark", "readSmall", "readLarge", "lengthInLoop", "objects", "split", "scan"} {
		b.Run(name, func(b *testing.B) {
			fn, ok := goja.AssertFunction(kernels.Get(name))
			if !ok {
				b.Fatalf("kernels.js has no kernel %s", name)
			}
			var gWall, gCPU, nWall, nCPU time.Duration
			if _, err := fn(goja.Undefined(), vm.ToValue(rounds)); err != nil { // warm
				b.Fatal(err)
			}
			for i := 0; i < b.N; i++ {
				start, startCPU := time.Now(), cpuNow()
				if _, err := fn(goja.Undefined(), vm.ToValue(rounds)); err != nil {
					b.Fatal(err)
				}
				gWall, gCPU = gWall+time.Since(start), gCPU+cpuNow()-startCPU
				out, err := exec.Command(nodeBin, file, name, strconv.Itoa(rounds)).Output()
				if err != nil {
					b.Fatalf("kernels.js %s: %v", name, err)
				}
				var a nodebench.Answer
				if err := json.Unmarshal(out, &a); err != nil {
					b.Fatalf("kernels.js answered %q: %v", out, err)
				}
				w, c := a.Durations()
				nWall, nCPU = nWall+w, nCPU+c
			}
			b.ReportMetric(float64(gWall)/float64(nWall), "ratio")
			b.ReportMetric(float64(gCPU)/float64(nCPU), "cpu-ratio")
			b.ReportMetric(float64(gWall)/float64(b.N)/1e6, "goja-ms")
			b.ReportMetric(float64(nWall)/float64(b.N)/1e6, "node-ms")
		})
	}
}
