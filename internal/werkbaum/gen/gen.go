// Package gen makes Werkbaum plans of realistic shape for benchmarks and tools: areas of
// work broken down three to eight levels deep, with sizes that agree with their children,
// statuses, people (also non-ASCII ones such as @jörg and @Müller), keywords, dependencies,
// short descriptions, description blocks after the separator, all four gates, a few fold
// and focus marks, URLs and comments.
//
// Every plan is a pure function of its parameters: the same size and seed give the same
// bytes on every machine and Go version (the random numbers come from mulberry32, not from
// math/rand). A generated plan has exactly the requested number of nodes and, by
// construction, none of the notation's structural warnings (mixedGate, unknownStatus,
// descStray, duplicateId) nor unknownDep, unknownDesc, xorConflict or sizeConflict; only
// the path's own notes (cheapApprox, assigneeOverload) may appear. gen_test.go checks both
// through the engine.
package gen

import (
	"fmt"
	"strings"
)

// Sizes are the node counts the benchmarks use (issue 16): from a small plan to one close
// to the engine's 2 MiB input limit.
var Sizes = []int{100, 1000, 2000, 5000, 10000, 40000}

// rng is mulberry32 (the PRNG of js/test/gen.js): small, fast and fixed forever.
type rng struct{ a uint32 }

func (r *rng) float() float64 {
	r.a += 0x6d2b79f5
	t := r.a
	t = (t ^ (t >> 15)) * (t | 1)
	t ^= t + (t^(t>>7))*(t|61)
	return float64(t^(t>>14)) / 4294967296
}

// intn returns a number in [0, n).
func (r *rng) intn(n int) int { return int(r.float() * float64(n)) }

// chance is true with probability p.
func (r *rng) chance(p float64) bool { return r.float() < p }

func pick[T any](r *rng, xs []T) T { return xs[r.intn(len(xs))] }

var (
	people = []string{"ann", "bo", "jörg", "Müller", "zoë", "li.wei", "ana-maria", "Łukasz", "sam", "kim"}
	words  = []string{
		"Login", "Cache", "Token", "Prüfung", "Übersicht", "Größe", "Straße", "Export", "Import",
		"Parser", "Index", "Suche", "Rechnung", "Report", "Backup", "Schema", "Queue", "Upload",
		"Migration", "Audit", "Review", "Café", "Déjà-vu", "API", "Web", "Mobile", "Sync", "Test",
	}
	verbs = []string{"prüfen", "bauen", "design", "fix", "write", "ship", "measure", "klären", "port", "split"}
	marks = []string{"backend", "frontend", "ops", "ux", "qualität"}
	// Leaf statuses, weighted: mostly planned or open, some done, a few of everything.
	leafBoxes = []string{"[ ] ", "[ ] ", "[ ] ", "", "", "[x] ", "[x] ", "[~] ", "[?] ", "[/] ", "[!] ", "[^] ", "[-] "}
	descTexts = []string{
		"Owner agreed in the weekly; see the notes.",
		"Blocked until the vendor answers – nachfragen.",
		"Größere Änderung, erst mit Jörg abstimmen.",
		"Measure first, then decide.",
		"Nur für interne Nutzer.",
	}
	sizeNames = []string{"XS", "S", "M", "L", "XL", "XXL"}
)

// node is one generated node before it is written out.
type node struct {
	depth    int
	gate     byte // '-', '+', '|', '=' or 0 (none)
	box      string
	label    string
	id       string
	size     int // rank 0..5, -1 = none
	people   []string
	mark     string
	deps     []string
	url      bool
	fold     bool
	focus    bool
	ticket   string
	comment  bool
	short    string // short description ("" = none)
	block    bool   // has a description block after the separator
	children []*node
}

// builder holds the state of one generation.
type builder struct {
	r     *rng
	n     int // nodes wanted
	count int // nodes made
	ids   []string
	focus int
}

// Plan returns a realistic plan of exactly n nodes (n ≥ 1) for the seed.
func Plan(n int, seed uint32) string {
	b := &builder{r: &rng{a: seed}, n: n}
	var roots []*node
	for b.count < b.n {
		maxDepth := 3 + b.r.intn(6) // 3..8 levels
		budget := min(b.n-b.count, 20+b.r.intn(400))
		roots = append(roots, b.build(0, maxDepth, budget, 0))
	}
	return write(roots)
}

