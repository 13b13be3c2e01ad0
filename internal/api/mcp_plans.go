package api

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strings"

	"talkd/internal/werkbaum"
	"talkd/internal/werkbaum/plans"
)

// Plans is what the MCP plan tools need of the plan store.
type Plans interface {
	Keys() []string
	Read(ctx context.Context, key string) (*plans.Snapshot, error)
	Inspect(ctx context.Context, key string, opts werkbaum.InspectOptions) (*plans.Inspected, error)
	Summarize(ctx context.Context, key string) plans.Summary
	Write(ctx context.Context, key string, req plans.WriteRequest) (*plans.WriteResult, error)
	Operation(ctx context.Context, key, requestID string) (*plans.OperationStatus, error)
}

// RegisterPlans adds the plan tools of ARCHITECTURE §5.1 to the MCP door and lets
// /status list the plans each caller may read.
func (s *Server) RegisterPlans(p Plans) {
	s.plans = p
	for _, t := range planTools(s, p) {
		s.RegisterTool(t)
	}
	s.registerPlanResources(p)
	s.mcp.setInstructions(instructions + planInstructions)
}

const planInstructions = " It also keeps Werkbaum plans: plans_list shows the plans you may use; werkbaum_read " +
	"gives the text and a base; werkbaum_inspect gives statuses, warnings and the cheapest path (trust it). " +
	"Change plans with the node verbs, passing the base of your last read and a new request_id each time; " +
	"on a conflict redo the change on the text it returns; resend the same request_id after a lost " +
	"connection. The notation is explained in the resource werkbaum://guide."

var checksumRe = regexp.MustCompile(`^[0-9a-f]{64}$`)

// planArg checks the plan key and the caller's grant.
func planArg(caller Caller, p Plans, key string, write bool) *Error {
	if key == "" {
		return fieldError("plan", `field "plan" is required: the key of a plan (see plans_list)`)
	}
	known := false
	for _, k := range p.Keys() {
		if k == key {
			known = true
			break
		}
	}
	if !known || !caller.CanRead(key) {
		// A plan the caller may not read is indistinguishable from one that does not exist.
		return fieldError("plan", fmt.Sprintf("unknown plan %q; plans_list shows the plans you may use", key))
	}
	if write && !caller.CanWrite(key) {
		return &Error{Status: http.StatusForbidden, Code: CodeForbidden, Field: "plan",
			Message: fmt.Sprintf("client %q has no write grant for plan %q", caller.ID, key)}
	}
	return nil
}

// writeArgs are the arguments every write tool shares.
type writeArgs struct {
	Plan          string      `json:"plan"`
	Base          *plans.Base `json:"base"`
	RequestID     string      `json:"request_id"`
	AllowWarnings bool        `json:"allowWarnings,omitempty"`
	AllowProd     bool        `json:"allowProd,omitempty"`
	Agent         string      `json:"agent,omitempty"`
}

func (w *writeArgs) common() *writeArgs { return w }

type writeTool interface{ common() *writeArgs }

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

