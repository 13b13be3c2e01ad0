package api

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"talkd/internal/werkbaum"
	"talkd/internal/werkbaum/plans"
)

// The plan tools of ARCHITECTURE §5.1, each one small function over its argument and
// result types; the types are the tools' schemas (schema.go).

var (
	readOnly  = ToolAnnotations{ReadOnlyHint: Hint(true), OpenWorldHint: Hint(false)}
	readWrite = ToolAnnotations{ReadOnlyHint: Hint(false), DestructiveHint: Hint(false), IdempotentHint: Hint(true), OpenWorldHint: Hint(false)}
)

// registerPlanTools adds the plan tools in their documented order. The status and size
// words in their schemas and descriptions come from v, the vocabulary the notation engine
// exports (js/25_vocabulary.js), so they are exactly what the engine accepts. It returns
// the tools' planTools, which the plan resource reads its pages with.
func registerPlanTools(s *Server, p Plans, v werkbaum.Vocabulary) planTools {
	pt := planTools{s: s, p: p, results: newResultCache(resultCacheBudget)}
	s.planResults = pt.results
	AddTool(s, ToolSpec[noArgs, plansListOut]{
		Name: "plans_list", Title: "List plans",
		Description: "Lists the project plans (Werkbaum) you may use, with key, access, revision and counts. Start here, then werkbaum_inspect.",
		Annotations: readOnly,
		Heavy:       true, // a summary per plan comes from the engine
		Call:        pt.list,
	})
	AddTool(s, ToolSpec[readIn, readOut]{
		Name: "werkbaum_read", Title: "Read a plan",
		Description: "A plan's text, after its base {revision, checksum}: every write needs that base. Pages of about " +
			"24,000 characters; from/to read lines, id a node's subtree.",
		Annotations: readOnly,
		Call:        pt.read,
	})
	AddTool(s, ToolSpec[inspectIn, inspectOut]{
		Name: "werkbaum_inspect", Title: "Inspect a plan",
		Description: "A plan's status at a glance, as the notation computes it (trust it): a line per node (line, #id, label, " +
			"status, size, people, deps), the warnings, the cheapest path. Large plans are cut; the answer says how to get " +
			"the rest.",
		Annotations: readOnly,
		Heavy:       true, // the engine, and an answer of up to hundreds of KB
		Call:        pt.inspect,
	})
	addWriteTool(pt, "werkbaum_write", "Write a plan's whole text",
		"Replaces a plan's whole text; for small changes use the node verbs.", writeVerb)
	addWriteTool(pt, "werkbaum_apply_ops", "Apply line operations",
		"Edits lines of the base text: insert, replace or delete at 0-based indexes.", applyOpsVerb)
	addWriteTool(pt, "werkbaum_set_status", "Set a node's status", setStatusDescription(v), setStatusVerb,
		PropertyEnum{Path: []string{"status"}, Values: v.StatusArguments()})
	addWriteTool(pt, "werkbaum_add_node", "Add a node",
		"Adds a node line (unindented, e.g. \"- [ ] #t: Token check (S) @anna\") as last child of parent (empty: a root) or after the sibling after.", addNodeVerb)
	addWriteTool(pt, "werkbaum_move_node", "Move a node",
		"Moves a node with its subtree under parent (last child, or after the sibling after).", moveNodeVerb)
	addWriteTool(pt, "werkbaum_set_size", "Set a node's size",
		"Sets the size token of a node ("+strings.Join(v.Sizes, ", ")+"), or removes it with size null.", setSizeVerb,
		PropertyEnum{Path: []string{"size"}, Values: v.Sizes})
	addWriteTool(pt, "werkbaum_remove_node", "Remove or discard a node",
		"discard true marks the node [-]; false deletes it with its subtree.", removeNodeVerb)
	AddTool(s, ToolSpec[operationIn, operationOut]{
		Name: "operation_get", Title: "What became of a write",
		Description: "What became of a write whose answer was lost, by its request_id: applied, rejected, conflict, or " +
			"unknown (safe to send again).",
		Annotations: readOnly,
		Call:        pt.operation,
	})
	return pt
}

// setStatusDescription names the status arguments of werkbaum_set_status: "an English key
// (idea, planned, …, or neutral to remove the box), a German key, or a box code (?, space, …)".
func setStatusDescription(v werkbaum.Vocabulary) string {
	return "Sets the status box of the node with this id: an English key (" + strings.Join(v.Keys(), ", ") +
		", or " + v.Neutral[0] + " to remove the box), a German key, or a box code (" + v.CodeList(", ") + ")."
}

