package werkbaum

import (
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/dop251/goja"
)

// modelScript adds a test-only method that runs the model passes of an inspect (everything
// after the parse) n times on one parsed document, so the cost of the passes can be read
// without the parser: "passes" is what _compute does after parsing (model, cheapest path,
// loads, mixedGate, the warning list and its texts); "model", "path", "loads" and "warnings"
// are its parts (mixedGate is part of the model).
// n = 0 parses and prepares (outside the timed call; the parse would otherwise be charged
// to the phase, as in BenchmarkPhase at -benchtime 20x).
const modelScript = `
Werkbaum._benchModel = function (phase, text, n) {
  var W = Werkbaum, i, s = W._benchModelState;
  function passes(d) {
    var m = W._model(d, {});
    var path = W._cheapPath(m);
    var loads = W._loads(m, path);
    return W._warningsOf(d, path, loads, W._mixedGate(m));
  }
  if (n === 0) {
    // Setup, outside the timed call: parse once and keep the inputs of the phases.
    var d = W.parse(text);
    var m0 = W._model(d, {});
    var p0 = W._cheapPath(m0);
    W._benchModelState = { d: d, m0: m0, p0: p0, l0: W._loads(m0, p0), x0: W._mixedGate(m0) };
    passes(d);
    return 0;
  }
  for (i = 0; i < n; i++) {
    switch (phase) {
    case 'passes': passes(s.d); break;
    case 'model': W._model(s.d, {}); break;
    case 'path': W._cheapPath(s.m0); break;
    case 'loads': W._loads(s.m0, s.p0); break;
    case 'warnings': W._warningsOf(s.d, s.p0, s.l0, s.x0); break;
    default: throw new Error('unknown phase ' + phase);
    }
  }
  return n;
};`

// BenchmarkModelPasses measures all model passes of an inspect together (no parse), and each
// part, in one warm runtime with the memo off:
//
//	go test -run '^$' -bench 'ModelPasses/' -benchtime 2s ./internal/werkbaum
//
// cpu-ms/op is the process CPU time (user+system, the GC's included) per call: on a shared
// machine it varies far less than the wall time. Run long enough (-benchtime 2s, not 20x)
// that garbage collection is part of the measurement. Targets of brief S1: big2000 ≤ 12 ms, werkbaum ≤ 1.5 ms, small ≤ 0.04 ms.
func BenchmarkModelPasses(b *testing.B) {
	plans := []struct{ name, text string }{
		{"small", smallPlan},
		{"werkbaum", readExample(b, "werkbaum.werkbaum")},
		{"big2000", bigPlan(2000, 7)},
		{"coupled14", coupledPlan(14)},
	}
	fns, rt := scriptFuncs(b, modelScript, "_benchModel")
	fn := fns[0]
	for _, plan := range plans {
		for _, phase := range []string{"passes", "model", "path", "loads", "warnings"} {
			b.Run(plan.name+"/"+phase, func(b *testing.B) {
				text := rt.vm.ToValue(plan.text)
				if _, err := fn(goja.Undefined(), rt.vm.ToValue(phase), text, rt.vm.ToValue(0)); err != nil {
					b.Fatal(err)
				}
				runtime.GC()
				b.ResetTimer()
				cpu0 := cpuTime(b)
				if _, err := fn(goja.Undefined(), rt.vm.ToValue(phase), text, rt.vm.ToValue(b.N)); err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(float64(cpuTime(b)-cpu0)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
			})
		}
	}
}

// cpuTime returns the CPU time (user + system) the process has used so far.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// equivScript loads the previous implementation of the model passes (js/test/ref/*.js.ref,
// the straightforward rule-by-rule code the fused passes replaced) as Werkbaum._ref, a
// namespace that inherits the parser and texts, and adds _equiv(text, show), which returns
// the JSON of js/test/equiv_view.js (everything the other scripts read from the model, the
// path and the loads; the Node test uses the same file), once from the current passes and
// once from the reference.
func equivScript(t *testing.T) string {
	src := "Werkbaum._ref = (function (Werkbaum) {\n"
	for _, f := range []string{"20_model.js", "30_path.js", "35_loads.js", "40_warnings.js"} {
		b, err := os.ReadFile(filepath.Join("js", "test", "ref", f+".ref"))
		if err != nil {
			t.Fatal(err)
		}
		src += string(b) + "\n"
	}
	shared, err := os.ReadFile(filepath.Join("js", "test", "equiv_view.js"))
	if err != nil {
		t.Fatal(err)
	}
	return src + "return Werkbaum;\n})(Object.create(Werkbaum));\n" + string(shared) + `
Werkbaum._equiv = function (text, show) {
  return [JSON.stringify(equivView(Werkbaum, text, show)), JSON.stringify(equivView(Werkbaum._ref, text, show))];
};`
}

// TestModelPassesEqualTheReferenceInGoja runs the current and the previous model passes in
// goja (typed arrays, fill, slice and the rest of what the fused passes use) on the shared
// examples and the generated benchmark plans, with and without showDiscarded, and requires
// identical results. js/test/model_equiv.test.js does the same under Node on thousands of
// generated plans.
func TestModelPassesEqualTheReferenceInGoja(t *testing.T) {
	fns, rt := scriptFuncs(t, equivScript(t), "_equiv")
	fn := fns[0]
	plans := map[string]string{
		"small":     smallPlan,
		"big2000":   bigPlan(2000, 7),
		"coupled14": coupledPlan(14),
		"coupled15": coupledPlan(15),
		"dropped":   "[-] Old #old\n  - A #a\nNew (L) @ann\n  - [~] B :#a,#b @bo\n  | > C #b (S)\n  = D\n  + [/] E !!!\n",
	}
	dir := filepath.Join(sharedDir(t), "werkbaum", "examples")
	names, _ := filepath.Glob(filepath.Join(dir, "*.werkbaum"))
	for _, n := range names {
		src, err := os.ReadFile(n)
		if err != nil {
			t.Fatal(err)
		}
		plans[filepath.Base(n)] = string(src)
	}
	if len(names) == 0 {
		t.Log("shared examples not available; generated plans only")
	}
	for name, text := range plans {
		for _, show := range []bool{false, true} {
			v, err := fn(goja.Undefined(), rt.vm.ToValue(text), rt.vm.ToValue(show))
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			pair := v.Export().([]any)
			if pair[0] != pair[1] {
				t.Errorf("%s (showDiscarded %v): current and reference passes differ\ncurrent:   %.600s\nreference: %.600s", name, show, pair[0], pair[1])
			}
		}
	}
}
