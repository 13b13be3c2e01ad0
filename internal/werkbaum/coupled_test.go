package werkbaum

import (
	"testing"

	"github.com/dop251/goja"

	"talkd/internal/werkbaum/gen"
)

// pathEqualScript compares the exact search with the literal reference enumeration in the
// runtime and returns what differs ("" when nothing does) and the number of coupled groups.
const pathEqualScript = `
(function (W) {
  W._pathEqual = function (text) {
    var m = W._model(W.parse(text), {});
    var fast = W._cheapPath(m), ref = W._naivePath(m);
    var diff = [];
    if (fast.exact !== ref.exact) diff.push('exact ' + fast.exact + ' ' + ref.exact);
    if (JSON.stringify(fast.choice) !== JSON.stringify(ref.choice)) diff.push('choice ' + JSON.stringify(fast.choice) + ' ' + JSON.stringify(ref.choice));
    if (fast.cost !== ref.cost) diff.push('cost ' + fast.cost + ' ' + ref.cost);
    if (Array.prototype.join.call(fast.inSet) !== Array.prototype.join.call(ref.inSet)) diff.push('needed set');
    if (Array.prototype.join.call(fast.station) !== Array.prototype.join.call(ref.station)) diff.push('stations');
    return [diff.join('; '), m.coupled.length, fast.exact];
  };
})(Werkbaum);`

// TestCoupledSearchEqualsReferenceInGoja runs package gen's hard case of the exact search
// (issue 33: groups that activate backwards) in goja and holds the search to the literal
// enumeration of NOTATION §20 steps 6–7: the same choice, cost, needed set and stations.
func TestCoupledSearchEqualsReferenceInGoja(t *testing.T) {
	fns, rt := scriptFuncs(t, pathEqualScript, "_pathEqual")
	for _, c := range []struct{ k, width int }{{1, 0}, {2, 1}, {3, 2}, {5, 0}, {6, 3}, {8, 2}, {9, 1}} {
		for seed := uint32(1); seed <= 3; seed++ {
			text := gen.Coupled(c.k, c.width, seed)
			v, err := fns[0](goja.Undefined(), rt.vm.ToValue(text))
			if err != nil {
				t.Fatal(err)
			}
			got := v.Export().([]any)
			if diff := got[0].(string); diff != "" {
				t.Errorf("k=%d width=%d seed=%d: the search differs from the reference: %s\n%s", c.k, c.width, seed, diff, text)
			}
			if groups := got[1].(int64); groups != int64(c.k) {
				t.Errorf("k=%d width=%d: %d coupled groups, want %d", c.k, c.width, groups, c.k)
			}
		}
	}
}
