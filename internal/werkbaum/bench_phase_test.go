package werkbaum

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/dop251/goja"

	"talkd/internal/werkbaum/gen"
)

// phaseScript adds a test-only method that runs one phase of an inspect n times in the
// runtime, so a benchmark can tell where a call's time goes (parse, the model passes, the
// view, serialising) without the host around it. The memo is off in these engines, so every
// round does the full work.
const phaseScript = `
(function (W) {
  var prep = null;
  // _benchPrepare(text) computes what the phases after the first one start from, so the
  // timed calls of _benchPhase do only their phase.
  W._benchPrepare = function (text) {
    var d = W.parse(text), m = W._model(d, {}), p = W._cheapPath(m);
    prep = { text: text, d: d, m: m, p: p, records: W.inspect(text, {}) };
  };
  W._benchPhase = function (phase, n) {
    var r, i, text = prep.text, d = prep.d, m = prep.m, p = prep.p, records = prep.records;
    for (i = 0; i < n; i++) {
      switch (phase) {
      case 'parse': r = W.parse(text); break;
      case 'model': r = W._model(d, {}); break;
      case 'path': r = W._cheapPath(m); break;
      case 'loads': r = W._loads(m, p); break;
      case 'mixedGate': r = W._mixedGate(m); break;
      case 'compute': r = W._compute(text, {}); break;
      case 'view': r = W.inspectParts(text, {}); break;
      case 'records': r = W.inspect(text, {}); break;
      case 'stringify': r = JSON.stringify(records); break;
      default: throw new Error('unknown phase ' + phase);
      }
    }
    return n;
  };
})(Werkbaum);`

// BenchmarkPhase measures each phase of an inspect in one warm runtime, each from the
// prepared results of the phases before it:
//
//	go test -run '^$' -bench 'Phase/' -benchtime 1s ./internal/werkbaum
//
// cpu-ms/op is the process's CPU time per round (the collector's included): steadier than
// the wall time on a machine shared with other work. With WERKBAUM_JS_PROFILE=FILE set, the timed rounds run under goja's own profiler (the
// time per JavaScript function, `go tool pprof -top FILE`); pick one phase with -bench, since
// the profile covers every timed round of the run.
//
// compute = parse + model + path + loads + mixedGate + warning texts; view = compute + the
// view without node records (inspectParts), to which the host adds the records it writes
// (BenchmarkInspectJSON*); records = compute + the script's own records (inspect), and
// stringify is what serialising those would cost.
func BenchmarkPhase(b *testing.B) {
	plans := []struct{ name, text string }{
		{"small", smallPlan},
		{"werkbaum", readExample(b, "werkbaum.werkbaum")},
		{"big2000", bigPlan(2000, 7)},
		{"gen10000", gen.Plan(10000, 1)},
		// The exact search's hard case (issue 33): 16,384 assignments of one component
		// that activates backwards, at about 600 and 180 lines.
		{"coupled14w20", gen.Coupled(14, 20, 1)},
		{"coupled14w5", gen.Coupled(14, 5, 1)},
		// The same plan with every non-ASCII letter replaced by `a`: what the non-ASCII
		// half of its lines costs (goja keeps such strings in UTF-16 and runs regexps on
		// them through Go's NFA on a rune reader).
		{"gen10000ascii", strings.Map(func(r rune) rune {
			if r >= 128 {
				return 'a'
			}
			return r
		}, gen.Plan(10000, 1))},
	}
	fns, rt := scriptFuncs(b, phaseScript, "_benchPrepare", "_benchPhase")
	prepare, fn := fns[0], fns[1]
	for _, plan := range plans {
		if _, err := prepare(goja.Undefined(), rt.vm.ToValue(plan.text)); err != nil {
			b.Fatal(err)
		}
		for _, phase := range []string{"parse", "model", "path", "loads", "mixedGate", "compute", "view", "records", "stringify"} {
			b.Run(plan.name+"/"+phase, func(b *testing.B) {
				if _, err := fn(goja.Undefined(), rt.vm.ToValue(phase), rt.vm.ToValue(1)); err != nil {
					b.Fatal(err)
				}
				stop := startJSProfile(b)
				b.ResetTimer()
				cpu0 := cpuNow()
				if _, err := fn(goja.Undefined(), rt.vm.ToValue(phase), rt.vm.ToValue(b.N)); err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(float64(cpuNow()-cpu0)/float64(b.N)/1e6, "cpu-ms/op")
				b.StopTimer()
				stop()
			})
		}
	}
}

// startJSProfile starts goja's profiler into the file WERKBAUM_JS_PROFILE names (nothing
// when it is unset) and returns what stops it.
func startJSProfile(tb testing.TB) (stop func()) {
	name := os.Getenv("WERKBAUM_JS_PROFILE")
	if name == "" {
		return func() {}
	}
	f, err := os.Create(name)
	if err != nil {
		tb.Fatal(err)
	}
	if err := goja.StartProfile(f); err != nil {
		tb.Fatal(err)
	}
	return func() {
		goja.StopProfile()
		if err := f.Close(); err != nil {
			tb.Fatal(err)
		}
	}
}

// scriptFuncs builds an engine (memo off) with a test-only script loaded after the embedded
// ones, borrows its runtime for the rest of the test, and returns the named functions of
// the Werkbaum namespace.
func scriptFuncs(tb testing.TB, script string, names ...string) ([]goja.Callable, *jsRuntime) {
	tb.Helper()
	e, err := newEngine(Options{CacheEntries: -1}, script)
	if err != nil {
		tb.Fatal(err)
	}
	rt, err := e.borrow(context.Background())
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { e.release(rt) })
	ns := rt.vm.Get("Werkbaum").ToObject(rt.vm)
	fns := make([]goja.Callable, len(names))
	for i, name := range names {
		fn, ok := goja.AssertFunction(ns.Get(name))
		if !ok {
			tb.Fatalf("the test script defines no Werkbaum.%s", name)
		}
		fns[i] = fn
	}
	return fns, rt
}
