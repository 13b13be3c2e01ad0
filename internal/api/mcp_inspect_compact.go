package api

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"talkd/internal/werkbaum/plans"
)

// The compact reading of werkbaum_inspect is what a model gets by default. The full view
// (detail "full") is 125,861 characters for the 231-node example plan and 10 MB for a plan
// at the 2 MiB input limit, while Claude Code caps one tool answer at 25,000 tokens and
// the content-only hosts hand their model the text copy, escaped JSON and all
// (../shared/mcp/HOSTS.md). The compact reading is one line per node (line, id, label,
// status, size, effective status where it differs, people, deps), the warnings with their
// lines and the cheapest path's stations, within a fixed character budget, and says in
// the answer how to get what did not fit (a subtree id, a depth, a from line, or the full
// detail). Every plan size takes the same path: when the whole tree does not fit, the
// deepest levels that do are shown (nodes with hidden children say how many), and when
// even that does not fit, the answer is cut at a line and names the line to go on from.

const (
	// compactBudget bounds the characters of the listed entries (tree lines, warnings,
	// stations) of one compact answer; with the header and the hints the answer stays
	// under 16,000 characters (about 4,000 tokens) for the example plan as text and as structured content.
	compactBudget = 14500
	// compactWarningShare is the part of the budget the warnings may take when the tree
	// is shown too: a plan with thousands of warnings still shows its tree.
	compactWarningShare = compactBudget / 4
	// compactStationBudget bounds the list of the cheapest path's stations.
	compactStationBudget = 1200
	// compactLabelMax cuts long labels (the full label is in detail "full" and the text).
	compactLabelMax = 30
)

// compactReading is the structured half of a compact answer: the same lines the text
// copy shows, as lists, plus the counts and the hints. A program that needs the records
// asks for detail "full".
type compactReading struct {
	Nodes        int      `json:"nodes" desc:"nodes in view (the plan, or the subtree of id)"`
	Warnings     int      `json:"warnings" desc:"warnings in view"`
	Depth        *int     `json:"depth,omitempty" desc:"the deepest level shown below the top, when deeper ones are hidden"`
	Tree         []string `json:"tree,omitempty" desc:"one line per node: line #id label [status] size eff=effective @people deps=… (+N hidden below)"`
	WarningLines []string `json:"warningLines,omitempty" desc:"line N: text (type)"`
	Path         string   `json:"path,omitempty" desc:"the cheapest path: cost, stations in document order, loads"`
	More         []string `json:"more,omitempty" desc:"what was left out and the arguments that get it"`
}

// compactModel is a plan's outline (plans.Outline: the part of the whole plan's inspect
// view the compact reading shows) with its indexes, built once per outline (compactModelOf)
// and then rendered per request.
type compactModel struct {
	nodes    []plans.OutlineNode
	warnings []plans.OutlineWarning
	path     *plans.OutlinePath
	index    map[string]int // node id → index in nodes
	lineIdx  map[int]int    // line → index in nodes
	below    []int          // per node: nodes in its subtree, itself excluded
}

func newCompactModel(o *plans.Outline) *compactModel {
	m := &compactModel{nodes: o.Nodes, warnings: o.Warnings, path: o.Path,
		index: make(map[string]int, len(o.Nodes)), lineIdx: make(map[int]int, len(o.Nodes)), below: make([]int, len(o.Nodes))}
	for i, n := range o.Nodes {
		if n.ID != "" {
			if _, dup := m.index[n.ID]; !dup {
				m.index[n.ID] = i
			}
		}
		m.lineIdx[n.Line] = i
	}
	// Nodes are in document order, so a node's subtree is the run after it of deeper nodes.
	stack := []int{}
	for i, n := range o.Nodes {
		for len(stack) > 0 && o.Nodes[stack[len(stack)-1]].Depth >= n.Depth {
			stack = stack[:len(stack)-1]
		}
		for _, a := range stack {
			m.below[a]++
		}
		stack = append(stack, i)
	}
	return m
}

// compactArgs are the arguments that shape a compact answer.
type compactArgs struct {
	plan     string
	id       string
	depth    *int
	from     int
	tree     bool
	warnings bool
	path     bool
}

