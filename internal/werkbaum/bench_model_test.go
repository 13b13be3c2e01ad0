package werkbaum

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/dop251/goja"
)

// modelScript adds a test-only method that runs the model passes of an inspect (everything
// after the parse) n times on one parsed document, so the cost of the passes can be read
// without the parser: "passes" is what _compute does after parsing (model, cheapest path,
// loads, mixedGate, the warning list and its texts); "warnings" is only the list and texts.
const modelScript = `
Werkbaum._benchModel = function (phase, text, n) {
  var W = Werkbaum, i, d = W.parse(text);
  function passes() {
    var m = W._model(d, {});
    var path = W._cheapPath(m);
    var loads = W._loads(m, path);
    var mixed = W._mixedGate(m);
    return warn(d, path, loads, mixed);
  }
  function warn(d, path, loads, mixed) {
    var approx = path.exact ? [] : [{ type: 'cheapApprox' }];
    var over = [];
    if (loads.overloadedAssignee) {
      var o = loads.overloadedAssignee;
      over.push({ type: 'assigneeOverload', tag: o.tag, share: o.share, stations: o.stations, totalStations: o.totalStations });
    }
    var ws = W._finalWarnings(d.warnings, approx, over, mixed);
    for (var k = 0; k < ws.length; k++) ws[k].text = W._warningText(ws[k]);
    for (k = 0; k < mixed.length; k++) mixed[k].text = W._warningText(mixed[k]);
    return ws;
  }
  var m0 = W._model(d, {}), p0 = W._cheapPath(m0), l0 = W._loads(m0, p0), x0 = W._mixedGate(m0);
  for (i = 0; i < n; i++) {
    switch (phase) {
    case 'passes': passes(); break;
    case 'warnings': warn(d, p0, l0, x0); break;
    default: throw new Error('unknown phase ' + phase);
    }
  }
  return n;
};`

// BenchmarkModelPasses measures all model passes of an inspect together (no parse), and the
// warning list alone, in one warm runtime with the memo off:
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
	e, err := newEngine(Options{CacheEntries: -1}, modelScript)
	if err != nil {
		b.Fatal(err)
	}
	rt, err := e.borrow(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	defer e.release(rt)
	fn, ok := goja.AssertFunction(rt.vm.Get("Werkbaum").ToObject(rt.vm).Get("_benchModel"))
	if !ok {
		b.Fatal("no _benchModel")
	}
	for _, plan := range plans {
		for _, phase := range []string{"passes", "warnings"} {
			b.Run(plan.name+"/"+phase, func(b *testing.B) {
				text := rt.vm.ToValue(plan.text)
				if _, err := fn(goja.Undefined(), rt.vm.ToValue(phase), text, rt.vm.ToValue(1)); err != nil {
					b.Fatal(err)
				}
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