// PropertyEnum names a string property of a tool's input schema (Path through nested
// objects; arrays are stepped through to their items, and a nullable property keeps null,
// the enum going on its string branch) and the values it allows.
type PropertyEnum struct {
	Path   []string
	Values []string
}

// setEnum sets the enum of the property e names in schema, before the tool is registered.
// A path that names no string property is a wiring mistake: AddTool panics on it.
func setEnum(schema map[string]any, e PropertyEnum) error {
	node := schema
	for _, name := range e.Path {
		props, _ := valueSchema(node)["properties"].(map[string]any)
		next, ok := props[name].(map[string]any)
		if !ok {
			return fmt.Errorf("no such property")
		}
		node = next
	}
	target := valueSchema(node)
	if target["type"] != "string" || len(e.Values) == 0 {
		return fmt.Errorf("not a string, or no values given")
	}
	enum := make([]any, len(e.Values))
	for k, val := range e.Values {
		enum[k] = val
	}
	target["enum"] = enum
	return nil
}

// valueSchema is the schema a value of s must meet once null is set aside and arrays are
// stepped into: the non-null branch of a nullable anyOf, the items of an array.
func valueSchema(s map[string]any) map[string]any {
	for {
		if branches, ok := s["anyOf"].([]any); ok {
			for _, b := range branches {
				if m, ok := b.(map[string]any); ok && m["type"] != "null" {
					s = m
					break
				}
			}
		}
		items, ok := s["items"].(map[string]any)
		if s["type"] != "array" || !ok {
			return s
		}
		s = items
	}
}

// planTools holds what the plan tools share.
type planTools struct {
	s *Server
	p Plans
	// results holds the encoded inspect results, one per plan and option set.
	results *resultCache
}

// --- argument and result types ---

type noArgs struct{}

type plansListOut struct {
	Plans []PlanInfo `json:"plans"`
}

type inspectIn struct {
	Plan    string   `json:"plan" desc:"plan key"`
	ID      string   `json:"id,omitempty" desc:"a node id: only its subtree"`
	Include []string `json:"include,omitempty" enum:"tree,warnings,path" desc:"default all"`
	Depth   *int     `json:"depth,omitempty" minimum:"0" desc:"levels below the top (default: what fits)"`
	From    int      `json:"from,omitempty" minimum:"0" desc:"first plan line, to go on after a cut"`
	Detail  string   `json:"detail,omitempty" enum:"compact,full" desc:"full: every field as JSON (large)"`
}

// inspectOut is werkbaum_inspect's answer, in one of two shapes. By default {base,
// compact}: the compact reading (mcp_inspect_compact.go), with its own text copy made for
// reading. With detail "full" {base, nodes, warnings, path}: the engine's view
// (internal/werkbaum/js/55_inspect.js, and the Go engine's equal node records), spliced
// in as it is, never decoded and encoded again (it is up to MBs); its text copy is the
// same JSON, so that tools/call result is a function of the store's answer alone, encoded
// once per answer (resultCache). test/schema_test.go validates real answers of both
// shapes, the upstream examples included, against this schema.
type inspectOut struct {
	Base    plans.Base      `json:"base"`
	Compact *compactReading `json:"compact,omitempty" desc:"the compact reading (detail compact, the default)"`
	// The full view's records are declared shallow: their field schemas (inspectNode,
	// inspectPath, NOTATION.md §28) were 3 KB of every tools/list, which hosts send with
	// every request and do not show their model.
	Nodes    []inspectNode      `json:"nodes,omitempty" shallow:"true" desc:"the nodes in document order (tree)"`
	Warnings []werkbaum.Warning `json:"warnings,omitempty" shallow:"true" desc:"the warnings, with lines where they have one"`
	Path     *inspectPath       `json:"path,omitempty" shallow:"true" desc:"the cheapest path"`

	view   json.RawMessage // the store's {base, nodes, warnings, path}, shared with its cache
	result []byte          // the encoded tools/call result of view (shared; nil = encode now)
	text   string          // the compact reading's text copy (compact answers only)
}

