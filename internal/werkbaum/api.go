package werkbaum

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// Checksum is the plan checksum of ARCHITECTURE §5: the SHA-256 of the file's bytes, in
// lowercase hex. It is computed in Go (the scripts have no crypto) and is what a write's
// base.checksum is compared with.
func Checksum(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// NotationChecksum is the checksum of NOTATION.md §25 ("sha256:" + hex of the SHA-256 of
// the text with CRLF and CR normalised to LF), the value the upstream editor and the
// examples' *.expected.json files carry. Analyze passes it to the scripts.
func NotationChecksum(text string) string {
	if strings.IndexByte(text, '\r') >= 0 {
		text = strings.ReplaceAll(text, "\r\n", "\n")
		text = strings.ReplaceAll(text, "\r", "\n")
	}
	sum := sha256.Sum256([]byte(text))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// timeoutFor is the deadline of a call that reads texts: Options.Timeout plus
// Options.TimeoutPerMiB per MiB of the largest text. The engine's work grows linearly with
// a plan (BenchmarkSizeRatio), so a fixed deadline that suits a hand-written plan cut off
// every call on plans far below the input limit (a 10,000-node write took 4 s, a 40,000-node
// inspect 6 s of CPU on a busy two-core machine); the deadline now grows with the input, and
// a runaway call still costs one error after a bounded time (at the 2 MiB limit the
// daemon's 5 s become 25 s). The largest text, not their sum: of a guard's two texts the
// old one is usually remembered from the agent's read (js/05_text.js Memo).
func (e *Engine) timeoutFor(texts []textArg) time.Duration {
	d := e.opts.Timeout
	if e.opts.TimeoutPerMiB <= 0 {
		return d
	}
	largest := 0
	for _, t := range texts {
		largest = max(largest, len(t.value))
	}
	return d + time.Duration(float64(e.opts.TimeoutPerMiB)*float64(largest)/(1<<20))
}

// AnalyzeOptions select the view of Analyze.
type AnalyzeOptions struct {
	// File is echoed as the result's "file" field.
	File string `json:"file,omitempty"`
	// ShowDiscarded keeps discarded root trees in the view (the editor drops them).
	ShowDiscarded bool `json:"showDiscarded,omitempty"`
}

// Analyze returns the full analysis object of NOTATION.md §28 (nodes with every derived
// field, warnings, the cheapest path, loads, folding). It is the format of the examples'
// *.expected.json and is meant for tests and tools; the MCP view is Inspect. The result is
// a private copy.
func (e *Engine) Analyze(ctx context.Context, text string, opts AnalyzeOptions) (json.RawMessage, error) {
	if err := e.checkSize("plan text", len(text)); err != nil {
		return nil, err
	}
	args := struct {
		Checksum      string `json:"checksum"`
		File          string `json:"file,omitempty"`
		ShowDiscarded bool   `json:"showDiscarded,omitempty"`
	}{NotationChecksum(text), opts.File, opts.ShowDiscarded}
	ent, err := e.cachedCall(ctx, "analyze", text, opts, func() (json.RawMessage, *Outline, error) {
		raw, err := e.call(ctx, "analyze", args, textArg{"text", text})
		return raw, nil, err
	}, nil)
	if err != nil {
		return nil, err
	}
	return bytes.Clone(ent.raw), nil
}

// InspectOptions select the part of a plan Inspect shows.
type InspectOptions struct {
	// ID limits the nodes to the subtree of the node with this id ("" = whole plan).
	ID string `json:"id,omitempty"`
	// Include is a subset of "tree", "warnings", "path" (empty = all three).
	Include []string `json:"include,omitempty"`
}

// Inspection is the MCP view of a plan (ARCHITECTURE §5.1 werkbaum_inspect): flat nodes in
// document order, the warnings and the cheapest path. Field names follow NOTATION.md §28.
type Inspection struct {
	Nodes    []Node    `json:"nodes,omitempty"`
	Warnings []Warning `json:"warnings,omitempty"`
	Path     *Path     `json:"path,omitempty"`
	// JSON is the engine's answer exactly as produced (field order kept), ready to be
	// sent as structured content. It is a private copy.
	JSON json.RawMessage `json:"-"`
}

// Node is one plan node in the inspect view (js/55_inspect.js). Lines are 1-based
// physical lines; a root has ParentLine 0. Status values are the English keys of
// NOTATION.md §9 ("" = neutral). Nodes under a dropped discarded root have InView false
// and empty model fields.
type Node struct {
	Line            int      `json:"line"`
	ParentLine      int      `json:"parentLine"`
	Depth           int      `json:"depth"`
	ID              string   `json:"id"`
	Label           string   `json:"label"`
	Gate            string   `json:"gate"` // and, or, xor (the node's own gate)
	ChildrenGate    string   `json:"childrenGate"`
	Optional        bool     `json:"optional"`
	Status          string   `json:"status"`
	EffectiveStatus string   `json:"effectiveStatus"`
	Held            bool     `json:"held"`
	Size            string   `json:"size"`
	AssumedSize     string   `json:"assumedSize"`
	OwnCost         int      `json:"ownCost"`
	People          []string `json:"people"`
	Keywords        []string `json:"keywords"`
	Deps            []string `json:"deps"`
	URL             string   `json:"url"`
	Desc            string   `json:"desc"`
	TaigaSlug       string   `json:"taigaSlug"`
	TicketRef       string   `json:"ticketRef"`
	Focus           bool     `json:"focus"`
	Fold            string   `json:"fold"`
	InView          bool     `json:"inView"`
	Needed          bool     `json:"needed"`
	Station         bool     `json:"station"`
}

// Warning is one notation warning (NOTATION.md §23). Line is 0 for line-less warnings
// (cheapApprox, assigneeOverload); the other fields are set per type.
type Warning struct {
	Type          string `json:"type"`
	Line          int    `json:"line,omitempty"`
	Text          string `json:"text,omitempty"`
	ID            string `json:"id,omitempty"`
	FirstLine     int    `json:"firstLine,omitempty"`
	Code          string `json:"code,omitempty"`
	Label         string `json:"label,omitempty"`
	Size          string `json:"size,omitempty"`
	Tag           string `json:"tag,omitempty"`
	Share         int    `json:"share,omitempty"`
	Stations      int    `json:"stations,omitempty"`
	TotalStations int    `json:"totalStations,omitempty"`
}

// Path is the cheapest path (NOTATION.md §20, §21): needed node lines ascending, stations
// in document order, the margin cost and the assignee loads.
type Path struct {
	Exact              bool               `json:"exact"`
	Needed             []int              `json:"needed"`
	Stations           []int              `json:"stations"`
	Cost               float64            `json:"cost"`
	AssigneeLoads      map[string]float64 `json:"assigneeLoads"`
	UnassignedLoad     float64            `json:"unassignedLoad"`
	AssigneeStations   map[string]int     `json:"assigneeStations,omitempty"`
	TotalStations      int                `json:"totalStations"`
	OverloadedAssignee *Overload          `json:"overloadedAssignee"`
}

// Overload names the assignee who carries strictly more than half of the path's work.
type Overload struct {
	Tag           string `json:"tag"`
	Share         int    `json:"share"`
	Stations      int    `json:"stations"`
	TotalStations int    `json:"totalStations"`
}

// Inspect returns the MCP view of a plan, optionally limited to a subtree and to some of
// its parts. Results are cached by the text's checksum and the options, so inspecting an
// unchanged plan again costs a hash and a copy; the returned value is the caller's own.
func (e *Engine) Inspect(ctx context.Context, text string, opts InspectOptions) (*Inspection, error) {
	ent, err := e.inspect(ctx, text, opts)
	if err != nil {
		return nil, err
	}
	typed, err := ent.typed()
	if err != nil {
		return nil, fmt.Errorf("%w: inspect: decode result: %v", ErrEngine, err)
	}
	out := typed.(*Inspection).clone()
	out.JSON = bytes.Clone(ent.raw)
	return out, nil
}

// InspectJSON is Inspect without the typed form: the engine's JSON, a private copy. It is
// the cheapest way to answer werkbaum_inspect.
func (e *Engine) InspectJSON(ctx context.Context, text string, opts InspectOptions) (json.RawMessage, error) {
	raw, err := e.InspectView(ctx, text, opts)
	if err != nil {
		return nil, err
	}
	return bytes.Clone(raw), nil
}

func (e *Engine) inspect(ctx context.Context, text string, opts InspectOptions) (*lruEntry, error) {
	if err := e.checkSize("plan text", len(text)); err != nil {
		return nil, err
	}
	args := struct {
		ID      string   `json:"id,omitempty"`
		Include []string `json:"include,omitempty"`
	}{opts.ID, opts.Include}
	// The script computes the view; Go writes its node records (view.go), and the outline
	// of a whole plan's view with them.
	whole := opts.ID == "" && len(opts.Include) == 0
	return e.cachedCall(ctx, "inspect", text, opts, func() (json.RawMessage, *Outline, error) {
		return e.callParts(ctx, args, text, whole)
	}, func(raw []byte) (any, error) {
		var in Inspection
		if err := json.Unmarshal(raw, &in); err != nil {
			return nil, err
		}
		return &in, nil
	})
}

// Warnings returns every notation warning of a plan in the editor's order (NOTATION.md
// §23), each with an English text.
func (e *Engine) Warnings(ctx context.Context, text string) ([]Warning, error) {
	if err := e.checkSize("plan text", len(text)); err != nil {
		return nil, err
	}
	ent, err := e.cachedCall(ctx, "warnings", text, nil, func() (json.RawMessage, *Outline, error) {
		raw, err := e.call(ctx, "warnings", struct{}{}, textArg{"text", text})
		return raw, nil, err
	}, func(raw []byte) (any, error) {
		var ws []Warning
		if err := json.Unmarshal(raw, &ws); err != nil {
			return nil, err
		}
		return ws, nil
	})
	if err != nil {
		return nil, err
	}
	typed, err := ent.typed()
	if err != nil {
		return nil, fmt.Errorf("%w: warnings: decode result: %v", ErrEngine, err)
	}
	return cloneWarnings(typed.([]Warning)), nil
}

// cachedCall answers a read-only method on text through the LRU cache: the key is the
// method, its options and the text's hash; produce runs the script on a miss. decode
// (optional) builds the typed form once per cache entry, when a caller first asks for it
// (lruEntry.typed). produce may give the answer's outline besides (inspect of a whole
// plan), which the entry keeps.
//
// Callers that miss the cache while the same key is being produced wait for that answer
// instead of producing it again (the plan follower's background analysis and an agent's
// inspect of the same new text, or several agents after one change: each would otherwise
// run the whole analysis, and on two cores slow the others down). ctx bounds the wait.
func (e *Engine) cachedCall(ctx context.Context, method, text string, opts any, produce func() (json.RawMessage, *Outline, error), decode func([]byte) (any, error)) (*lruEntry, error) {
	if e.cache == nil {
		raw, outline, err := produce()
		if err != nil {
			return nil, err
		}
		return &lruEntry{raw: raw, outline: outline, decode: decode}, nil
	}
	o, err := json.Marshal(opts)
	if err != nil {
		return nil, fmt.Errorf("werkbaum %s: encode options: %w", method, err)
	}
	sum := e.sums.of(text)
	key := method + "\x00" + string(o) + "\x00" + string(sum)
	for {
		if ent, ok := e.cache.get(key); ok {
			return ent, nil
		}
		f, first := e.flights.join(key)
		if !first {
			select {
			case <-f.done:
			case <-ctx.Done():
				return nil, fmt.Errorf("werkbaum %s: %w", method, ctx.Err())
			}
			if f.err == nil {
				return f.ent, nil
			}
			if !f.abandoned {
				return nil, f.err // the same input fails the same way for every caller
			}
			continue // its caller gave up (its context ended): produce it here
		}
		// Behind the memory cache, the disk's (Options.Persist): one lookup per flight.
		disk := e.diskKeyOf(method, o, sum)
		return e.fly(ctx, key, disk, f, e.persisted(ctx, disk, e.logComputed(method, o, sum, produce)), decode)
	}
}

// logComputed is produce with a debug line for each answer the scripts computed (not read
// from a cache): which text (its SHA-256, the plan store's checksum) and how long it took,
// so a log says which readings paid an analysis.
func (e *Engine) logComputed(method string, opts, textSum []byte, produce func() (json.RawMessage, *Outline, error)) func() (json.RawMessage, *Outline, error) {
	return func() (json.RawMessage, *Outline, error) {
		start := time.Now()
		raw, outline, err := produce()
		if err == nil {
			e.log.Debug("werkbaum: answer computed", "method", method, "options", string(opts),
				"text_sha256", hex.EncodeToString(textSum), "took", time.Since(start).Round(time.Microsecond))
		}
		return raw, outline, err
	}
}

// fly produces the answer of a flight this caller started and lands it, also when produce
// panics (a request's panic is recovered by net/http; its waiters must not wait forever).
func (e *Engine) fly(ctx context.Context, key string, disk *diskKey, f *flight, produce func() (json.RawMessage, *Outline, error), decode func([]byte) (any, error)) (*lruEntry, error) {
	f.err, f.abandoned = errFlightAbandoned, true // until produce returns
	defer e.flights.land(key, f)
	raw, outline, err := produce()
	if err == nil {
		f.ent = &lruEntry{key: key, raw: raw, outline: outline, disk: disk, decode: decode}
		e.cache.put(f.ent) // before the flight ends: a new caller finds one or the other
	}
	f.err, f.abandoned = err, err != nil && ctx.Err() != nil
	return f.ent, err
}

// Verb is one text→text edit of a plan. The concrete verbs are SetStatus, SetSize, AddNode,
// MoveNode, RemoveNode, ApplyOps and Write. Every verb leaves each line it does not own
// byte-identical and keeps the document's line endings and final newline.
//
// Nodes are addressed by id (the first node carrying it, NOTATION.md §14; a leading "#" is
// accepted) or by "line:N" for the node whose line starts at physical line N.
type Verb interface {
	// verb returns the script's verb name and its arguments.
	verb() (string, any)
}

// SetStatus sets a node's status box. Status is an English key of NOTATION.md §9 ("done"),
// a German key ("fertig"), a box character ("x"), or "neutral" to remove the box.
type SetStatus struct {
	ID     string `json:"id"`
	Status string `json:"status"`
}

// SetSize sets a node's size token (XS…XXL); a nil Size removes it.
type SetSize struct {
	ID   string  `json:"id"`
	Size *string `json:"size"`
}

// AddNode adds Line (a node line without indentation, e.g. "- [ ] Task #t (S)") as the last
// child of Parent, or right after its child After. An empty Parent adds a root.
type AddNode struct {
	Parent string `json:"parent"`
	Line   string `json:"line"`
	After  string `json:"after,omitempty"`
}

// MoveNode moves a node with its whole subtree, short descriptions and continuation lines
// under Parent (empty = to the roots), as its last child or right after its child After;
// indentation is adjusted. Description blocks stay where they are (they are bound by id).
type MoveNode struct {
	ID     string `json:"id"`
	Parent string `json:"parent"`
	After  string `json:"after,omitempty"`
}

// RemoveNode discards a node (Discard: its box becomes [-]) or deletes it with its subtree
// and the description blocks of the deleted nodes.
type RemoveNode struct {
	ID      string `json:"id"`
	Discard bool   `json:"discard"`
}

// Op is one line operation of NOTATION.md §25: indices are 0-based into the base lines
// (the text split on line breaks); ops are sorted and do not overlap.
type Op struct {
	Op    string   `json:"op"` // insert, replace or delete
	Index int      `json:"index"`
	Count *int     `json:"count,omitempty"`
	Lines []string `json:"lines,omitempty"`
}

// ApplyOps applies line operations. Lines that are copied keep their line endings; new
// lines get the document's.
type ApplyOps struct {
	Ops []Op `json:"ops"`
}

// Write replaces the whole text. Lines common to the old text's start and end keep their
// line endings; the rest gets the document's line ending.
type Write struct {
	Text string `json:"text"`
}

func (v SetStatus) verb() (string, any)  { return "setStatus", v }
func (v SetSize) verb() (string, any)    { return "setSize", v }
func (v AddNode) verb() (string, any)    { return "addNode", v }
func (v MoveNode) verb() (string, any)   { return "moveNode", v }
func (v RemoveNode) verb() (string, any) { return "removeNode", v }
func (v ApplyOps) verb() (string, any)   { return "applyOps", v }
func (v Write) verb() (string, any)      { return "write", v }

// Apply runs one verb on a plan text and returns the new text. A verb the text does not
// allow (unknown id, bad status…) fails with an *InputError. The plan store writes with
// Edit (the verb and its guards in one call); Apply and Guard are the plain path Edit is
// held to (TestEditEqualsApplyThenGuard) and the API for a verb or a guard on its own.
func (e *Engine) Apply(ctx context.Context, text string, v Verb) (string, error) {
	args, err := e.verbArgs(text, v)
	if err != nil {
		return "", err
	}
	return e.callText(ctx, "apply", args, textArg{"text", text})
}

// verbArgs checks a verb and the text it edits before any JavaScript runs and returns the
// arguments of the script's apply (and edit): {verb, args}.
func (e *Engine) verbArgs(text string, v Verb) (verbCall, error) {
	if v == nil {
		return verbCall{}, &InputError{Code: "badVerb", Message: "no verb given"}
	}
	if err := e.checkSize("plan text", len(text)); err != nil {
		return verbCall{}, err
	}
	// The scripts see text as UTF-16: invalid UTF-8 would come back with U+FFFD in lines
	// the verb does not own. Edits therefore take valid UTF-8 only.
	if err := checkUTF8("the plan text", text); err != nil {
		return verbCall{}, err
	}
	name, params := v.verb()
	switch p := params.(type) {
	case Write:
		if err := e.checkSize("new text", len(p.Text)); err != nil {
			return verbCall{}, err
		}
		if err := checkUTF8("the new text", p.Text); err != nil {
			return verbCall{}, err
		}
	case ApplyOps:
		n := 0
		for i, op := range p.Ops {
			for j, l := range op.Lines {
				n += len(l) + 1
				if err := checkUTF8(fmt.Sprintf("op %d line %d", i+1, j+1), l); err != nil {
					return verbCall{}, err
				}
			}
		}
		if err := e.checkSize("inserted lines", n); err != nil {
			return verbCall{}, err
		}
	case AddNode:
		if err := e.checkSize("node line", len(p.Line)); err != nil {
			return verbCall{}, err
		}
		if err := checkUTF8("the node line", p.Line); err != nil {
			return verbCall{}, err
		}
	}
	return verbCall{Verb: name, Args: params}, nil
}

// verbCall is the arguments of the script's apply: the verb's name and its parameters.
type verbCall struct {
	Verb string `json:"verb"`
	Args any    `json:"args"`
}

// checkUTF8 rejects text that is not valid UTF-8, naming the first bad line.
func checkUTF8(what, s string) error {
	if utf8.ValidString(s) {
		return nil
	}
	line := 1
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			break
		}
		if r == '\n' {
			line++
		}
		i += size
	}
	return &InputError{Code: "badEncoding", Message: fmt.Sprintf("%s is not valid UTF-8 (first bad byte on line %d); plans are edited as UTF-8 text", what, line)}
}