// build makes a node at depth with at most budget nodes in its subtree; its children share
// the rest of the budget. gate is the node's own gate character, chosen by its parent.
func (b *builder) build(depth, maxDepth, budget int, gate byte) *node {
	r := b.r
	b.count++
	nd := &node{depth: depth, gate: gate, size: -1}
	nd.label = pick(r, words) + " " + pick(r, verbs)
	if r.chance(0.3) {
		nd.label += " " + pick(r, words)
	}
	if depth == 0 || r.chance(0.55) {
		nd.id = b.newID(depth)
	}
	if r.chance(0.35) {
		nd.people = append(nd.people, pick(r, people))
		if r.chance(0.1) {
			nd.people = append(nd.people, pick(r, people))
		}
	}
	if depth == 0 {
		nd.mark = "taiga." + strings.ToLower(pick(r, words))
	} else if r.chance(0.06) {
		nd.mark = pick(r, marks)
	}
	if len(b.ids) > 1 && r.chance(0.08) {
		nd.deps = append(nd.deps, b.ids[r.intn(len(b.ids)-1)]) // an earlier node's id
		if r.chance(0.2) {
			nd.deps = append(nd.deps, b.ids[r.intn(len(b.ids)-1)])
		}
	}
	nd.url = r.chance(0.02)
	nd.comment = r.chance(0.02)
	if nd.id != "" && r.chance(0.03) {
		nd.ticket = fmt.Sprintf("#US-%d", 100+r.intn(900))
	}
	if b.focus < 3 && r.chance(0.0005) {
		nd.focus = true
		b.focus++
	}
	if r.chance(0.12) {
		nd.short = pick(r, descTexts)
	}
	nd.block = nd.id != "" && r.chance(0.04)

	left := budget - 1
	if depth+1 < maxDepth && left > 0 && b.count < b.n {
		k := min(left, 2+r.intn(5))
		group := r.float()
		for i := 0; i < k && b.count < b.n; i++ {
			// Split what is left between the remaining children, with some spread.
			share := left / (k - i)
			if k-i > 1 {
				share = max(1, share/2+r.intn(share+1))
			}
			share = min(share, left)
			left -= share
			nd.children = append(nd.children, b.build(depth+1, maxDepth, share, childGate(r, group, i)))
		}
	}
	b.status(nd)
	b.sizeOf(nd)
	nd.fold = len(nd.children) > 0 && depth > 0 && r.chance(0.05)
	return nd
}

// childGate is the gate of child i of a group of the given kind: and-groups mix '-', '+'
// and lines without a gate (§8 allows that), or- and xor-groups use '|' or '=' throughout.
func childGate(r *rng, group float64, i int) byte {
	switch {
	case group < 0.12:
		return '|'
	case group < 0.18:
		return '='
	case r.chance(0.1):
		return '+'
	case group < 0.25:
		return 0
	}
	return '-'
}

func (b *builder) newID(depth int) string {
	var id string
	switch {
	case b.r.chance(0.1):
		id = fmt.Sprintf("prüf%d", len(b.ids))
	case depth == 0:
		id = fmt.Sprintf("area%d", len(b.ids))
	default:
		id = fmt.Sprintf("t%d", len(b.ids))
	}
	b.ids = append(b.ids, id)
	return id
}

// status sets a node's box once its children are known: a parent's box follows its
// children roughly (in progress while some are open); in a xor group at most one child is
// realized (xorConflict is a warning the generator does not intend).
func (b *builder) status(nd *node) {
	r := b.r
	if len(nd.children) == 0 {
		nd.box = pick(r, leafBoxes)
	} else {
		nd.box = pick(r, []string{"[~] ", "[ ] ", "", "[/] ", "[x] "})
	}
	if len(nd.children) > 0 && nd.children[0].gate == '=' {
		realized := false
		for _, c := range nd.children {
			if isRealized(c.box) {
				if realized {
					c.box = "[ ] "
				}
				realized = true
			}
		}
	}
}

func isRealized(box string) bool {
	return box == "[~] " || box == "[/] " || box == "[x] " || box == "[^] "
}

// sizeOf gives a leaf a small size now and then and a parent one that agrees with its
// children (§10: the smallest size whose range is above what the children need), so that
// no sizeConflict arises.
func (b *builder) sizeOf(nd *node) {
	r := b.r
	if len(nd.children) == 0 {
		if r.chance(0.7) {
			nd.size = r.intn(4) // XS..L
		}
		return
	}
	if !r.chance(0.5) {
		return
	}
	need, counted := 0, 0
	disjunctive := nd.children[0].gate == '|' || nd.children[0].gate == '='
	for _, c := range nd.children {
		if c.size < 0 || c.gate == '+' || c.box == "[-] " {
			continue
		}
		m := 1 << c.size
		switch {
		case counted == 0:
			need = m
		case disjunctive:
			need = min(need, m)
		default:
			need += m
		}
		counted++
	}
	rank := 0
	for rank < 5 && 1<<(rank+1) <= need {
		rank++
	}
	nd.size = min(5, rank+r.intn(2))
}

// write renders the plan: the tree part, then (if any node has one) the separator and the
// description blocks.
func write(roots []*node) string {
	var sb strings.Builder
	var blocks []*node
	var walk func(*node)
	walk = func(nd *node) {
		writeLine(&sb, nd)
		if nd.block {
			blocks = append(blocks, nd)
		}
		for _, c := range nd.children {
			walk(c)
		}
	}
	for _, root := range roots {
		walk(root)
	}
	if len(blocks) > 0 {
		sb.WriteString("\n---\n\n")
		for i, nd := range blocks {
			fmt.Fprintf(&sb, "#%s\n  Notes for %s, part %d.\n  Zweite Zeile: Größe prüfen.\n\n", nd.id, nd.label, i)
		}
	}
	return sb.String()
}

