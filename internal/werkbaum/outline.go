package werkbaum

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"
	"unsafe"
)

// The whole plan's inspect view is several MB of JSON for a large plan (3.5 MB at 10,000
// nodes), and two readers of it in the plan store want only a little: the summary
// (plans_list, /status) counts nodes and warnings, and the MCP compact reading shows a few
// fields per node. The Outline is that little. Decoding it from the view cost 25–45 ms of a
// 10,000-node plan's first inspect; the engine's record writer (view.go) has every value
// in hand when it writes the view, so it yields the outline in the same pass, and decoding
// is left to answers the engine did not produce itself (read back from the persisted
// analyses) and to views whose outline an idle shed dropped. The engine keeps the outline
// with its cached view and is its only holder (Engine.Outline): the plan store asks for it
// each time and keeps none. DecodeOutline is the definition:
// TestOutlineOfTheWriterEqualsDecode holds the writer's outline to the decode of the view
// it wrote.

// Outline is the part of a plan's whole inspect view that the summary and the compact
// reading use. Nodes are in document order, as in the view. It is shared and must not be
// modified.
type Outline struct {
	Nodes    []OutlineNode    `json:"nodes"`
	Warnings []OutlineWarning `json:"warnings"`
	Path     *OutlinePath     `json:"path"`

	// derived is what a reader built from this outline once (Derived).
	derivedOnce sync.Once
	derived     any
}

// Derived returns what build makes of o, built once per outline however many ask at once:
// the MCP door's compact model with its indexes. It lives and goes with the outline, whose
// only holder is the engine's cache, so an idle shed that drops the outline frees it too
// (a cache of such models beside the engine kept both through every shed). It is not
// counted in the cache's weight (outline.footprint): an index entry or two per node.
func (o *Outline) Derived(build func(*Outline) any) any {
	o.derivedOnce.Do(func() { o.derived = build(o) })
	return o.derived
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

// InspectView is InspectJSON without the copy: the bytes are the cache's and must not be
// modified. The plan store copies the view anyway (it puts the base in front), and a
// private copy of a large plan's view would be garbage at once.
func (e *Engine) InspectView(ctx context.Context, text string, opts InspectOptions) (json.RawMessage, error) {
	ent, err := e.inspect(ctx, text, opts)
	if err != nil {
		return nil, err
	}
	return ent.raw, nil
}

// Outline returns the outline of the whole plan's inspect view of text. The engine is its
// only holder: it keeps it with the cached view (written with it, or decoded from a view
// read back from the persisted analyses or one whose outline an idle shed dropped), so
// every reader of one content gets the same outline until the entry goes, and ShedIdle
// frees it. It is shared and must not be modified.
func (e *Engine) Outline(ctx context.Context, text string) (*Outline, error) {
	ent, err := e.inspect(ctx, text, InspectOptions{})
	if err != nil {
		return nil, err
	}
	return e.outlineOf(ctx, ent)
}

// outlineOf returns the outline of ent, a whole plan's view: its own, else decoded from its
// view once while concurrent askers wait for that decode (a 10,000-node plan's costs tens
// of milliseconds), and kept in the cache's entry in ent's place.
func (e *Engine) outlineOf(ctx context.Context, ent *lruEntry) (*Outline, error) {
	if ent.outline != nil {
		return ent.outline, nil
	}
	if e.cache == nil {
		return e.decodeOutline(ent.raw) // an uncached view has its outline unless it failed
	}
	key := "outline\x00" + ent.key
	for {
		f, first := e.flights.join(key)
		if !first {
			select {
			case <-f.done:
			case <-ctx.Done():
				return nil, fmt.Errorf("werkbaum outline: %w", ctx.Err())
			}
			if f.abandoned {
				continue // the decode panicked: try it here
			}
			if f.err != nil {
				return nil, f.err
			}
			return f.ent.outline, nil
		}
		return e.decodeFlight(key, ent, f)
	}
}

// decodeFlight decodes ent's outline for the flight f this caller started and lands it,
// also when the decode panics.
func (e *Engine) decodeFlight(key string, ent *lruEntry, f *flight) (*Outline, error) {
	f.err, f.abandoned = errFlightAbandoned, true // until the decode returns
	defer e.flights.land(key, f)
	// A flight that landed since the caller got ent left the outline in the cache.
	if cur, ok := e.cache.outlined(ent.key); ok {
		f.ent, f.err, f.abandoned = cur, nil, false
		return cur.outline, nil
	}
	o, err := e.decodeOutline(ent.raw)
	if err == nil {
		f.ent = e.cache.withOutline(ent, o)
	}
	f.err, f.abandoned = err, false
	return o, err
}

// decodeOutline decodes the outline of a view, with a debug line saying how long it took:
// the price of a view the engine did not write itself or of an idle shed.
func (e *Engine) decodeOutline(view []byte) (*Outline, error) {
	start := time.Now()
	o, err := DecodeOutline(view)
	if err != nil {
		return nil, fmt.Errorf("%w: outline: %v", ErrEngine, err)
	}
	e.log.Debug("werkbaum: outline decoded from the view", "view_bytes", len(view), "took", time.Since(start).Round(time.Microsecond))
	return o, nil
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