// render builds the compact answer: the structured reading and its text copy.
func (m *compactModel) render(base plans.Base, a compactArgs) (*compactReading, string, error) {
	lo, hi := 0, len(m.nodes) // the nodes in view: [lo, hi)
	top := 0                  // the depth of the view's top
	if a.id != "" {
		i, ok := m.index[a.id]
		if !ok {
			return nil, "", fmt.Errorf("no node has the id %q", a.id)
		}
		lo, hi, top = i, i+1+m.below[i], m.nodes[i].Depth
	}
	inView := func(line int) bool {
		i, ok := m.lineIdx[line]
		return ok && i >= lo && i < hi
	}
	r := &compactReading{Nodes: hi - lo}
	var warns []plans.OutlineWarning
	for _, w := range m.warnings {
		if a.id == "" || inView(w.Line) {
			warns = append(warns, w)
		}
	}
	r.Warnings = len(warns)

	budget := compactBudget
	if a.warnings {
		share := budget
		if a.tree {
			share = compactWarningShare
		}
		used := 0
		for i, w := range warns {
			if w.Line > 0 && w.Line < a.from {
				continue
			}
			s := describeWarning(w.Type, w.Line, w.Text)
			if used+len(s) > share {
				next := warns[i].Line
				r.More = append(r.More, fmt.Sprintf("%d more warnings: call with include [\"warnings\"] and from %d", len(warns)-i, next))
				break
			}
			used += len(s) + 1
			r.WarningLines = append(r.WarningLines, s)
		}
		budget -= used
	}
	if a.tree && hi > lo {
		m.renderTree(r, a, lo, hi, top, budget)
	}
	if a.path && m.path != nil {
		stations := compactStationBudget
		if !a.tree && !a.warnings {
			stations = compactBudget
		}
		r.Path = m.pathLine(lo, hi, a.from, stations)
	}
	return r, m.text(base, a, r), nil
}

// renderTree adds the tree lines of nodes [lo, hi) to r within budget characters: the
// deepest levels that fit (or a.depth levels), from line a.from on.
func (m *compactModel) renderTree(r *compactReading, a compactArgs, lo, hi, top, budget int) {
	maxDepth := -1 // -1 = every level
	if a.depth != nil {
		maxDepth = *a.depth
	} else {
		// The cost of each level, then the deepest level whose lines, with those above,
		// fit the budget.
		cost := []int{}
		for i := lo; i < hi; i++ {
			if m.nodes[i].Line < a.from {
				continue
			}
			d := m.nodes[i].Depth - top
			for len(cost) <= d {
				cost = append(cost, 0)
			}
			cost[d] += len(m.nodeLine(i, top, false)) + 1
		}
		sum := 0
		for d, c := range cost {
			sum += c
			if sum > budget {
				maxDepth = max(d-1, 0)
				break
			}
		}
	}
	used := 0
	hidden := 0
	for i := lo; i < hi; i++ {
		n := m.nodes[i]
		d := n.Depth - top
		if maxDepth >= 0 && d > maxDepth {
			continue
		}
		if n.Line < a.from {
			continue
		}
		cut := maxDepth >= 0 && d == maxDepth && m.below[i] > 0
		s := m.nodeLine(i, top, cut)
		if used+len(s) > budget {
			r.More = append(r.More, fmt.Sprintf("the tree was cut before line %d: call with from %d (and the same id and depth) for the rest", n.Line, n.Line))
			break
		}
		used += len(s) + 1
		if cut {
			hidden += m.below[i]
		}
		r.Tree = append(r.Tree, s)
	}
	if hidden > 0 {
		d := maxDepth
		r.Depth = &d
		r.More = append(r.More, fmt.Sprintf("%d nodes deeper than depth %d are hidden (\"+N below\" marks them): call with id of a node for its subtree, or with depth %d", hidden, maxDepth, maxDepth+1))
	}
}

// nodeLine is one node's tree line: indented by its depth below the view's top.
func (m *compactModel) nodeLine(i, top int, cut bool) string {
	n := m.nodes[i]
	var b strings.Builder
	b.Grow(64)
	for range n.Depth - top {
		b.WriteByte(' ')
	}
	b.WriteString(strconv.Itoa(n.Line))
	if n.ID != "" {
		b.WriteString(" #")
		b.WriteString(n.ID)
	}
	b.WriteByte(' ')
	b.WriteString(cutLabel(n.Label))
	if n.Status != "" {
		b.WriteString(" [" + n.Status + "]")
	}
	if n.Size != "" {
		b.WriteString(" " + n.Size)
	}
	if n.EffectiveStatus != "" && n.EffectiveStatus != n.Status {
		b.WriteString(" eff=" + n.EffectiveStatus)
	}
	for _, p := range n.People {
		b.WriteString(" @" + p)
	}
	if len(n.Deps) > 0 {
		b.WriteString(" deps=" + strings.Join(n.Deps, ","))
	}
	if cut {
		fmt.Fprintf(&b, " (+%d below)", m.below[i])
	}
	return b.String()
}