// inspectNode is one node of the inspect view; null where the node has no such value
// (no id, no status box, a root's parent, values of nodes out of view).
type inspectNode struct {
	Line            int      `json:"line"`
	ParentLine      *int     `json:"parentLine"`
	Depth           int      `json:"depth"`
	ID              *string  `json:"id"`
	Label           string   `json:"label"`
	Gate            string   `json:"gate" desc:"the node's own gate: and (also for + and no gate), or, xor"`
	Optional        bool     `json:"optional"`
	Status          *string  `json:"status"`
	EffectiveStatus *string  `json:"effectiveStatus"`
	Size            *string  `json:"size"`
	AssumedSize     *string  `json:"assumedSize"`
	People          []string `json:"people"`
	Keywords        []string `json:"keywords"`
	Deps            []string `json:"deps"`
	URL             *string  `json:"url"`
	Desc            *string  `json:"desc"`
	TaigaSlug       *string  `json:"taigaSlug"`
	TicketRef       *string  `json:"ticketRef"`
	Focus           bool     `json:"focus"`
	InView          bool     `json:"inView"`
	Needed          bool     `json:"needed"`
	Station         bool     `json:"station"`
}

// inspectPath is the cheapest path of the inspect view.
type inspectPath struct {
	Exact              bool               `json:"exact"`
	Needed             []int              `json:"needed" desc:"lines of the needed nodes"`
	Stations           []int              `json:"stations" desc:"lines of the stations, in document order"`
	Cost               float64            `json:"cost"`
	AssigneeLoads      map[string]float64 `json:"assigneeLoads"`
	OverloadedAssignee *werkbaum.Overload `json:"overloadedAssignee"`
}

// toolResult is the whole tools/call result: the view as structured content and as its
// text copy.
func (o inspectOut) toolResult() []byte {
	if o.Compact != nil {
		body, err := json.Marshal(struct {
			Base    plans.Base      `json:"base"`
			Compact *compactReading `json:"compact"`
		}{o.Base, o.Compact})
		if err != nil { // plain strings and numbers: cannot fail
			panic(fmt.Sprintf("api: encoding a compact reading: %v", err))
		}
		out := []byte(`{"content":[{"type":"text","text":`)
		out = appendJSONString(out, o.text)
		out = append(out, `}],"structuredContent":`...)
		out = append(out, body...)
		return endResult(append(out, '}'))
	}
	if o.result != nil {
		return o.result
	}
	return encodeViewResult(o.view)
}

// baseArg is a write's base: the {revision, checksum} of the caller's last read.
type baseArg struct {
	Revision uint64 `json:"revision,omitempty"`
	Checksum string `json:"checksum" pattern:"^[0-9a-f]{64}$"`
}

// writeArgs are the arguments every write tool shares.
// Their descriptions are short: every write tool repeats them in tools/list, which a host
// pays for in every request; the guide and werkbaum_read's description say the rest.
type writeArgs struct {
	Plan          string   `json:"plan" desc:"plan key"`
	Base          *baseArg `json:"base" desc:"from your last read or write"`
	RequestID     string   `json:"request_id" minLength:"1" maxLength:"256" desc:"new per change; resend to retry safely"`
	AllowWarnings bool     `json:"allowWarnings,omitempty" desc:"accept new warnings"`
	AllowProd     bool     `json:"allowProd,omitempty" desc:"allow a new [^]"`
	Agent         string   `json:"agent,omitempty" desc:"your name"`
}

// writeOut is every write tool's answer: the new base first and the warning delta. The
// plan's whole warning list (716 for a 10,000-node plan) is left to werkbaum_inspect;
// the answer counts it.
type writeOut struct {
	Base         plans.Base         `json:"base"`
	Revision     uint64             `json:"revision"`
	Changed      bool               `json:"changed"`
	Replayed     bool               `json:"replayed,omitempty"`
	WarningCount int                `json:"warningCount" desc:"warnings in the plan now"`
	Added        []werkbaum.Warning `json:"added" shallow:"true" desc:"new warnings"`
	Removed      []werkbaum.Warning `json:"removed" shallow:"true" desc:"warnings gone"`
	Mirror       string             `json:"mirror,omitempty"`
}

// noWarnings is ws, or [] for nil (nothing changed, a journal replay): the answer's
// lists are always arrays.
func noWarnings(ws []werkbaum.Warning) []werkbaum.Warning {
	if ws == nil {
		return []werkbaum.Warning{}
	}
	return ws
}

type writeIn struct {
	writeArgs
	Text *string `json:"text" desc:"the plan's new text"`
}