func writeLine(sb *strings.Builder, nd *node) {
	indent := strings.Repeat("  ", nd.depth)
	sb.WriteString(indent)
	if nd.gate != 0 {
		sb.WriteByte(nd.gate)
		sb.WriteByte(' ')
	}
	sb.WriteString(nd.box)
	if nd.fold {
		sb.WriteString("> ")
	}
	sb.WriteString(nd.label)
	if nd.id != "" {
		sb.WriteString(" #")
		sb.WriteString(nd.id)
	}
	if nd.ticket != "" {
		sb.WriteString(" " + nd.ticket)
	}
	if nd.size >= 0 {
		sb.WriteString(" (" + sizeNames[nd.size] + ")")
	}
	for _, p := range nd.people {
		sb.WriteString(" @" + p)
	}
	if nd.mark != "" {
		sb.WriteString(" &" + nd.mark)
	}
	if len(nd.deps) > 0 {
		sb.WriteString(" :#" + strings.Join(nd.deps, ",#"))
	}
	if nd.url {
		fmt.Fprintf(sb, " https://example.org/t/%d?a=1&b=(M)", nd.depth)
	}
	if nd.focus {
		sb.WriteString(" !!!")
	}
	if nd.comment {
		sb.WriteString(" %% checked in review")
	}
	sb.WriteByte('\n')
	if nd.short != "" {
		sb.WriteString(indent + "  \" " + nd.short + "\n")
	}
}

// Flat returns a plan of n nodes in one level: a root and n-1 children, the widest sibling
// group a plan can have.
func Flat(n int, seed uint32) string {
	r := &rng{a: seed}
	var sb strings.Builder
	sb.WriteString("[~] Everything at once #flat (XXL) &taiga.flat\n")
	for i := 1; i < n; i++ {
		fmt.Fprintf(&sb, "  - %s%s %s #f%d (%s) @%s\n", pick(r, leafBoxes), pick(r, words), pick(r, verbs), i,
			sizeNames[r.intn(4)], pick(r, people))
	}
	return sb.String()
}

// Deep returns a plan of n nodes in chains of the given depth: each chain node has its
// successor and one leaf as children, so the tree is depth levels deep and every level is
// a real sibling group.
func Deep(n, depth int, seed uint32) string {
	r := &rng{a: seed}
	var sb strings.Builder
	count := 0
	for count < n {
		for d := 0; d < depth && count < n; d++ {
			indent := strings.Repeat("  ", d)
			gate := ""
			if d > 0 {
				gate = "- "
			}
			fmt.Fprintf(&sb, "%s%s%sLevel %d #d%d @%s\n", indent, gate, pick(r, []string{"[ ] ", "[~] ", ""}), d, count, pick(r, people))
			count++
			if count < n && d > 0 {
				fmt.Fprintf(&sb, "%s  - %sLeaf %s #d%d (S)\n", indent, pick(r, leafBoxes), pick(r, words), count)
				count++
			}
		}
	}
	return sb.String()
}

// Coupled returns the exact path search's hard case (issue 33): k two-way choice groups
// coupled by dependencies so that they form one component which activates backwards. Group
// i sits under an optional parent #g<i> that only a dependency pulls in; its first option
// depends on #g<i-1> (so choosing it activates the previous group) and its second on one
// shared node #db. The root depends on the last group's parent. Each option has width
// steps of random size and status below it, so a plan has 2^k assignments and 4+k·(2·width+3)
// lines: k = 14 and width = 20 is the 16,384-assignment plan of about 600 lines, width = 5
// the one of about 180. Activations that run backwards keep the search from the memoised
// order-by-order solution, so every assignment is evaluated.
func Coupled(k, width int, seed uint32) string {
	r := &rng{a: seed}
	var sb strings.Builder
	fmt.Fprintf(&sb, "[~] Ship the release #ship (XXL) @jörg :#g%d\n", k-1)
	sb.WriteString("  - [~] Base #base (M) :#db\n")
	sb.WriteString("  + Pool\n")
	sb.WriteString("    - #db: Shared database (XL) @Müller\n")
	for i := 0; i < k; i++ {
		fmt.Fprintf(&sb, "  + #g%d: Part %d\n", i, i)
		for o, name := range []string{"A", "B"} {
			dep := ":#db"
			if o == 0 && i > 0 {
				dep = fmt.Sprintf(":#g%d", i-1)
			}
			size := "" // a sized option over sized steps would conflict with their sum
			if width == 0 {
				size = " (" + sizeNames[r.intn(5)] + ")"
			}
			fmt.Fprintf(&sb, "    | #%s%d: Option %s %d%s %s\n", strings.ToLower(name), i, name, i, size, dep)
			for j := 0; j < width; j++ {
				fmt.Fprintf(&sb, "      - %s%s %s %d.%d (%s) @%s\n", pick(r, leafBoxes), pick(r, words), pick(r, verbs), i, j,
					sizeNames[r.intn(3)], pick(r, people))
			}
		}
	}
	return sb.String()
}