func planTools(s *Server, p Plans) []Tool {
	ro := ToolAnnotations{ReadOnlyHint: Hint(true), OpenWorldHint: Hint(false)}
	rw := ToolAnnotations{ReadOnlyHint: Hint(false), DestructiveHint: Hint(false), IdempotentHint: Hint(true), OpenWorldHint: Hint(false)}
	tools := []Tool{
		{
			Name: "plans_list", Title: "List plans",
			Description:  "Lists the Werkbaum plans you may use: key, access (read or write), revision, node and warning counts.",
			InputSchema:  objectSchema(nil),
			OutputSchema: objectSchema(map[string]any{"plans": map[string]any{"type": "array", "items": map[string]any{"type": "object"}}}, "plans"),
			Annotations:  ro,
			Heavy:        true, // a file check per plan; the summaries are cached (plans.Summarize)
			Call: func(ctx context.Context, caller Caller, raw json.RawMessage) ToolResult {
				var args struct{}
				if err := decodeStrictArgs(raw, &args); err != nil {
					return ErrorResult(err)
				}
				list := s.planSummaries(ctx, caller, p)
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
				}
				if len(list) == 0 {
					b.WriteString("no plans are configured for you\n")
				}
				return JSONResult(map[string]any{"plans": list}, b.String())
			},
		},
		{
			Name: "werkbaum_read", Title: "Read a plan",
			Description: "Returns a plan's text and its base {revision, checksum}. Pass the base unchanged to every write; " +
				"a write on an older base fails as a conflict carrying the current text.",
			InputSchema:  objectSchema(map[string]any{"plan": planProp}, "plan"),
			OutputSchema: objectSchema(map[string]any{"text": str, "base": baseSchema, "lines": integer}, "text", "base", "lines"),
			Annotations:  ro,
			Call: func(ctx context.Context, caller Caller, raw json.RawMessage) ToolResult {
				var args struct {
					Plan string `json:"plan"`
				}
				if err := decodeStrictArgs(raw, &args); err != nil {
					return ErrorResult(err)
				}
				if err := planArg(caller, p, args.Plan, false); err != nil {
					return ErrorResult(err)
				}
				snap, err := p.Read(ctx, args.Plan)
				if err != nil {
					return planFailure(err)
				}
				return JSONResult(snap, snap.Text)
			},
		},
		{
			Name: "werkbaum_inspect", Title: "Inspect a plan",
			Description: "The notation's reading of a plan: per node id, label, line, gate, status and effective status " +
				"(through dependencies), size and assumed size, people, deps, description; all warnings with lines; the " +
				"cheapest path (needed nodes, stations in document order, assignee loads, overloaded assignee). " +
				"Trust it instead of re-deriving. id limits the tree to a subtree; include picks parts.",
			InputSchema: objectSchema(map[string]any{
				"plan": planProp,
				"id":   map[string]any{"type": "string", "description": "id of a node whose subtree to show (without #)"},
				"include": map[string]any{"type": "array", "items": map[string]any{"type": "string", "enum": []string{"tree", "warnings", "path"}},
					"description": "parts to return; default all"},
			}, "plan"),
			OutputSchema: objectSchema(map[string]any{"base": baseSchema, "nodes": arr, "warnings": arr, "path": obj}, "base"),
			Annotations:  ro,
			Heavy:        true, // the engine, and an answer of up to hundreds of KB
			Call: func(ctx context.Context, caller Caller, raw json.RawMessage) ToolResult {
				var args struct {
					Plan    string   `json:"plan"`
					ID      string   `json:"id,omitempty"`
					Include []string `json:"include,omitempty"`
				}
				if err := decodeStrictArgs(raw, &args); err != nil {
					return ErrorResult(err)
				}
				if err := planArg(caller, p, args.Plan, false); err != nil {
					return ErrorResult(err)
				}
				for _, inc := range args.Include {
					if inc != "tree" && inc != "warnings" && inc != "path" {
						return ErrorResult(fieldError("include", fmt.Sprintf(`field "include" may hold only tree, warnings and path, not %q`, inc)))
					}
				}
				in, err := p.Inspect(ctx, args.Plan, werkbaum.InspectOptions{ID: strings.TrimPrefix(args.ID, "#"), Include: args.Include})
				if err != nil {
					return planFailure(err)
				}
				// The store's cached answer, base included: shared, sent as it is.
				return JSONResult(in.JSON, string(in.JSON))
			},
		},
	}
	type verbTool struct {
		name, title, desc string
		props             map[string]any
		required          []string
		decode            func(raw json.RawMessage) (writeTool, werkbaum.Verb, *Error)
	}
	verbs := []verbTool{
		{"werkbaum_write", "Write a plan's whole text", "Replaces the whole text of a plan. Prefer the node verbs for small changes.",
			map[string]any{"text": str}, []string{"text"},
			func(raw json.RawMessage) (writeTool, werkbaum.Verb, *Error) {
				var a struct {
					writeArgs
					Text *string `json:"text"`
				}
				if err := decodeStrictArgs(raw, &a); err != nil {
					return nil, nil, err
				}
				if a.Text == nil {
					return &a.writeArgs, nil, fieldError("text", `field "text" is required: the plan's new text`)
				}
				return &a.writeArgs, werkbaum.Write{Text: *a.Text}, nil
			}},
		{"werkbaum_apply_ops", "Apply line operations", "Applies line operations to the base text: insert, replace or delete at a 0-based line index (ops sorted, not overlapping).",
			map[string]any{"ops": map[string]any{"type": "array", "items": map[string]any{"type": "object", "properties": map[string]any{
				"op": map[string]any{"type": "string", "enum": []string{"insert", "replace", "delete"}}, "index": integer, "count": integer,
				"lines": map[string]any{"type": "array", "items": str}}, "required": []string{"op", "index"}}}}, []string{"ops"},
			func(raw json.RawMessage) (writeTool, werkbaum.Verb, *Error) {
				var a struct {
					writeArgs
					Ops []werkbaum.Op `json:"ops"`
				}
				if err := decodeStrictArgs(raw, &a); err != nil {
					return nil, nil, err
				}
				if len(a.Ops) == 0 {
					return &a.writeArgs, nil, fieldError("ops", `field "ops" is required: a non-empty list of line operations`)
				}
				return &a.writeArgs, werkbaum.ApplyOps{Ops: a.Ops}, nil
			}},
		{"werkbaum_set_status", "Set a node's status", "Sets the status box of the node with this id: an English key (idea, planned, highrisk, progress, skeleton, done, prod, discarded, or neutral to remove the box), a German key, or a box code (?, space, !, ~, /, x, ^, -).",
			map[string]any{"id": idProp, "status": str}, []string{"id", "status"},
			func(raw json.RawMessage) (writeTool, werkbaum.Verb, *Error) {
				var a struct {
					writeArgs
					ID     string `json:"id"`
					Status string `json:"status"`
				}
				if err := decodeStrictArgs(raw, &a); err != nil {
					return nil, nil, err
				}
				if a.ID == "" {
					return &a.writeArgs, nil, fieldError("id", `field "id" is required`)
				}
				return &a.writeArgs, werkbaum.SetStatus{ID: a.ID, Status: a.Status}, nil
			}},
		{"werkbaum_add_node", "Add a node", "Adds a node line (without indentation, e.g. \"- [ ] #t: Token check (S) @anna\") as the last child of parent, or right after its child after. An empty parent adds a root.",
			map[string]any{"parent": str, "line": str, "after": str}, []string{"parent", "line"},
			func(raw json.RawMessage) (writeTool, werkbaum.Verb, *Error) {
				var a struct {
					writeArgs
					Parent string `json:"parent"`
					Line   string `json:"line"`
					After  string `json:"after,omitempty"`
				}
				if err := decodeStrictArgs(raw, &a); err != nil {
					return nil, nil, err
				}
				if strings.TrimSpace(a.Line) == "" || strings.ContainsAny(a.Line, "\r\n") {
					return &a.writeArgs, nil, fieldError("line", `field "line" must be one non-empty node line`)
				}
				return &a.writeArgs, werkbaum.AddNode{Parent: a.Parent, Line: a.Line, After: a.After}, nil
			}},
		{"werkbaum_move_node", "Move a node", "Moves a node with its subtree, short descriptions and continuation lines under parent (as last child, or after its child after); indentation is adjusted.",
			map[string]any{"id": idProp, "parent": str, "after": str}, []string{"id", "parent"},
			func(raw json.RawMessage) (writeTool, werkbaum.Verb, *Error) {
				var a struct {
					writeArgs
					ID     string `json:"id"`
					Parent string `json:"parent"`
					After  string `json:"after,omitempty"`
				}
				if err := decodeStrictArgs(raw, &a); err != nil {
					return nil, nil, err
				}
				if a.ID == "" {
					return &a.writeArgs, nil, fieldError("id", `field "id" is required`)
				}
				return &a.writeArgs, werkbaum.MoveNode{ID: a.ID, Parent: a.Parent, After: a.After}, nil
			}},
		{"werkbaum_set_size", "Set a node's size", "Sets the size token of a node (XS, S, M, L, XL, XXL), or removes it with size null.",
			map[string]any{"id": idProp, "size": map[string]any{"type": []string{"string", "null"}, "enum": []any{"XS", "S", "M", "L", "XL", "XXL", nil}}}, []string{"id", "size"},
			func(raw json.RawMessage) (writeTool, werkbaum.Verb, *Error) {
				var a struct {
					writeArgs
					ID   string  `json:"id"`
					Size *string `json:"size"`
				}
				if err := decodeStrictArgs(raw, &a); err != nil {
					return nil, nil, err
				}
				if a.ID == "" {
					return &a.writeArgs, nil, fieldError("id", `field "id" is required`)
				}
				return &a.writeArgs, werkbaum.SetSize{ID: a.ID, Size: a.Size}, nil
			}},
		{"werkbaum_remove_node", "Remove or discard a node", "discard true marks the node [-] (kept, hidden); discard false deletes the node with its subtree and description block.",
			map[string]any{"id": idProp, "discard": map[string]any{"type": "boolean"}}, []string{"id", "discard"},
			func(raw json.RawMessage) (writeTool, werkbaum.Verb, *Error) {
				var a struct {
					writeArgs
					ID      string `json:"id"`
					Discard *bool  `json:"discard"`
				}
				if err := decodeStrictArgs(raw, &a); err != nil {
					return nil, nil, err
				}
				if a.ID == "" {
					return &a.writeArgs, nil, fieldError("id", `field "id" is required`)
				}
				if a.Discard == nil {
					return &a.writeArgs, nil, fieldError("discard", `field "discard" is required: true marks the node [-], false deletes it`)
				}
				return &a.writeArgs, werkbaum.RemoveNode{ID: a.ID, Discard: *a.Discard}, nil
			}},
	}
	for _, v := range verbs {
		props := map[string]any{
			"plan": planProp, "base": baseSchema,
			"request_id":    map[string]any{"type": "string", "minLength": 1, "maxLength": 256, "description": "your id for this change; a retry with the same id and arguments is answered without acting twice"},
			"allowWarnings": map[string]any{"type": "boolean", "description": "write even if the result has new structural warnings"},
			"allowProd":     map[string]any{"type": "boolean", "description": "allow a node to newly carry [^] (in production)"},
			"agent":         map[string]any{"type": "string", "description": "your name, for the plan's history"},
		}
		for k, val := range v.props {
			props[k] = val
		}
		v := v
		tools = append(tools, Tool{
			Name: v.name, Title: v.title,
			Description:  v.desc + " Needs base (from werkbaum_read) and a new request_id; answers the new base and the warning delta.",
			InputSchema:  objectSchema(props, append([]string{"plan", "base", "request_id"}, v.required...)...),
			OutputSchema: writeOutputSchema,
			Annotations:  rw,
			Heavy:        true, // the engine checks every write
			Call: func(ctx context.Context, caller Caller, raw json.RawMessage) ToolResult {
				wt, verb, err := v.decode(raw)
				if err != nil {
					return ErrorResult(err)
				}
				w := wt.common()
				if err := w.check(caller, p); err != nil {
					return ErrorResult(err)
				}
				agent := cleanAgent(w.Agent)
				if agent == "" {
					agent = caller.Agent
				}
				res, werr := p.Write(ctx, w.Plan, plans.WriteRequest{
					Tool: v.name, RequestID: w.RequestID, ArgsHash: argsHash(v.name, raw), Base: *w.Base, Verb: verb,
					Guard:  werkbaum.GuardOptions{AllowWarnings: w.AllowWarnings, AllowProd: w.AllowProd},
					Author: plans.Author{Client: caller.ID, Agent: agent},
				})
				if werr != nil {
					return planFailure(werr)
				}
				return JSONResult(res, writeSummary(res))
			},
		})
	}
	tools = append(tools, Tool{
		Name: "operation_get", Title: "What became of a write",
		Description: "Reports the outcome of a write by its request_id: applied, rejected, conflict, or unknown " +
			"(never received, or lost before it took effect: safe to send again), with the recorded result.",
		InputSchema:  objectSchema(map[string]any{"plan": planProp, "request_id": str}, "plan", "request_id"),
		OutputSchema: objectSchema(map[string]any{"request_id": str, "state": map[string]any{"type": "string", "enum": []string{"applied", "rejected", "conflict", "unknown"}}}, "request_id", "state"),
		Annotations:  ro,
		Call: func(ctx context.Context, caller Caller, raw json.RawMessage) ToolResult {
			var args struct {
				Plan      string `json:"plan"`
				RequestID string `json:"request_id"`
			}
			if err := decodeStrictArgs(raw, &args); err != nil {
				return ErrorResult(err)
			}
			if err := planArg(caller, p, args.Plan, false); err != nil {
				return ErrorResult(err)
			}
			if args.RequestID == "" {
				return ErrorResult(fieldError("request_id", `field "request_id" is required`))
			}
			st, err := p.Operation(ctx, args.Plan, args.RequestID)
			if err != nil {
				return planFailure(err)
			}
			text := st.State
			if st.Revision > 0 {
				text += fmt.Sprintf(" (revision %d)", st.Revision)
			}
			if st.Error != "" {
				text += ": " + st.Error
			}
			return JSONResult(st, text)
		},
	})
	return tools
}