// opArg is one line operation of werkbaum_apply_ops.
type opArg struct {
	Op    string   `json:"op" enum:"insert,replace,delete"`
	Index int      `json:"index" desc:"0-based line in the base text"`
	Count *int     `json:"count,omitempty" desc:"lines replaced or deleted (default 1)"`
	Lines []string `json:"lines,omitempty"`
}

type applyOpsIn struct {
	writeArgs
	Ops []opArg `json:"ops" desc:"sorted by index, not overlapping"`
}

// setStatusIn: the enum of status is the engine's status arguments (registerPlanTools).
type setStatusIn struct {
	writeArgs
	ID     string `json:"id" desc:"the node's id (without #)"`
	Status string `json:"status" desc:"a status key (e.g. done) or box code (e.g. x)"`
}

type addNodeIn struct {
	writeArgs
	Parent string `json:"parent" desc:"id of the parent node; empty for a root"`
	Line   string `json:"line" desc:"the node line without indentation"`
	After  string `json:"after,omitempty" desc:"id of the sibling to insert after"`
}

type moveNodeIn struct {
	writeArgs
	ID     string `json:"id" desc:"the node's id (without #)"`
	Parent string `json:"parent" desc:"id of the new parent; empty for a root"`
	After  string `json:"after,omitempty" desc:"id of the sibling to move after"`
}

// setSizeIn: the enum of size is the engine's sizes (registerPlanTools).
type setSizeIn struct {
	writeArgs
	ID   string  `json:"id" desc:"the node's id (without #)"`
	Size *string `json:"size" nullable:"true" desc:"the new size, or null to remove it"`
}

type removeNodeIn struct {
	writeArgs
	ID      string `json:"id" desc:"the node's id (without #)"`
	Discard *bool  `json:"discard" desc:"true: mark [-]; false: delete with subtree"`
}

type operationIn struct {
	Plan      string `json:"plan" desc:"plan key"`
	RequestID string `json:"request_id" desc:"the write's request_id"`
}

// operationOut is what operation_get answers in each state: applied (tool, author, at,
// revision, result), rejected (tool, author, at, error, result), conflict, unknown.
type operationOut struct {
	RequestID  string        `json:"request_id"`
	State      string        `json:"state" enum:"applied,rejected,conflict,unknown"`
	Tool       string        `json:"tool,omitempty" desc:"the write tool that was called"`
	Author     *plans.Author `json:"author,omitempty"`
	At         *time.Time    `json:"at,omitempty"`
	Revision   uint64        `json:"revision,omitempty" desc:"the revision the write produced"`
	Result     any           `json:"result,omitempty" type:"object" desc:"the recorded answer of the write"`
	Error      string        `json:"error,omitempty" desc:"why it was rejected"`
	InProgress bool          `json:"inProgress,omitempty" desc:"the write has not settled yet"`
}

// --- the tools ---

func (pt planTools) list(ctx context.Context, caller Caller, _ noArgs, _ json.RawMessage) (plansListOut, string, *ToolError) {
	list := pt.s.planSummaries(ctx, caller, pt.p)
	var b strings.Builder
	for _, pl := range list {
		switch pl.Analysis {
		case "pending":
			fmt.Fprintf(&b, "%s (%s): revision %d, nodes and warnings still being counted\n", pl.Key, pl.Access, pl.Revision)
		case "failed":
			fmt.Fprintf(&b, "%s (%s): revision %d, not analysed: %s\n", pl.Key, pl.Access, pl.Revision, pl.Error)
		default:
			fmt.Fprintf(&b, "%s (%s): revision %d, %d nodes, %d warnings\n", pl.Key, pl.Access, pl.Revision, pl.Nodes, pl.Warnings)
		}
		if pl.Document != "" {
			fmt.Fprintf(&b, "  document: %s\n", pl.Document)
		}
	}
	if len(list) == 0 {
		b.WriteString("no plans are configured for you\n")
	}
	return plansListOut{Plans: list}, b.String(), nil
}