// GuardOptions are the switches that let a write through the guards.
type GuardOptions struct {
	AllowWarnings bool `json:"allowWarnings,omitempty"`
	AllowProd     bool `json:"allowProd,omitempty"`
}

// GuardResult is the verdict on a write (ARCHITECTURE §5 "Guards") plus the warning delta
// every write reports. Added and Removed compare warnings by identity, not by line (see
// js/70_guard.js), so lines shifting after an insert do not count as changes.
type GuardResult struct {
	OK       bool      `json:"ok"`
	Refused  *Refusal  `json:"refused,omitempty"`
	Added    []Warning `json:"added"`
	Removed  []Warning `json:"removed"`
	Warnings []Warning `json:"warnings"`
}

// Refusal says why a write was refused and which switch would allow it.
type Refusal struct {
	Reason   string    `json:"reason"`
	Warnings []Warning `json:"warnings"`
	// Switch is "allowWarnings" or "allowProd".
	Switch string `json:"switch"`
	// Lines are the lines of nodes that newly carry [^] (allowProd refusals).
	Lines []int `json:"lines,omitempty"`
}

// Guard compares a write's result with the text it replaces: new structural warnings are
// refused unless AllowWarnings, a node newly in production ([^]) unless AllowProd; content
// warnings pass and are reported.
func (e *Engine) Guard(ctx context.Context, oldText, newText string, opts GuardOptions) (*GuardResult, error) {
	if err := e.checkSize("old text", len(oldText)); err != nil {
		return nil, err
	}
	if err := e.checkSize("new text", len(newText)); err != nil {
		return nil, err
	}
	raw, err := e.call(ctx, "guard", opts, textArg{"old", oldText}, textArg{"new", newText})
	if err != nil {
		return nil, err
	}
	var res GuardResult
	if err := json.Unmarshal(raw, &res); err != nil {
		return nil, fmt.Errorf("%w: guard: decode result: %v", ErrEngine, err)
	}
	return &res, nil
}