// decodeStrictArgs decodes tool arguments; absent arguments count as an empty object.
func decodeStrictArgs(raw json.RawMessage, v any) *Error {
	if len(strings.TrimSpace(string(raw))) == 0 || string(raw) == "null" {
		raw = json.RawMessage(`{}`)
	}
	return decodeStrict(raw, v)
}

func writeSummary(r *plans.WriteResult) string {
	var b strings.Builder
	switch {
	case r.Replayed:
		fmt.Fprintf(&b, "already applied earlier: revision %d", r.Revision)
	case r.Changed:
		fmt.Fprintf(&b, "applied: revision %d", r.Revision)
	default:
		fmt.Fprintf(&b, "applied without change: revision %d", r.Revision)
	}
	fmt.Fprintf(&b, ", checksum %s; %d warnings (%d new, %d gone)", r.Base.Checksum, len(r.Warnings), len(r.Added), len(r.Removed))
	for _, w := range r.Added {
		fmt.Fprintf(&b, "\nnew warning: %s", warningLine(w))
	}
	if r.Mirror != "" {
		b.WriteString("\nmirror: " + r.Mirror)
	}
	return b.String()
}

func warningLine(w werkbaum.Warning) string {
	if w.Line > 0 {
		return fmt.Sprintf("line %d: %s (%s)", w.Line, w.Text, w.Type)
	}
	return fmt.Sprintf("%s (%s)", w.Text, w.Type)
}