func (pt planTools) inspect(ctx context.Context, caller Caller, in inspectIn, _ json.RawMessage) (inspectOut, string, *ToolError) {
	if err := planArg(caller, pt.p, in.Plan, false); err != nil {
		return inspectOut{}, "", toolErrorOf(err)
	}
	for _, inc := range in.Include {
		if inc != "tree" && inc != "warnings" && inc != "path" {
			return inspectOut{}, "", toolErrorOf(fieldError("include", fmt.Sprintf(`field "include" may hold only tree, warnings and path, not %q`, inc)))
		}
	}
	id := strings.TrimPrefix(in.ID, "#")
	if in.Detail != "full" {
		return pt.inspectCompact(ctx, in, id)
	}
	got, err := pt.p.Inspect(ctx, in.Plan, werkbaum.InspectOptions{ID: id, Include: in.Include})
	if err != nil {
		return inspectOut{}, "", planFailure(err)
	}
	// The store's cached answer, base included, sent as it is; its text copy (the same
	// JSON, escaped) is encoded once per answer, not on every hit.
	slot := inspectSlot(in.Plan, id, in.Include)
	out := inspectOut{Base: got.Base, view: got.JSON, result: pt.results.viewResult(slot, got.JSON)}
	return out, "", nil
}

// inspectCompact answers the compact reading (mcp_inspect_compact.go), made from the
// store's cached full view of the whole plan, whatever the subtree, depth or start line.
func (pt planTools) inspectCompact(ctx context.Context, in inspectIn, id string) (inspectOut, string, *ToolError) {
	if in.Depth != nil && *in.Depth < 0 {
		return inspectOut{}, "", toolErrorOf(fieldError("depth", `field "depth" must be 0 or more`))
	}
	if in.From < 0 {
		return inspectOut{}, "", toolErrorOf(fieldError("from", `field "from" must be a plan line (1 or more)`))
	}
	got, err := pt.p.Outline(ctx, in.Plan)
	if err != nil {
		return inspectOut{}, "", planFailure(err)
	}
	m := compactModelOf(got.Outline)
	a := compactArgs{plan: in.Plan, id: id, depth: in.Depth, from: in.From, tree: len(in.Include) == 0,
		warnings: len(in.Include) == 0, path: len(in.Include) == 0}
	for _, inc := range in.Include {
		switch inc {
		case "tree":
			a.tree = true
		case "warnings":
			a.warnings = true
		case "path":
			a.path = true
		}
	}
	r, text, err := m.render(got.Base, a)
	if err != nil {
		return inspectOut{}, "", toolErrorOf(fieldError("id", err.Error()+"; werkbaum_inspect without id lists the ids"))
	}
	return inspectOut{Base: got.Base, Compact: r, text: text}, "", nil
}

func (pt planTools) operation(ctx context.Context, caller Caller, in operationIn, _ json.RawMessage) (operationOut, string, *ToolError) {
	if err := planArg(caller, pt.p, in.Plan, false); err != nil {
		return operationOut{}, "", toolErrorOf(err)
	}
	if in.RequestID == "" {
		return operationOut{}, "", toolErrorOf(fieldError("request_id", `field "request_id" is required`))
	}
	st, err := pt.p.Operation(ctx, in.Plan, caller.ID, in.RequestID)
	if err != nil {
		return operationOut{}, "", planFailure(err)
	}
	out := operationOut{RequestID: st.RequestID, State: st.State, Tool: st.Tool, Author: st.Author, At: st.At,
		Revision: st.Revision, Error: st.Error, InProgress: st.InProgress}
	if len(st.Result) > 0 {
		out.Result = st.Result
	}
	text := st.State
	if st.Revision > 0 {
		text += fmt.Sprintf(" (revision %d)", st.Revision)
	}
	if st.Error != "" {
		text += ": " + st.Error
	}
	return out, text, nil
}

