package plans

import (
	"context"

	"talkd/internal/werkbaum"
)

// The whole plan's inspect view is several MB of JSON for a large plan (3.5 MB at 10,000
// nodes), and two readers of it want only a little: the summary (plans_list, /status)
// counts nodes and warnings, and the MCP compact reading shows a few fields per node. The
// outline (werkbaum.Outline) is that little. The engine owns it (one outline per content,
// kept with its cached view, dropped by its idle shed), and both readers ask it for the
// outline each time: neither needs the view's bytes, so neither makes the store's answer
// with the base, which only werkbaum_inspect's full reading sends.

// Outline is the part of a plan's whole inspect view that the summary and the compact
// reading use (werkbaum.Outline). It is shared and must not be modified.
type Outline = werkbaum.Outline

// OutlineNode is what the compact reading shows of a node.
type OutlineNode = werkbaum.OutlineNode

// OutlineWarning is a warning's type, line and text.
type OutlineWarning = werkbaum.OutlineWarning

// OutlinePath is the cheapest path without its needed lines and station counts.
type OutlinePath = werkbaum.OutlinePath

// Outlined is a plan's outline with the base it was read at.
type Outlined struct {
	Base    Base
	Outline *Outline
}

// Outline returns the outline of the plan's current content, which the engine keeps with
// its cached view of the whole plan (werkbaum.Engine.Outline): made with the view, or
// decoded from it once. The store keeps none, so the engine's idle shed frees them all.
func (s *Service) Outline(ctx context.Context, key string) (*Outlined, error) {
	snap, err := s.readResolved(ctx, key)
	if err != nil {
		return nil, err
	}
	o, err := s.engine.Outline(ctx, snap.Text)
	if err != nil {
		return nil, err
	}
	return &Outlined{Base: snap.Base, Outline: o}, nil
}
