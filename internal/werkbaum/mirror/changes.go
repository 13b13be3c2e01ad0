package mirror

import (
	"fmt"
	"strconv"
	"strings"

	"talkd/internal/werkbaum"
)

// ChangeKind names what happened to one node in a write.
type ChangeKind string

// Kinds of node changes, in the order Describe lists them.
const (
	StatusChanged ChangeKind = "status"
	Added         ChangeKind = "added"
	Removed       ChangeKind = "removed"
	Moved         ChangeKind = "moved"
	Resized       ChangeKind = "resized"
)

// Change is one node-level difference between the text before and after a write. Nodes
// are matched by id, and nodes without an id by the chain of labels from their root
// (so a node keeps its identity when lines above it are added or removed).
type Change struct {
	Kind  ChangeKind
	ID    string
	Label string
	// From and To are statuses (English keys, "" = neutral) for Status, sizes for
	// Resized ("" = none) and parent references for Moved.
	From, To string
}

// Ref names the node in a commit line: "#id", else its label in quotes.
func (c Change) Ref() string {
	if c.ID != "" {
		return "#" + c.ID
	}
	return strconv.Quote(clip(c.Label, 60))
}

// Name names the node in speech: its label, else its id.
func (c Change) Name() string {
	l := strings.TrimSpace(c.Label)
	if l == "" || l == "#"+c.ID {
		if c.ID != "" {
			return strings.NewReplacer(".", " ", "_", " ", "-", " ").Replace(c.ID)
		}
		return l
	}
	return clip(l, 80)
}

// Diff compares the nodes of two inspections of a plan (before and after a write).
func Diff(before, after []werkbaum.Node) []Change {
	oldIdx := index(before)
	newIdx := index(after)
	var out []Change
	for _, k := range newIdx.order {
		n := newIdx.nodes[k]
		o, ok := oldIdx.nodes[k]
		if !ok {
			out = append(out, Change{Kind: Added, ID: n.ID, Label: n.Label})
			continue
		}
		if o.Status != n.Status {
			out = append(out, Change{Kind: StatusChanged, ID: n.ID, Label: n.Label, From: o.Status, To: n.Status})
		}
		if op, np := oldIdx.parent[k], newIdx.parent[k]; op != np {
			out = append(out, Change{Kind: Moved, ID: n.ID, Label: n.Label, From: op, To: np})
		}
		if o.Size != n.Size {
			out = append(out, Change{Kind: Resized, ID: n.ID, Label: n.Label, From: o.Size, To: n.Size})
		}
	}
	for _, k := range oldIdx.order {
		if _, ok := newIdx.nodes[k]; !ok {
			o := oldIdx.nodes[k]
			out = append(out, Change{Kind: Removed, ID: o.ID, Label: o.Label})
		}
	}
	return out
}

type nodeIndex struct {
	order  []string
	nodes  map[string]werkbaum.Node
	parent map[string]string // key → parent reference ("" = root)
}

// index keys every node: "#id" for the first node with an id, else the label chain from
// the root, numbered when the same chain occurs more than once.
func index(nodes []werkbaum.Node) nodeIndex {
	ix := nodeIndex{nodes: make(map[string]werkbaum.Node, len(nodes)), parent: make(map[string]string, len(nodes))}
	byLine := make(map[int]werkbaum.Node, len(nodes))
	chain := make(map[int]string, len(nodes))
	for _, n := range nodes {
		byLine[n.Line] = n
	}
	seen := map[string]int{}
	for _, n := range nodes {
		c := n.Label
		if p, ok := chain[n.ParentLine]; ok {
			c = p + "\x00" + n.Label
		}
		chain[n.Line] = c
		key := "#" + n.ID
		if n.ID == "" {
			key = "label:" + c
		}
		seen[key]++
		if seen[key] > 1 {
			key += "\x00" + strconv.Itoa(seen[key])
		}
		ix.order = append(ix.order, key)
		ix.nodes[key] = n
		if p, ok := byLine[n.ParentLine]; ok && n.ParentLine > 0 {
			ix.parent[key] = Change{ID: p.ID, Label: p.Label}.Ref()
		}
	}
	return ix
}

// Describe says in a few words what a write did, for a line of a commit body, e.g.
// `set #auth.token to done`. At most three changes are named.
func Describe(changes []Change) string {
	if len(changes) == 0 {
		return "edited the text"
	}
	const show = 3
	parts := make([]string, 0, show)
	for i, c := range changes {
		if i == show {
			break
		}
		parts = append(parts, describeOne(c))
	}
	s := strings.Join(parts, ", ")
	if n := len(changes) - show; n > 0 {
		s += fmt.Sprintf(" and %d more change%s", n, plural(n))
	}
	return s
}

func describeOne(c Change) string {
	switch c.Kind {
	case StatusChanged:
		to := c.To
		if to == "" {
			to = "no status"
		}
		return "set " + c.Ref() + " to " + to
	case Added:
		return "added " + c.Ref()
	case Removed:
		return "removed " + c.Ref()
	case Moved:
		if c.To == "" {
			return "moved " + c.Ref() + " to the top level"
		}
		return "moved " + c.Ref() + " under " + c.To
	case Resized:
		if c.To == "" {
			return "removed the size of " + c.Ref()
		}
		return "sized " + c.Ref() + " to " + c.To
	}
	return "changed " + c.Ref()
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// clip shortens s to at most n runes and removes control characters, so labels stay on
// one line of a commit message or a short sentence.
func clip(s string, n int) string {
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, s)
	r := []rune(strings.TrimSpace(s))
	if len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return string(r)
}
