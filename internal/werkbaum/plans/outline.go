package plans

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"

	"talkd/internal/werkbaum"
)

// The whole plan's inspect view is several MB of JSON for a large plan (3.5 MB at 10,000
// nodes), and two readers of it want only a little: the summary (plans_list, /status)
// counts nodes and warnings, and the MCP compact reading shows a few fields per node. The
// outline (werkbaum.Outline) is that little, kept once per content (checksum) and shared
// by both. The engine yields it with the view it writes; a view the engine read back from
// its persisted analyses, or one whose outline was dropped here while the view stayed
// cached, is decoded (werkbaum.DecodeOutline) by the first reader that needs it.

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

// Outline returns the outline of the plan's current content. It runs the engine's inspect
// of the whole plan like Inspect (cached, and joined with the summary's analysis of the
// same content when that is under way), and takes the outline the engine wrote with the
// view, or decodes the view, at most once per content while the content's outline is kept
// (outlinesKept).
func (s *Service) Outline(ctx context.Context, key string) (*Outlined, error) {
	// The answer with the caller's context, so its deadline and errors are Inspect's.
	snap, raw, made, err := s.readInspected(ctx, key, werkbaum.InspectOptions{})
	if err != nil {
		return nil, err
	}
	o, err := s.outlineOf(s.startSummary(key, snap), raw, made)
	if err != nil {
		return nil, err
	}
	return &Outlined{Base: snap.Base, Outline: o}, nil
}

// outlinesKept bounds the contents whose outline is kept (a 10,000-node plan's is a few
// MB): a plan whose outline was dropped is decoded again when next asked for.
const outlinesKept = 8

// outlineSlot holds the outline of one content (a summaryEntry's), set by the first reader
// that needs it (from the engine, or decoded) while the others wait for it.
type outlineSlot struct {
	decoding sync.Mutex
	outline  atomic.Pointer[Outline] // nil until decoded, and again once dropped
}

// outlineOf returns the outline of ent's content unless it is kept: made, the outline the
// engine wrote with raw (that content's whole view), else raw decoded.
func (s *Service) outlineOf(ent *summaryEntry, raw []byte, made *Outline) (*Outline, error) {
	if o := ent.outline.outline.Load(); o != nil {
		return o, nil
	}
	ent.outline.decoding.Lock()
	o := ent.outline.outline.Load()
	if o == nil && made != nil {
		o = made
		ent.outline.outline.Store(o)
	}
	if o == nil {
		var err error
		if o, err = werkbaum.DecodeOutline(raw); err != nil {
			ent.outline.decoding.Unlock()
			return nil, err
		}
		ent.outline.outline.Store(o)
	}
	ent.outline.decoding.Unlock()
	s.keepOutline(ent)
	return o, nil
}

// keepOutline makes ent the latest content with a kept outline, dropping the outline of
// the oldest beyond outlinesKept.
func (s *Service) keepOutline(ent *summaryEntry) {
	s.cache.mu.Lock()
	defer s.cache.mu.Unlock()
	kept := slices.DeleteFunc(s.cache.outlines, func(e *summaryEntry) bool { return e == ent })
	kept = append(kept, ent)
	for len(kept) > outlinesKept {
		kept[0].outline.outline.Store(nil)
		kept = slices.Delete(kept, 0, 1)
	}
	s.cache.outlines = kept
}

// DropOutlines forgets every kept outline and returns how many it dropped; the first reader
// of a content's outline then takes it from the engine or decodes the view again
// (outlineOf). The daemon calls it with werkbaum.Engine.ShedIdle once idle: the engine's
// cache and this store hold the same outlines, so only both letting go frees them.
func (s *Service) DropOutlines() int {
	s.cache.mu.Lock()
	defer s.cache.mu.Unlock()
	n := len(s.cache.outlines)
	for _, ent := range s.cache.outlines {
		ent.outline.outline.Store(nil)
	}
	s.cache.outlines = nil
	return n
}

// dropOutline forgets ent's outline and its place among the kept ones; the caller holds
// c.mu.
func (c *cache) dropOutline(ent *summaryEntry) {
	ent.outline.outline.Store(nil)
	c.outlines = slices.DeleteFunc(c.outlines, func(e *summaryEntry) bool { return e == ent })
}
