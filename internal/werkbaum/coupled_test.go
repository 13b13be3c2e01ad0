package werkbaum

import (
	"os"
	"path/filepath"
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
    // The components' costs and the base cost add up to the cost of the chosen needed set.
    if (fast.decomposedCost !== undefined && fast.decomposedCost !== fast.cost) diff.push('component sum ' + fast.decomposedCost + ' ' + fast.cost);
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

// TestSearchEqualsReferenceOnScriptPlansInGoja holds the exact search to the literal
// enumeration in goja on the Node tests' own generators (js/test/gen.js, loaded unchanged):
// random plans full of choice groups, plans whose options share pool nodes and path children
// of several groups (a node in the R sets of several groups, a term that depends on groups
// whose R sets share nothing), and chains that activate backwards with few sizes, where the
// tie-break in the reference order decides. gen.Coupled above has none of the shared nodes.
func TestSearchEqualsReferenceOnScriptPlansInGoja(t *testing.T) {
	genJS, err := os.ReadFile(filepath.Join("js", "test", "gen.js"))
	if err != nil {
		t.Fatal(err)
	}
	script := `(function () {
  var module = { exports: {} };
` + string(genJS) + `
  var G = module.exports;
  var W = Werkbaum;
  var same = W._pathEqual;
  W._scriptPlansSame = function (from, to) {
    var narrow = [['S'], ['S', 'M'], ['XS', 'S'], ['S', 'M', 'L']];
    var diffs = [], plans = 0, coupled = 0, groups = 0;
    function check(name, text) {
      var r = same(text);
      plans++;
      if (r[1] > 0) coupled++;
      groups += r[1];
      if (r[0] !== '') diffs.push(name + ': ' + r[0] + '\n' + text);
    }
    for (var seed = from; seed <= to; seed++) {
      check('randomPlan ' + seed, G.randomPlan(seed, 8 + (seed % 40)));
      check('coupledRandomPlan ' + seed, G.coupledRandomPlan(seed));
      check('chainPlan ' + seed, G.chainPlan(seed, 2 + (seed % 7), seed % 4));
      check('chainPlan ties ' + seed, G.chainPlan(seed, 2 + (seed % 4), seed % 2, narrow[seed % 4]));
    }
    return [diffs.join('\n\n'), plans, coupled, groups];
  };
})();`
	fns, rt := scriptFuncs(t, pathEqualScript+script, "_scriptPlansSame")
	v, err := fns[0](goja.Undefined(), rt.vm.ToValue(1), rt.vm.ToValue(150))
	if err != nil {
		t.Fatal(err)
	}
	got := v.Export().([]any)
	if diff := got[0].(string); diff != "" {
		t.Errorf("the search differs from the reference:\n%s", diff)
	}
	plans, coupled, groups := got[1].(int64), got[2].(int64), got[3].(int64)
	// The generators must exercise coupled groups, or the test proves nothing.
	if plans != 600 || coupled < 450 || groups < 1500 {
		t.Errorf("%d plans, %d with coupled groups, %d groups in all: too few to test the search", plans, coupled, groups)
	}
	t.Logf("%d plans, %d with coupled groups, %d coupled groups", plans, coupled, groups)
}