// addWriteTool registers one write verb: verb checks the verb's own arguments and builds
// it; the shared arguments, the grant and the store call are the same for all.
func addWriteTool[In any](pt planTools, name, title, desc string, verb func(*In) (*writeArgs, werkbaum.Verb, *Error), enums ...PropertyEnum) {
	AddTool(pt.s, ToolSpec[In, writeOut]{
		Name: name, Title: title, InputEnums: enums,
		Description: desc + " Needs base and a new request_id; answers the new base.",
		Annotations: readWrite,
		// {base, revision, changed, replayed?, warningCount, added, removed, mirror?}: the
		// guide documents it; declared seven times it was a fifth of tools/list.
		UndeclaredOutput: true,
		// Not heavy: a write's CPU is one engine call (Engine.Edit), bounded by the engine's runtime
		// pool; the rest of its time is its plan's lane and fsyncs. A heavy-call slot
		// held across those capped writes on different plans at GOMAXPROCS at once.
		Heavy: false,
		Call: func(ctx context.Context, caller Caller, in In, raw json.RawMessage) (writeOut, string, *ToolError) {
			w, v, err := verb(&in)
			if err == nil {
				err = w.check(caller, pt.p)
			}
			if err != nil {
				return writeOut{}, "", toolErrorOf(err)
			}
			agent := cleanAgent(w.Agent)
			if agent == "" {
				agent = caller.Agent
			}
			res, werr := pt.p.Write(ctx, w.Plan, plans.WriteRequest{
				Tool: name, RequestID: w.RequestID, ArgsHash: argsHash(name, raw),
				Base: plans.Base{Revision: w.Base.Revision, Checksum: w.Base.Checksum}, Verb: v,
				Guard:  werkbaum.GuardOptions{AllowWarnings: w.AllowWarnings, AllowProd: w.AllowProd},
				Author: plans.Author{Client: caller.ID, Agent: agent},
			})
			if werr != nil {
				var conflict *plans.ConflictError
				if errors.As(werr, &conflict) {
					return writeOut{}, "", pt.conflictFailure(ctx, w.Plan, plans.Base{Revision: w.Base.Revision, Checksum: w.Base.Checksum}, conflict)
				}
				return writeOut{}, "", planFailure(werr)
			}
			out := writeOut{Base: res.Base, Revision: res.Revision, Changed: res.Changed, Replayed: res.Replayed,
				WarningCount: len(res.Warnings), Added: noWarnings(res.Added), Removed: noWarnings(res.Removed), Mirror: res.Mirror}
			return out, writeSummary(&out), nil
		},
	})
}

func writeVerb(a *writeIn) (*writeArgs, werkbaum.Verb, *Error) {
	if a.Text == nil {
		return &a.writeArgs, nil, fieldError("text", `field "text" is required: the plan's new text`)
	}
	return &a.writeArgs, werkbaum.Write{Text: *a.Text}, nil
}

func applyOpsVerb(a *applyOpsIn) (*writeArgs, werkbaum.Verb, *Error) {
	if len(a.Ops) == 0 {
		return &a.writeArgs, nil, fieldError("ops", `field "ops" is required: a non-empty list of line operations`)
	}
	ops := make([]werkbaum.Op, len(a.Ops))
	for i, o := range a.Ops {
		ops[i] = werkbaum.Op{Op: o.Op, Index: o.Index, Count: o.Count, Lines: o.Lines}
	}
	return &a.writeArgs, werkbaum.ApplyOps{Ops: ops}, nil
}

func setStatusVerb(a *setStatusIn) (*writeArgs, werkbaum.Verb, *Error) {
	if a.ID == "" {
		return &a.writeArgs, nil, fieldError("id", `field "id" is required`)
	}
	return &a.writeArgs, werkbaum.SetStatus{ID: a.ID, Status: a.Status}, nil
}

func addNodeVerb(a *addNodeIn) (*writeArgs, werkbaum.Verb, *Error) {
	if strings.TrimSpace(a.Line) == "" || strings.ContainsAny(a.Line, "\r\n") {
		return &a.writeArgs, nil, fieldError("line", `field "line" must be one non-empty node line`)
	}
	return &a.writeArgs, werkbaum.AddNode{Parent: a.Parent, Line: a.Line, After: a.After}, nil
}

func moveNodeVerb(a *moveNodeIn) (*writeArgs, werkbaum.Verb, *Error) {
	if a.ID == "" {
		return &a.writeArgs, nil, fieldError("id", `field "id" is required`)
	}
	return &a.writeArgs, werkbaum.MoveNode{ID: a.ID, Parent: a.Parent, After: a.After}, nil
}

func setSizeVerb(a *setSizeIn) (*writeArgs, werkbaum.Verb, *Error) {
	if a.ID == "" {
		return &a.writeArgs, nil, fieldError("id", `field "id" is required`)
	}
	return &a.writeArgs, werkbaum.SetSize{ID: a.ID, Size: a.Size}, nil
}

func removeNodeVerb(a *removeNodeIn) (*writeArgs, werkbaum.Verb, *Error) {
	if a.ID == "" {
		return &a.writeArgs, nil, fieldError("id", `field "id" is required`)
	}
	if a.Discard == nil {
		return &a.writeArgs, nil, fieldError("discard", `field "discard" is required: true marks the node [-], false deletes it`)
	}
	return &a.writeArgs, werkbaum.RemoveNode{ID: a.ID, Discard: *a.Discard}, nil
}

