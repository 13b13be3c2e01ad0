package api

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"talkd/internal/werkbaum"
	"talkd/internal/werkbaum/plans"
)

// compactView builds a full inspect view of roots × children nodes (document order, one
// line each) with long non-ASCII labels, and one warning per root.
func compactView(t *testing.T, roots, children int) json.RawMessage {
	t.Helper()
	var v werkbaum.Inspection
	line := 1
	for r := range roots {
		rootLine := line
		v.Nodes = append(v.Nodes, werkbaum.Node{Line: line, ID: fmt.Sprintf("r%d", r), Label: "Wurzel für @jörg und @Müller, ziemlich lang", Status: "progress", People: []string{"jörg"}})
		v.Warnings = append(v.Warnings, werkbaum.Warning{Type: "needsBreakdown", Line: line, Text: "too big"})
		line++
		for c := range children {
			v.Nodes = append(v.Nodes, werkbaum.Node{Line: line, ParentLine: rootLine, Depth: 1, ID: fmt.Sprintf("r%d.c%d", r, c), Label: "Kind", Size: "S",
				Status: "done", EffectiveStatus: "planned", Deps: []string{"r0"}})
			line++
		}
	}
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// TestCompactReadingFitsAndSaysHow: a view that fits is shown whole; one that does not
// shows the deepest level that fits, marks hidden children with their count and says how
// to get them (id, depth); a level that alone does not fit is cut at a line and names it
// (from); every answer stays within the budget; labels are cut by characters, not bytes.
func TestCompactReadingFitsAndSaysHow(t *testing.T) {
	base := plans.Base{Revision: 3, Checksum: strings.Repeat("a", 64)}
	all := compactArgs{plan: "p", tree: true, warnings: true, path: true}

	m, err := compactModelOfView(compactView(t, 3, 4))
	if err != nil {
		t.Fatal(err)
	}
	r, text, err := m.render(base, all)
	if err != nil || len(r.Tree) != 15 || r.Depth != nil || len(r.More) != 0 || len(r.WarningLines) != 3 {
		t.Fatalf("a small view: %v %+v\n%s", err, r, text)
	}
	if !strings.HasPrefix(text, `plan p, base {"revision":3,"checksum":"`+base.Checksum+`"}`) ||
		!strings.Contains(text, "\n1 #r0 Wurzel für @jörg und @Müller,… [progress] @jörg\n") ||
		!strings.Contains(text, "\n 2 #r0.c0 Kind [done] S eff=planned deps=r0\n") {
		t.Errorf("a small view reads:\n%s", text)
	}

	m, _ = compactModelOfView(compactView(t, 20, 200)) // 4,020 nodes: the roots fit, not their children
	r, text, _ = m.render(base, all)
	if len(r.Tree) != 20 || r.Depth == nil || *r.Depth != 0 || !strings.Contains(r.Tree[0], "(+200 below)") ||
		!strings.Contains(text, "4000 nodes deeper than depth 0 are hidden") || len(text) > compactBudget+2000 {
		t.Errorf("a deep view: %d lines, depth %v, more %q, %d bytes", len(r.Tree), r.Depth, r.More, len(text))
	}
	r, _, _ = m.render(base, compactArgs{plan: "p", id: "r5", tree: true})
	if r.Nodes != 201 || len(r.Tree) != 201 || !strings.HasPrefix(r.Tree[0], fmt.Sprint(m.nodes[m.index["r5"]].Line)+" #r5 ") {
		t.Errorf("the subtree of r5: %d nodes, %d lines, %q", r.Nodes, len(r.Tree), r.Tree[:1])
	}

	m, _ = compactModelOfView(compactView(t, 2000, 0)) // 2,000 roots: even depth 0 is cut
	r, text, _ = m.render(base, all)
	if len(r.More) == 0 || !strings.Contains(text, "call with from ") || len(text) > compactBudget+2000 {
		t.Fatalf("a wide view: %d lines, more %q, %d bytes", len(r.Tree), r.More, len(text))
	}
	next := m.nodes[len(r.Tree)].Line
	r2, _, _ := m.render(base, compactArgs{plan: "p", tree: true, from: next})
	if !strings.HasPrefix(r2.Tree[0], fmt.Sprintf("%d #", next)) {
		t.Errorf("from %d starts at %q", next, r2.Tree[0])
	}
	if _, _, err := m.render(base, compactArgs{plan: "p", id: "nope", tree: true}); err == nil {
		t.Error("an unknown id was rendered")
	}
}

// TestSubtreeLines: a node's subtree reaches to the line before the next node outside it;
// the tree's last subtree stops before the separator, blank lines left out.
func TestSubtreeLines(t *testing.T) {
	text := "- [ ] #a: A\n  - [ ] #b: B\n    \" short\n- [ ] #c: C\n  - [ ] #d: D\n\n---\n#a\n  text\n"
	view := werkbaum.Inspection{Nodes: []werkbaum.Node{
		{Line: 1, ID: "a"}, {Line: 2, ParentLine: 1, Depth: 1, ID: "b"}, {Line: 4, ID: "c"}, {Line: 5, ParentLine: 4, Depth: 1, ID: "d"},
	}}
	raw, _ := json.Marshal(view)
	m, err := compactModelOfView(raw)
	if err != nil {
		t.Fatal(err)
	}
	starts := lineStarts(text)
	for id, want := range map[string][2]int{"a": {1, 3}, "b": {2, 3}, "c": {4, 5}, "d": {5, 5}} {
		from, to, ok := m.subtreeLines(id, text, starts)
		if !ok || from != want[0] || to != want[1] {
			t.Errorf("#%s: lines %d-%d (%v), want %d-%d", id, from, to, ok, want[0], want[1])
		}
	}
}

// compactModelOf is the compact model of a whole plan's view, as the store's outline
// and the compact cache make it.
func compactModelOfView(view json.RawMessage) (*compactModel, error) {
	o, err := werkbaum.DecodeOutline(view)
	if err != nil {
		return nil, err
	}
	return compactModelOf(o), nil
}