// planFailure turns a plan store error into a tool error the agent can act on.
func planFailure(err error) ToolResult {
	var conflict *plans.ConflictError
	var refused *plans.RefusedError
	var rejected *plans.RejectedError
	var input *werkbaum.InputError
	switch {
	case errors.As(err, &conflict):
		return ToolResult{IsError: true, Content: []Content{TextContent(conflict.Error())},
			StructuredContent: map[string]any{"conflict": true, "base": conflict.Current.Base, "text": conflict.Current.Text}}
	case errors.As(err, &refused):
		return refusal(refused.Error(), &refused.Refusal)
	case errors.As(err, &rejected):
		return refusal("rejected earlier, not done again: "+rejected.Message, rejected.Refusal)
	case errors.As(err, &input):
		return ToolResult{IsError: true, Content: []Content{TextContent(input.Message)}, StructuredContent: map[string]any{"error": input.Code, "message": input.Message}}
	case errors.Is(err, plans.ErrRequestReused):
		return ToolResult{IsError: true, Content: []Content{TextContent(err.Error())}}
	case errors.Is(err, werkbaum.ErrTimeout):
		return ToolResult{IsError: true, Content: []Content{TextContent("the notation engine ran out of time on this plan; nothing was changed")}}
	case errors.Is(err, werkbaum.ErrTooLarge):
		return ToolResult{IsError: true, Content: []Content{TextContent("the plan or the new text is larger than the engine's input limit; nothing was changed")}}
	}
	return ToolResult{IsError: true, Content: []Content{TextContent(err.Error())}}
}