func (w *writeArgs) check(caller Caller, p Plans) *Error {
	if err := planArg(caller, p, w.Plan, true); err != nil {
		return err
	}
	if w.Base == nil {
		return fieldError("base", `field "base" is required: the {revision, checksum} of your last read`)
	}
	if !checksumRe.MatchString(w.Base.Checksum) {
		return fieldError("base", `field "base.checksum" must be the 64-character SHA-256 hex of your last read`)
	}
	if w.RequestID == "" || len(w.RequestID) > 256 {
		return fieldError("request_id", `field "request_id" is required: a string of 1 to 256 bytes you choose, new for every change`)
	}
	return nil
}

// argsHash identifies a write's arguments apart from its request id (and the agent label),
// so a retry with the same arguments is recognised whatever the JSON key order.
func argsHash(tool string, raw json.RawMessage) string {
	var m map[string]any
	_ = json.Unmarshal(raw, &m)
	delete(m, "request_id")
	delete(m, "agent")
	canon, _ := json.Marshal(m)
	sum := sha256.Sum256(append([]byte(tool+"\x00"), canon...))
	return hex.EncodeToString(sum[:])
}

// decodeStrictArgs decodes tool arguments; absent arguments count as an empty object.
func decodeStrictArgs(raw json.RawMessage, v any) *Error {
	if len(strings.TrimSpace(string(raw))) == 0 || string(raw) == "null" {
		raw = json.RawMessage(`{}`)
	}
	return decodeStrict(raw, v)
}

// writeSummary is a write answer's text copy: the new base first (what the next write
// needs), then the warning delta.
func writeSummary(r *writeOut) string {
	var b strings.Builder
	switch {
	case r.Replayed:
		b.WriteString("already applied earlier")
	case r.Changed:
		b.WriteString("applied")
	default:
		b.WriteString("applied without change")
	}
	fmt.Fprintf(&b, "; base now {\"revision\":%d,\"checksum\":\"%s\"}: pass it to your next write with a new request_id", r.Base.Revision, r.Base.Checksum)
	fmt.Fprintf(&b, "\n%d warnings in the plan (%d new, %d gone)", r.WarningCount, len(r.Added), len(r.Removed))
	for _, w := range r.Added {
		fmt.Fprintf(&b, "\nnew warning: %s", describeWarning(w.Type, w.Line, w.Text))
	}
	for _, w := range r.Removed {
		fmt.Fprintf(&b, "\nwarning gone: %s", describeWarning(w.Type, w.Line, w.Text))
	}
	if r.Mirror != "" {
		b.WriteString("\nmirror: " + r.Mirror)
	}
	return b.String()
}

func describeWarning(typ string, line int, text string) string {
	if line > 0 {
		return fmt.Sprintf("line %d: %s (%s)", line, text, typ)
	}
	return fmt.Sprintf("%s (%s)", text, typ)
}

// planFailure turns a plan store error into a tool failure the agent can act on.
func planFailure(err error) *ToolError {
	var conflict *plans.ConflictError
	var refused *plans.RefusedError
	var rejected *plans.RejectedError
	var input *werkbaum.InputError
	switch {
	case errors.As(err, &conflict):
		base, text := conflict.Current.Base, conflict.Current.Text
		return &ToolError{Error: "conflict", Message: conflict.Error(), Conflict: true, Base: &base, Text: &text}
	case errors.As(err, &refused):
		// Nothing was written: the caller's base still holds, which the model needs to know
		// for its next step.
		return refusal("refused", refused.Error()+"; nothing was written, so your base is still current", &refused.Refusal)
	case errors.As(err, &rejected):
		return refusal("rejected", "rejected earlier, not done again: "+rejected.Message, rejected.Refusal)
	case errors.As(err, &input):
		return &ToolError{Error: input.Code, Message: input.Message}
	case errors.Is(err, plans.ErrRequestReused):
		return &ToolError{Error: "request_reused", Message: err.Error(), Field: "request_id"}
	}
	// Every other refusal as the document doors give it (plan_errors.go).
	e := planError(err)
	return &ToolError{Error: e.Code, Message: e.Message}
}

func refusal(code, msg string, r *werkbaum.Refusal) *ToolError {
	e := &ToolError{Error: code, Message: msg, Refused: true}
	if r != nil {
		e.Reason, e.Warnings, e.Switch, e.Lines = r.Reason, r.Warnings, r.Switch, r.Lines
	}
	return e
}