// cutLabel shortens a label to compactLabelMax characters, marking the cut.
func cutLabel(s string) string {
	if utf8.RuneCountInString(s) <= compactLabelMax {
		return s
	}
	n := 0
	for i := range s {
		if n == compactLabelMax-1 {
			return s[:i] + "…"
		}
		n++
	}
	return s
}

// pathLine sums up the cheapest path: its cost, the stations in view from line from on in
// document order (by id, or line where a station has no id) within budget bytes, the
// assignee loads.
func (m *compactModel) pathLine(lo, hi, from, budget int) string {
	p := m.path
	var b strings.Builder
	exact := "exact"
	if !p.Exact {
		exact = "approximate"
	}
	fmt.Fprintf(&b, "cost %s (%s), %d stations", strconv.FormatFloat(p.Cost, 'f', -1, 64), exact, len(p.Stations))
	shown := 0
	for _, line := range p.Stations {
		i, ok := m.lineIdx[line]
		if !ok || i < lo || i >= hi || line < from {
			continue
		}
		name := "line " + strconv.Itoa(line)
		if id := m.nodes[i].ID; id != "" {
			name = "#" + id
		}
		if b.Len()+len(name) > budget {
			fmt.Fprintf(&b, " … (cut: call with include [\"path\"] and from %d for the rest)", line)
			break
		}
		if shown == 0 {
			b.WriteString(": ")
		} else {
			b.WriteString(", ")
		}
		b.WriteString(name)
		shown++
	}
	if len(p.AssigneeLoads) > 0 {
		b.WriteString("; loads:")
		for _, k := range slices.Sorted(maps.Keys(p.AssigneeLoads)) {
			fmt.Fprintf(&b, " @%s %s", k, strconv.FormatFloat(p.AssigneeLoads[k], 'f', -1, 64))
		}
	}
	if o := p.OverloadedAssignee; o != nil {
		fmt.Fprintf(&b, "; overloaded: @%s (%d%% of %d stations)", o.Tag, o.Share, o.TotalStations)
	}
	return b.String()
}

// text is the compact answer as a model reads it: the base first, then the parts.
func (m *compactModel) text(base plans.Base, a compactArgs, r *compactReading) string {
	var b strings.Builder
	b.Grow(compactBudget + 2048)
	fmt.Fprintf(&b, "plan %s, base {\"revision\":%d,\"checksum\":\"%s\"} (pass it unchanged to a write)\n", a.plan, base.Revision, base.Checksum)
	view := "the plan"
	if a.id != "" {
		view = "subtree #" + a.id
	}
	fmt.Fprintf(&b, "%s: %d nodes, %d warnings\n", view, r.Nodes, r.Warnings)
	if len(r.Tree) > 0 {
		b.WriteString("tree (line #id label [status] size eff=effective status @people deps=ids; indented by depth):\n")
		for _, s := range r.Tree {
			b.WriteString(s)
			b.WriteByte('\n')
		}
	}
	if len(r.WarningLines) > 0 {
		b.WriteString("warnings:\n")
		for _, s := range r.WarningLines {
			b.WriteString(s)
			b.WriteByte('\n')
		}
	}
	if r.Path != "" {
		b.WriteString("cheapest path: " + r.Path + "\n")
	}
	for _, s := range r.More {
		b.WriteString("more: " + s + "\n")
	}
	b.WriteString("detail \"full\" gives every field of every node as JSON (large).\n")
	return b.String()
}

// compactModelOf is the compact model of o, built once per outline and kept with it
// (werkbaum.Outline.Derived): the engine's cache holds both, and an idle shed frees both.
func compactModelOf(o *plans.Outline) *compactModel {
	return o.Derived(func(o *plans.Outline) any { return newCompactModel(o) }).(*compactModel)
}