func refusal(msg string, r *werkbaum.Refusal) ToolResult {
	var b strings.Builder
	b.WriteString(msg)
	sc := map[string]any{"refused": true, "message": msg}
	if r != nil {
		for _, w := range r.Warnings {
			b.WriteString("\n" + warningLine(w))
		}
		sc["reason"], sc["warnings"], sc["switch"] = r.Reason, r.Warnings, r.Switch
		if len(r.Lines) > 0 {
			sc["lines"] = r.Lines
		}
	}
	return ToolResult{IsError: true, Content: []Content{TextContent(b.String())}, StructuredContent: sc}
}

// PlanInfo is one plan as a caller sees it in plans_list and /status.
type PlanInfo struct {
	plans.Summary
	Access string `json:"access"`
}

func (s *Server) planSummaries(ctx context.Context, caller Caller, p Plans) []PlanInfo {
	out := []PlanInfo{}
	for _, k := range p.Keys() {
		if !caller.CanRead(k) {
			continue
		}
		access := "read"
		if caller.CanWrite(k) {
			access = "write"
		}
		out = append(out, PlanInfo{Summary: p.Summarize(ctx, k), Access: access})
	}
	return out
}

var (
	str        = map[string]any{"type": "string"}
	integer    = map[string]any{"type": "integer"}
	arr        = map[string]any{"type": "array"}
	obj        = map[string]any{"type": "object"}
	planProp   = map[string]any{"type": "string", "description": "the plan's key (see plans_list)"}
	idProp     = map[string]any{"type": "string", "description": "the node's id (without #)"}
	baseSchema = map[string]any{"type": "object", "properties": map[string]any{
		"revision": integer, "checksum": map[string]any{"type": "string", "pattern": "^[0-9a-f]{64}$"}},
		"required": []string{"checksum"}}
	writeOutputSchema = objectSchema(map[string]any{
		"base": baseSchema, "revision": integer, "changed": map[string]any{"type": "boolean"},
		"warnings": arr, "added": arr, "removed": arr,
	}, "base", "revision", "warnings", "added", "removed")
)

func objectSchema(props map[string]any, required ...string) map[string]any {
	if props == nil {
		props = map[string]any{}
	}
	s := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		s["required"] = required
	}
	return s
}
