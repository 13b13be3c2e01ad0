package werkbaum

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"talkd/internal/werkbaum/gen"
)

// boxEditScript compares, inside goja, the parse of status edits (parseBoxEdit, the write
// path's fast path) with the full parse of the edited text: random nodes, random statuses,
// every field of every node (children as indices, so a deep tree is not written out once
// per ancestor), the internal fields the model reads, the warnings, ids and roots. It also
// compares the model made from the old model (modelBoxEdit) with the full model of the
// edited text in everything js/test/equiv_view.js reads (the Node test uses that file too).
func boxEditScript(t *testing.T) string {
	view, err := os.ReadFile(filepath.Join("js", "test", "equiv_view.js"))
	if err != nil {
		t.Fatal(err)
	}
	return string(view) + boxEditSame
}

const boxEditSame = `
Werkbaum.methods.boxEditSame = function (a) {
  var W = Werkbaum, text = a.text, doc = W._parseFresh(text), seed = a.seed >>> 0;
  var statuses = ['done', 'progress', 'planned', 'idea', 'highrisk', 'blocked', 'discarded', 'review', null];
  function next() { seed = (seed * 1103515245 + 12345) >>> 0; return seed / 4294967296; }
  function canon(d) {
    function rep(k, v) { return k === 'children' ? Array.prototype.map.call(v, function (c) { return c.index; }) : v; }
    var parts = [JSON.stringify(d.lines), JSON.stringify(d.warnings), JSON.stringify(d.descBlocks), String(d.separatorLine),
      JSON.stringify(Array.prototype.map.call(d.roots, function (r) { return r.index; }))];
    var ids = [];
    for (var id in d.byId) ids.push(id); // for-in: a status edit's map is layered (byIdWith)
    ids.sort();
    for (var j = 0; j < ids.length; j++) parts.push(ids[j] + '=' + d.byId[ids[j]].index);
    for (var i = 0; i < d.all.length; i++) {
      var n = d.all[i];
      parts.push(JSON.stringify(n, rep) + ' ' + n._sizeMin + ' ' + n._plainLabel + ' ' + n._box);
    }
    return parts.join('\n');
  }
  var out = { patched: 0, full: 0, differ: [], incModel: 0, modelDiffer: [] };
  for (var k = 0; k < a.edits && doc.all.length; k++) {
    var n = doc.all[Math.floor(next() * doc.all.length)];
    var edited;
    try { edited = W.edit.setStatus(text, 'line:' + n.line, statuses[Math.floor(next() * statuses.length)]); } catch (e) { continue; }
    if (edited === text) continue;
    var patched = W._parseBoxEditFresh(text, edited, n.index);
    if (patched === null) { out.full++; continue; }
    out.patched++;
    var full = W._parseFresh(edited);
    if (canon(patched) !== canon(full)) out.differ.push(n.line);
    var inc = W._modelBoxEdit(W._model(doc, {}), patched, n.index);
    if (inc === null) continue;
    out.incModel++;
    if (JSON.stringify(equivView(W, edited, false, inc)) !== JSON.stringify(equivView(W, edited, false, W._model(full, {})))) {
      out.modelDiffer.push(n.line);
    }
  }
  return out;
};`

// TestBoxEditParseEqualsFullParse: the same proof as js/test/fastpath.test.js, in goja.
func TestBoxEditParseEqualsFullParse(t *testing.T) {
	e := newTestEngine(t, Options{Runtimes: 1, Timeout: 2 * time.Minute}, boxEditScript(t))
	plans := []struct {
		name, text string
		edits      int
	}{
		{"gen 1000", gen.Plan(1000, 3), 20}, {"deep", gen.Deep(300, 40, 2), 20}, {"flat", gen.Flat(400, 4), 20}, {"small", smallPlan, 20},
		// Status changes that flip a size conflict (b discarded or not), xor conflicts, and
		// drop an unknown box's warning.
		{"sizes", "[ ] Root (M)\n  - [ ] a (M)\n  - [-] b (L)\n  - [q] e (XS)\n", 60},
		{"xor", "= [x] A #a (S)\n  - [ ] A1 (M)\n  - [q] A2 (L)\n= [/] B #b\n= [X] C\n  = [ ] C1\n  = [x] C2\n", 60},
		// Several xor groups and sized parents: the conflicts of one group and one parent
		// change among the others'.
		{"groups", "= [x] A (S)\n  = [x] A1 (M)\n  = [/] A2\n  = [ ] A3\n= [/] B (S)\n  - [ ] B1 (M)\n  - [ ] B2 (M)\n" +
			"= [ ] C (S)\n  = [x] C1 (L)\n  = [ ] C2 (L)\n  = [~] C3\n= [ ] D (XS)\n  - [ ] D1 (S)\n  - [-] D2 (S)\n", 80},
		// Dependencies, coupled choice groups and a dropped discarded root: what the model
		// of an edit takes from the old model.
		{"coupled", coupledPlan(6), 60},
		// One coupled group of two open options: starting either leaves a pool of one,
		// which is no longer coupled.
		{"uncoupled", "- [ ] Root\n  | [ ] Opt1 #o1 :#t\n  | [ ] Opt2 #o2\n- [ ] Target #t\n", 60},
		{"dropped", "[-] Old #old\n  - A #a\nNew (L) @ann\n  - [~] B :#a,#b @bo\n  | > C #b (S)\n  = D\n  + [/] E !!!\n", 60},
	}
	patched, incModel := 0, 0
	for _, p := range plans {
		name := p.name
		raw, err := e.call(context.Background(), "boxEditSame", map[string]any{"text": p.text, "seed": len(name), "edits": p.edits})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var r struct {
			Patched     int   `json:"patched"`
			Full        int   `json:"full"`
			Differ      []int `json:"differ"`
			IncModel    int   `json:"incModel"`
			ModelDiffer []int `json:"modelDiffer"`
		}
		if err := json.Unmarshal(raw, &r); err != nil {
			t.Fatal(err)
		}
		if len(r.Differ) > 0 {
			t.Errorf("%s: the status edit's parse differs from the full parse at lines %v", name, r.Differ)
		}
		if len(r.ModelDiffer) > 0 {
			t.Errorf("%s: the status edit's model differs from the full model at lines %v", name, r.ModelDiffer)
		}
		patched += r.Patched
		incModel += r.IncModel
	}
	if patched < 50 {
		t.Fatalf("only %d edits took the box-edit parse: the test does not test it", patched)
	}
	if incModel < 40 {
		t.Fatalf("only %d edits took the model from the old one: the test does not test it", incModel)
	}
}

