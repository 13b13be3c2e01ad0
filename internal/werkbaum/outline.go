package werkbaum

import (
	"context"
	"encoding/json"
	"fmt"
	"unsafe"
)

// The whole plan's inspect view is several MB of JSON for a large plan (3.5 MB at 10,000
// nodes), and two readers of it in the plan store want only a little: the summary
// (plans_list, /status) counts nodes and warnings, and the MCP compact reading shows a few
// fields per node. The Outline is that little. Decoding it from the view cost 25–45 ms of a
// 10,000-node plan's first inspect; the engine's record writer (view.go) has every value
// in hand when it writes the view, so it yields the outline in the same pass, and decoding
// is left to answers the engine did not produce itself (read back from the persisted
// analyses). DecodeOutline is the definition: TestOutlineOfTheWriterEqualsDecode holds the
// writer's outline to the decode of the view it wrote.

// Outline is the part of a plan's whole inspect view that the summary and the compact
// reading use. Nodes are in document order, as in the view. It is shared and must not be
// modified.
type Outline struct {
	Nodes    []OutlineNode    `json:"nodes"`
	Warnings []OutlineWarning `json:"warnings"`
	Path     *OutlinePath     `json:"path"`
}

// OutlineNode is what the compact reading shows of a node (Node has the rest).
type OutlineNode struct {
	Line            int      `json:"line"`
	Depth           int      `json:"depth"`
	ID              string   `json:"id"`
	Label           string   `json:"label"`
	Status          string   `json:"status"`
	EffectiveStatus string   `json:"effectiveStatus"`
	Size            string   `json:"size"`
	People          []string `json:"people"`
	Deps            []string `json:"deps"`
}

// OutlineWarning is a warning's type, line and text (Warning has the rest).
type OutlineWarning struct {
	Type string `json:"type"`
	Line int    `json:"line"`
	Text string `json:"text"`
}

// OutlinePath is the cheapest path without its needed lines and station counts.
type OutlinePath struct {
	Exact              bool               `json:"exact"`
	Stations           []int              `json:"stations"`
	Cost               float64            `json:"cost"`
	AssigneeLoads      map[string]float64 `json:"assigneeLoads"`
	OverloadedAssignee *Overload          `json:"overloadedAssignee"`
}

// DecodeOutline decodes the outline of a whole plan's inspect view (the engine's, or an
// answer with more fields in front, such as the plan store's base: fields it does not name
// are skipped).
func DecodeOutline(view []byte) (*Outline, error) {
	var o Outline
	if err := json.Unmarshal(view, &o); err != nil {
		return nil, fmt.Errorf("decoding the inspect view: %w", err)
	}
	return &o, nil
}

// InspectOutline is InspectJSON of the whole plan (no options) with the view's outline
// when this engine wrote the view (also when a concurrent caller's analysis of the same
// text produced it, or it is still in the memory cache). The outline is nil when the view
// was read back from the persisted analyses: the caller decodes it then (DecodeOutline).
// Both are the cache's and must not be modified: the plan store copies the view anyway
// (it puts the base in front), and a private copy of 3.5 MB would be garbage at once.
func (e *Engine) InspectOutline(ctx context.Context, text string) (json.RawMessage, *Outline, error) {
	ent, err := e.inspect(ctx, text, InspectOptions{})
	if err != nil {
		return nil, nil, err
	}
	return ent.raw, ent.outline, nil
}

// footprint estimates the bytes the outline keeps alive (its structs, slices and string
// bytes; strings it shares with other values are counted as its own), so that a cache
// holding it beside the view it came from counts both. A nil outline keeps nothing.
func (o *Outline) footprint() int {
	if o == nil {
		return 0
	}
	const (
		node    = int(unsafe.Sizeof(OutlineNode{}))
		warning = int(unsafe.Sizeof(OutlineWarning{}))
		str     = int(unsafe.Sizeof(""))
		word    = int(unsafe.Sizeof(0))
	)
	n := int(unsafe.Sizeof(*o)) + cap(o.Nodes)*node + cap(o.Warnings)*warning
	for i := range o.Nodes {
		nd := &o.Nodes[i]
		n += len(nd.ID) + len(nd.Label) + len(nd.Status) + len(nd.EffectiveStatus) + len(nd.Size)
		n += cap(nd.People)*str + cap(nd.Deps)*str
		for _, s := range nd.People {
			n += len(s)
		}
		for _, s := range nd.Deps {
			n += len(s)
		}
	}
	for i := range o.Warnings {
		n += len(o.Warnings[i].Type) + len(o.Warnings[i].Text)
	}
	if p := o.Path; p != nil {
		n += int(unsafe.Sizeof(*p)) + cap(p.Stations)*word
		for tag := range p.AssigneeLoads {
			n += len(tag) + str + 8 // the key's bytes and header, the value
		}
		if p.OverloadedAssignee != nil {
			n += int(unsafe.Sizeof(*p.OverloadedAssignee)) + len(p.OverloadedAssignee.Tag)
		}
	}
	return n
}
