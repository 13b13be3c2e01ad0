package werkbaum

import (
	"context"
	"testing"

	"github.com/dop251/goja"
)

// phaseScript adds a test-only method that runs one phase of an inspect n times in the
// runtime, so a benchmark can tell where a call's time goes (parse, the model passes, the
// view, serialising) without the host around it. The memo is off in these engines, so every
// round does the full work.
const phaseScript = `
Werkbaum._benchPhase = function (phase, text, n) {
  var W = Werkbaum, r, i, d, m, p;
  if (phase !== 'parse' && phase !== 'stringify') { d = W.parse(text); m = W._model(d, {}); p = W._cheapPath(m); }
  var records = phase === 'stringify' ? W.inspect(text, {}) : null;
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
};`

// BenchmarkPhase measures each phase of an inspect in one warm runtime:
//
//	go test -run '^$' -bench 'Phase/' -benchtime 20x ./internal/werkbaum
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
	}
	e, err := newEngine(Options{CacheEntries: -1}, phaseScript)
	if err != nil {
		b.Fatal(err)
	}
	rt, err := e.borrow(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	defer e.release(rt)
	fn, ok := goja.AssertFunction(rt.vm.Get("Werkbaum").ToObject(rt.vm).Get("_benchPhase"))
	if !ok {
		b.Fatal("no _benchPhase")
	}
	for _, plan := range plans {
		for _, phase := range []string{"parse", "model", "path", "loads", "mixedGate", "compute", "view", "records", "stringify"} {
			b.Run(plan.name+"/"+phase, func(b *testing.B) {
				text := rt.vm.ToValue(plan.text)
				if _, err := fn(goja.Undefined(), rt.vm.ToValue(phase), text, rt.vm.ToValue(1)); err != nil {
					b.Fatal(err)
				}
				b.ResetTimer()
				if _, err := fn(goja.Undefined(), rt.vm.ToValue(phase), text, rt.vm.ToValue(b.N)); err != nil {
					b.Fatal(err)
				}
			})
		}
	}
}