// TestBoxEditPathEqualsFullPath: the same proof as js/test/write_path.test.js, in goja, with
// that very file (js/test/edit_chain.js): chains of random status edits of generated plans
// (package gen's, whose assignees include @jörg and @Müller, with coupled choice groups),
// each edit's path taken from the old analysis where it can and
// held to the full search and finish, its loads to the loads of that path, and every third
// analysis to the plain one.
func TestBoxEditPathEqualsFullPath(t *testing.T) {
	chain, err := os.ReadFile(filepath.Join("js", "test", "edit_chain.js"))
	if err != nil {
		t.Fatal(err)
	}
	script := string(chain) + `
Werkbaum.methods.editChainSame = function (a) { return editChainSame(Werkbaum, a.text, a.seed, a.edits); };`
	e := newTestEngine(t, Options{Runtimes: 1, Timeout: 5 * time.Minute}, script)
	plans := []struct {
		name, text string
		edits      int
	}{
		{"gen 2000", gen.Plan(2000, 1), 100},
		{"gen 1000 seed 3", gen.Plan(1000, 3), 60},
		{"deep", gen.Deep(300, 40, 2), 30},
		{"flat", gen.Flat(400, 4), 60},
		{"coupled", coupledPlan(6), 60},
		// 2^15 assignments, too many for the exact search until an edit takes an option
		// out of a pool.
		{"coupled 15", gen.Coupled(15, 1, 1), 80},
		{"small", smallPlan, 40},
		{"dropped", "[-] Old #old\n  - A #a\nNew (L) @ann\n  - [~] B :#a,#b @bo\n  | > C #b (S)\n  = D\n  + [/] E !!!\n", 40},
		// Mixed gates under nodes that are discarded and no longer are.
		{"mixed", "- [ ] Top #top\n  - A\n  | [-] B\n    - B1\n    = B2\n  - C\n    | C1 @jörg\n    = [x] C2\n    - [-] C3\n      = C31\n      | C32\n  + [~] D @Müller\n", 80},
	}
	fast, full, relinked, hidden := 0, 0, 0, 0
	for _, p := range plans {
		raw, err := e.call(context.Background(), "editChainSame", map[string]any{"text": p.text, "seed": len(p.name), "edits": p.edits})
		if err != nil {
			t.Fatalf("%s: %v", p.name, err)
		}
		var r struct {
			Fast, Full, Analyses, Models, Relinked, Hidden int
			Differ                                         []string
		}
		if err := json.Unmarshal(raw, &r); err != nil {
			t.Fatal(err)
		}
		if len(r.Differ) > 0 {
			t.Errorf("%s: the status edits' analyses differ from the plain ones: %v", p.name, r.Differ)
		}
		fast += r.Fast
		full += r.Full
		relinked += r.Relinked
		hidden += r.Hidden
	}
	t.Logf("paths taken from the old one: %d, searched in full: %d; models relinked: %d, hiding: %d", fast, full, relinked, hidden)
	if fast < 100 || full < 20 || relinked < 10 || hidden < 5 {
		t.Fatalf("%d paths taken from the old one, %d searched in full, %d models relinked, %d hiding: the test does not test each", fast, full, relinked, hidden)
	}
}