func (in *Inspection) clone() *Inspection {
	out := &Inspection{Warnings: cloneWarnings(in.Warnings)}
	if in.Nodes != nil {
		out.Nodes = make([]Node, len(in.Nodes))
		for i, n := range in.Nodes {
			n.People = cloneSlice(n.People)
			n.Keywords = cloneSlice(n.Keywords)
			n.Deps = cloneSlice(n.Deps)
			out.Nodes[i] = n
		}
	}
	if in.Path != nil {
		p := *in.Path
		p.Needed = cloneSlice(p.Needed)
		p.Stations = cloneSlice(p.Stations)
		if p.AssigneeLoads != nil {
			m := make(map[string]float64, len(p.AssigneeLoads))
			for k, v := range p.AssigneeLoads {
				m[k] = v
			}
			p.AssigneeLoads = m
		}
		if p.AssigneeStations != nil {
			m := make(map[string]int, len(p.AssigneeStations))
			for k, v := range p.AssigneeStations {
				m[k] = v
			}
			p.AssigneeStations = m
		}
		if p.OverloadedAssignee != nil {
			o := *p.OverloadedAssignee
			p.OverloadedAssignee = &o
		}
		out.Path = &p
	}
	return out
}

func cloneWarnings(ws []Warning) []Warning { return cloneSlice(ws) }

func cloneSlice[T any](s []T) []T {
	if s == nil {
		return nil
	}
	return append(make([]T, 0, len(s)), s...)
}
