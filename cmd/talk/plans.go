package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"talkd/internal/config"
	"talkd/internal/werkbaum/vocab"
)

// mcpProtocolVersion is the 2025-era revision talk's plain JSON-RPC calls claim; that era
// needs no session, so each tools/call is one independent POST /mcp.
const mcpProtocolVersion = "2025-11-25"

// maxConflictRetries bounds how often set-status re-applies its verb on a fresh base when
// another writer got in between (the verb names a node by id, so it stays meaningful).
const maxConflictRetries = 3

// toolResult is the result of an MCP tools/call.
type toolResult struct {
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
	StructuredContent json.RawMessage `json:"structuredContent"`
	IsError           bool            `json:"isError"`
}

func (r *toolResult) text() string {
	var parts []string
	for _, c := range r.Content {
		if c.Type == "text" {
			parts = append(parts, c.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// toolError is a tool result with isError: the daemon refused the operation (unknown
// plan, conflict, guard). Exit code 4, like any refusal.
type toolError struct {
	tool string
	res  *toolResult
}

func (e *toolError) Error() string {
	var detail struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(e.res.StructuredContent, &detail) == nil && detail.Message != "" {
		return fmt.Sprintf("%s refused: %s", e.tool, detail.Message)
	}
	return fmt.Sprintf("%s refused: %s", e.tool, strings.TrimSpace(e.res.text()))
}

// rpcError is a JSON-RPC error answer of /mcp (unknown tool, bad params). Exit code 4.
type rpcError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func (e *rpcError) Error() string {
	return fmt.Sprintf("refused by talkd's MCP door (JSON-RPC %d): %s", e.Code, e.Message)
}

// errNoPlans says that the daemon has no plan tools because it serves no plans: talkd
// registers them only once a plan is configured, so without one a plan command would
// otherwise meet a bare "unknown tool" refusal.
var errNoPlans = errors.New("talkd serves you no plans: none is configured (add a [[plans]] entry to the talkd config, then run talk reload) or granted to your client")

// callTool calls one MCP tool with a plain JSON-RPC POST. A tool error comes back as
// *toolError together with the result (its structuredContent may say more, e.g. the
// current base of a conflict).
func (a *app) callTool(ctx context.Context, name string, args map[string]any) (*toolResult, error) {
	req := map[string]any{
		"jsonrpc": "2.0", "id": 1, "method": "tools/call",
		"params": map[string]any{"name": name, "arguments": args},
	}
	h := http.Header{}
	h.Set("MCP-Protocol-Version", mcpProtocolVersion)
	ans, err := a.client().do(ctx, http.MethodPost, "/mcp", req, h)
	if err != nil {
		return nil, err
	}
	var env struct {
		Result *toolResult `json:"result"`
		Error  *rpcError   `json:"error"`
	}
	if err := decode(ans, "POST /mcp "+name, &env); err != nil {
		return nil, err
	}
	switch {
	case env.Error != nil:
		if env.Error.Code == rpcInvalidParams && a.servesNoPlans(ctx) {
			return nil, errNoPlans
		}
		return nil, env.Error
	case env.Result == nil:
		return nil, fmt.Errorf("the answer of POST /mcp %s has neither result nor error", name)
	case env.Result.IsError:
		// A failure carries its details (a conflict's base, a guard's switch) as a JSON
		// object in its one text block, not as structuredContent.
		if t := strings.TrimSpace(env.Result.text()); len(env.Result.StructuredContent) == 0 && strings.HasPrefix(t, "{") && json.Valid([]byte(t)) {
			env.Result.StructuredContent = json.RawMessage(t)
		}
		return env.Result, &toolError{tool: name, res: env.Result}
	}
	return env.Result, nil
}

// rpcInvalidParams is JSON-RPC's code for bad params, an unknown tool among them.
const rpcInvalidParams = -32602

// servesNoPlans reports whether /status lists no plan at all for this caller. Any doubt
// (no answer, no plans field) says false, so the daemon's own refusal is shown instead.
func (a *app) servesNoPlans(ctx context.Context) bool {
	_, st, err := a.fetchStatus(ctx)
	return err == nil && st.Plans != nil && len(st.Plans) == 0
}

// failPlan reports a plan command's failure: tool and JSON-RPC errors are refusals (exit
// 4; with --json the tool's structuredContent is printed on stdout), the rest as in fail.
func (a *app) failPlan(err error) int {
	var te *toolError
	var re *rpcError
	switch {
	case errors.As(err, &te):
		if a.opts.json && len(te.res.StructuredContent) > 0 {
			a.printJSON(te.res.StructuredContent)
		}
		a.warnf("%v", te)
		var g struct {
			Switch string `json:"switch"`
		}
		if json.Unmarshal(te.res.StructuredContent, &g) == nil {
			switch g.Switch {
			case "allowWarnings":
				a.warnf("to write it anyway: add --allow-warnings")
			case "allowProd":
				a.warnf("to write it anyway: add --allow-prod")
			}
		}
		return exitRefused
	case errors.As(err, &re):
		a.warnf("%v", re)
		return exitRefused
	case errors.Is(err, errNoPlans):
		a.warnf("%v", err)
		return exitRefused
	}
	return a.fail(err)
}

// printResult prints a tool's JSON result for --json: its structuredContent unchanged.
func (a *app) printResult(r *toolResult) {
	if len(r.StructuredContent) > 0 {
		a.printJSON(r.StructuredContent)
		return
	}
	raw, _ := json.Marshal(map[string]string{"text": r.text()})
	a.printJSON(raw)
}

func plansCommand() command {
	return command{
		name: "plans", usage: "plans", summary: "list the Werkbaum plans you may use", data: true,
		detail: `Calls the MCP tool plans_list. DOCUMENT is the plan's live-document URL: open it in the Werkbaum
editor to edit the plan live beside the agents. --json prints its structuredContent
{"plans":[…]} unchanged.`,
		define: func(fs *flag.FlagSet, a *app) func(context.Context, []string) int {
			return func(ctx context.Context, args []string) int {
				a.neutraliseTerminal()
				if len(args) > 0 {
					cmd, _ := findCommand("plans")
					return a.usage(cmd, "unexpected argument %q", args[0])
				}
				res, err := a.callTool(ctx, "plans_list", map[string]any{})
				if errors.Is(err, errNoPlans) {
					// The same answer as an empty plans_list: none for you.
					res, err = &toolResult{StructuredContent: json.RawMessage(`{"plans":[]}`)}, nil
				}
				if err != nil {
					return a.failPlan(err)
				}
				if a.opts.json {
					a.printResult(res)
					return exitOK
				}
				var doc struct {
					Plans []planInfo `json:"plans"`
				}
				if err := json.Unmarshal(res.StructuredContent, &doc); err != nil {
					return a.fail(fmt.Errorf("plans_list answered unexpected JSON: %w", err))
				}
				if len(doc.Plans) == 0 {
					fmt.Fprintln(a.stdout, "no plans are configured for you (see [[plans]] in the talkd config)")
					return exitOK
				}
				fmt.Fprintf(a.stdout, "%-16s %-6s %8s %6s %6s %8s  %s\n", "KEY", "ACCESS", "REVISION", "LINES", "NODES", "WARNINGS", "DOCUMENT")
				for _, p := range doc.Plans {
					document := p.Document
					if document == "" {
						document = "-"
					}
					fmt.Fprintf(a.stdout, "%-16s %-6s %8d %6d %6d %8d  %s", p.Key, p.Access, p.Revision, p.Lines, p.Nodes, p.Warnings, document)
					if p.Error != "" {
						fmt.Fprintf(a.stdout, "  error: %s", p.Error)
					}
					fmt.Fprintln(a.stdout)
				}
				return exitOK
			}
		},
	}
}

// planInfo is one entry of plans_list.
type planInfo struct {
	Key      string `json:"key"`
	Access   string `json:"access"`
	Revision uint64 `json:"revision"`
	Lines    int    `json:"lines"`
	Nodes    int    `json:"nodes"`
	Warnings int    `json:"warnings"`
	Error    string `json:"error"`
	// Document is the plan's live-document URL (the Werkbaum editor opens it).
	Document string `json:"document"`
}

// planDetail is plan's help text; its status words and boxes come from the notation's
// vocabulary (vocab.Notation, generated from the engine's scripts).
var planDetail = `SUBCOMMAND is show, inspect, set-status, add, move, remove or set-size:
  show KEY                      print the plan's text as stored (werkbaum_read); terminal
                                control characters in it are shown escaped (\x1b), as in
                                all human output; --json (exact text):
                                {"base":{"revision","checksum"},"lines","from","to","text"}
  inspect KEY [--id ID]         the notation's reading (werkbaum_inspect): the tree with
                                statuses, warnings with line numbers, the cheapest path's
                                stations and assignee loads; --id limits it to a subtree;
                                --json: {"base","nodes","warnings","path"}
  set-status KEY ID STATUS      set a node's status: a status key or a box code (below),
                                or ` + vocab.Notation.Neutral[0] + ` to remove the box; reads the base, writes
                                with a fresh request id, and re-applies on a fresh base up
                                to 3 times when another writer got in between. Refused by
                                the guards (new structural warnings, newly [^]) unless
                                --allow-warnings / --allow-prod. --json: the write result
                                {"base","revision","changed","warningCount","added","removed"}
  add KEY PARENT LINE [--after ID]
                                add a node line (e.g. "- [ ] #t: Token check (S) @anna",
                                without indentation) as the last child of PARENT (- for a
                                new root), or right after its child --after ID
  move KEY ID PARENT [--after ID]
                                move a node with its subtree under PARENT (- for the top
                                level), as the last child or after --after ID
  remove KEY ID [--discard]     delete a node with its subtree and description; --discard
                                marks it [-] instead (kept, hidden)
  set-size KEY ID SIZE          set a node's size (` + strings.Join(vocab.Notation.Sizes, ", ") + `), or - to remove it
  The writes (set-status and these) all read the base, write with a fresh request id,
  re-apply on a fresh base up to 3 times when another writer got in between, take
  --allow-warnings and --allow-prod, and with --json print the write result.
  open KEY [--browser] [--editor URL]
                                print the Werkbaum editor's link that edits the plan live
                                (<editor>?live=<its document URL>); --browser opens it.
                                The editor is --editor, else [editor] url of the talkd
                                config, else ` + config.DefaultEditorURL + `; its origin must be
                                in [editor] origins (talk says so when it is not).
                                --json: {"key","document","editor","url"}
Status boxes: ` + statusLegend(vocab.Notation) + `
A refused operation (unknown plan or id, conflict, guard) exits 4 with the daemon's text.
Plan text is anyone's input: in human output (and every message on stderr) control
characters other than tab and line breaks — ESC sequences, C1 codes, DEL, a lone CR —
are printed as escapes like \x1b, so a label cannot retitle, clear or hide your
terminal. --json output is JSON and carries the text unchanged.`

func planCommand() command {
	return command{
		name: "plan", usage: "plan SUBCOMMAND KEY …", summary: "read, inspect and update one Werkbaum plan, or open it in the editor",
		data: true, detail: planDetail,
		define: func(fs *flag.FlagSet, a *app) func(context.Context, []string) int {
			var id string
			var allowWarnings, allowProd bool
			fs.StringVar(&id, "id", "", "inspect: show only the subtree of the node with this `ID`")
			var after string
			var discard bool
			fs.BoolVar(&allowWarnings, "allow-warnings", false, "writes: write even if the result has new structural warnings")
			fs.BoolVar(&allowProd, "allow-prod", false, "writes: allow a node to newly carry [^] (in production)")
			fs.StringVar(&after, "after", "", "add, move: place the node right after this sibling `ID`")
			fs.BoolVar(&discard, "discard", false, "remove: mark the node [-] (kept, hidden) instead of deleting it")
			open := defineOpenFlags(fs)
			return func(ctx context.Context, args []string) int {
				a.neutraliseTerminal()
				cmd, _ := findCommand("plan")
				if len(args) == 0 {
					return a.usage(cmd, "give a subcommand: show, inspect, set-status, add, move, remove, set-size or open")
				}
				sub, rest := args[0], args[1:]
				if id != "" && sub != "inspect" {
					return a.usage(cmd, "--id belongs to plan inspect")
				}
				write := planWriteGuards{allowWarnings: allowWarnings, allowProd: allowProd}
				if (allowWarnings || allowProd) && (sub == "show" || sub == "inspect") {
					return a.usage(cmd, "--allow-warnings and --allow-prod belong to the plan writes")
				}
				if after != "" && sub != "add" && sub != "move" {
					return a.usage(cmd, "--after belongs to plan add and plan move")
				}
				if discard && sub != "remove" {
					return a.usage(cmd, "--discard belongs to plan remove")
				}
				if open.used() && sub != "open" {
					return a.usage(cmd, "--browser and --editor belong to plan open")
				}
				if edit, ok := planEdits[sub]; ok {
					if len(rest) != edit.args {
						return a.usage(cmd, "plan %s takes %s", sub, edit.usage)
					}
					return a.planEdit(ctx, sub, rest, strings.TrimPrefix(after, "#"), discard, write)
				}
				switch sub {
				case "show":
					if len(rest) != 1 {
						return a.usage(cmd, "plan show takes exactly one plan KEY")
					}
					return a.planShow(ctx, rest[0])
				case "inspect":
					if len(rest) != 1 {
						return a.usage(cmd, "plan inspect takes exactly one plan KEY (and --id ID)")
					}
					return a.planInspect(ctx, rest[0], strings.TrimPrefix(id, "#"))
				case "set-status":
					if len(rest) != 3 {
						return a.usage(cmd, "plan set-status takes KEY ID STATUS")
					}
					id, status := strings.TrimPrefix(rest[1], "#"), rest[2]
					return a.planWrite(ctx, rest[0], "werkbaum_set_status", map[string]any{"id": id, "status": status}, write,
						func(wr writeResult) string {
							if wr.Changed {
								return fmt.Sprintf("#%s set to %s", id, status)
							}
							return fmt.Sprintf("#%s already had status %s, nothing changed", id, status)
						})
				case "open":
					if len(rest) != 1 {
						return a.usage(cmd, "plan open takes exactly one plan KEY")
					}
					return a.planOpen(ctx, rest[0], open)
				}
				return a.usage(cmd, "unknown subcommand %q: use show, inspect, set-status, add, move, remove, set-size or open", sub)
			}
		},
	}
}

// base is a plan's {revision, checksum}: what a write must name.
type base struct {
	Revision uint64 `json:"revision"`
	Checksum string `json:"checksum"`
}

type snapshot struct {
	Text  string `json:"text"`
	Base  base   `json:"base"`
	Lines int    `json:"lines"`
}

func (a *app) readPlan(ctx context.Context, key string) (*toolResult, *snapshot, error) {
	// to: the whole text, whatever its size (without it the daemon answers a page).
	res, err := a.callTool(ctx, "werkbaum_read", map[string]any{"plan": key, "to": math.MaxInt32})
	if err != nil {
		return nil, nil, err
	}
	var snap snapshot
	if err := json.Unmarshal(res.StructuredContent, &snap); err != nil {
		return nil, nil, fmt.Errorf("werkbaum_read answered unexpected JSON: %w", err)
	}
	return res, &snap, nil
}

func (a *app) planShow(ctx context.Context, key string) int {
	res, snap, err := a.readPlan(ctx, key)
	if err != nil {
		return a.failPlan(err)
	}
	if a.opts.json {
		a.printResult(res)
		return exitOK
	}
	io.WriteString(a.stdout, snap.Text)
	return exitOK
}

// node is one node of werkbaum_inspect (field names of NOTATION.md §28).
type node struct {
	Line            int      `json:"line"`
	ParentLine      int      `json:"parentLine"`
	Depth           int      `json:"depth"`
	ID              string   `json:"id"`
	Label           string   `json:"label"`
	Gate            string   `json:"gate"`
	Optional        bool     `json:"optional"`
	Status          *string  `json:"status"`
	EffectiveStatus *string  `json:"effectiveStatus"`
	Size            *string  `json:"size"`
	AssumedSize     *string  `json:"assumedSize"`
	People          []string `json:"people"`
	Deps            []string `json:"deps"`
	Focus           bool     `json:"focus"`
	InView          *bool    `json:"inView"`
	Station         bool     `json:"station"`
}

type warning struct {
	Type string `json:"type"`
	Line int    `json:"line"`
	Text string `json:"text"`
}

func (w warning) String() string {
	text := w.Text
	if text == "" {
		text = w.Type
	} else {
		text = w.Type + ": " + text
	}
	if w.Line > 0 {
		return fmt.Sprintf("line %-4d %s", w.Line, text)
	}
	return fmt.Sprintf("%-9s %s", "", text)
}

type inspectDoc struct {
	Base     base      `json:"base"`
	Nodes    []node    `json:"nodes"`
	Warnings []warning `json:"warnings"`
	Path     *struct {
		Exact              bool               `json:"exact"`
		Needed             []int              `json:"needed"`
		Stations           []int              `json:"stations"`
		Cost               float64            `json:"cost"`
		AssigneeLoads      map[string]float64 `json:"assigneeLoads"`
		UnassignedLoad     float64            `json:"unassignedLoad"`
		OverloadedAssignee *struct {
			Tag           string `json:"tag"`
			Share         int    `json:"share"`
			Stations      int    `json:"stations"`
			TotalStations int    `json:"totalStations"`
		} `json:"overloadedAssignee"`
	} `json:"path"`
}

func (a *app) planInspect(ctx context.Context, key, id string) int {
	args := map[string]any{"plan": key, "detail": "full"}
	if id != "" {
		args["id"] = id
	}
	res, err := a.callTool(ctx, "werkbaum_inspect", args)
	if err != nil {
		return a.failPlan(err)
	}
	if a.opts.json {
		a.printResult(res)
		return exitOK
	}
	var doc inspectDoc
	if err := json.Unmarshal(res.StructuredContent, &doc); err != nil {
		return a.fail(fmt.Errorf("werkbaum_inspect answered unexpected JSON: %w", err))
	}
	writeInspect(a.stdout, key, id, &doc)
	return exitOK
}

// box is the status box of an inspect status (an English key of NOTATION.md §9, from the
// notation's vocabulary); a key this talk does not know (a newer daemon) is shown as
// [key], no box as blanks.
func box(status *string) string {
	if status == nil || *status == "" {
		return "   "
	}
	if b, ok := vocab.Notation.Box(*status); ok {
		return b
	}
	return "[" + *status + "]"
}

// statusLegend lists each box with its key and German key: "[?] idea (idee), [ ] planned
// (geplant), …", wrapped for the help text.
func statusLegend(v vocab.Vocabulary) string {
	var b strings.Builder
	col := len("Status boxes: ")
	for i, st := range v.Statuses {
		item := "[" + st.Code + "] " + st.Key
		if st.German != st.Key {
			item += " (" + st.German + ")"
		}
		if i < len(v.Statuses)-1 {
			item += ","
		}
		if i > 0 {
			if col+1+len(item) > 90 {
				b.WriteString("\n  ")
				col = 2
			} else {
				b.WriteString(" ")
				col++
			}
		}
		b.WriteString(item)
		col += len(item)
	}
	return b.String()
}

// writeInspect renders the inspect view for people: the tree with statuses, the warnings
// with line numbers, the cheapest path's stations and loads.
func writeInspect(w io.Writer, key, id string, doc *inspectDoc) {
	title := "plan " + key
	if id != "" {
		title += ", subtree #" + id
	}
	fmt.Fprintf(w, "%s: revision %d, %s, %s\n", title, doc.Base.Revision, count(len(doc.Nodes), "node"), count(len(doc.Warnings), "warning"))
	byLine := map[int]node{}
	minDepth := -1
	for _, n := range doc.Nodes {
		byLine[n.Line] = n
		if minDepth < 0 || n.Depth < minDepth {
			minDepth = n.Depth
		}
	}
	if len(doc.Nodes) > 0 {
		fmt.Fprintln(w)
	}
	for _, n := range doc.Nodes {
		fmt.Fprintf(w, "%5d  %s%s\n", n.Line, strings.Repeat("  ", n.Depth-minDepth), nodeLine(n))
	}
	if len(doc.Warnings) > 0 {
		fmt.Fprintf(w, "\nwarnings:\n")
		for _, wa := range doc.Warnings {
			fmt.Fprintf(w, "  %s\n", wa)
		}
	}
	p := doc.Path
	if p == nil {
		return
	}
	kind := "exact"
	if !p.Exact {
		kind = "approximate"
	}
	fmt.Fprintf(w, "\ncheapest path (%s): cost %s, %s, %s\n", kind, num(p.Cost), count(len(p.Needed), "needed node"), count(len(p.Stations), "station"))
	for _, l := range p.Stations {
		if n, ok := byLine[l]; ok {
			fmt.Fprintf(w, "  station line %-4d %s\n", l, nodeLine(n))
		} else {
			fmt.Fprintf(w, "  station line %d\n", l)
		}
	}
	if len(p.AssigneeLoads) > 0 || p.UnassignedLoad > 0 {
		names := make([]string, 0, len(p.AssigneeLoads))
		for name := range p.AssigneeLoads {
			names = append(names, name)
		}
		sort.Slice(names, func(i, j int) bool {
			if p.AssigneeLoads[names[i]] != p.AssigneeLoads[names[j]] {
				return p.AssigneeLoads[names[i]] > p.AssigneeLoads[names[j]]
			}
			return names[i] < names[j]
		})
		var loads []string
		for _, name := range names {
			loads = append(loads, name+" "+num(p.AssigneeLoads[name]))
		}
		if p.UnassignedLoad > 0 {
			loads = append(loads, "unassigned "+num(p.UnassignedLoad))
		}
		fmt.Fprintf(w, "  loads: %s\n", strings.Join(loads, ", "))
	}
	if o := p.OverloadedAssignee; o != nil {
		fmt.Fprintf(w, "  overloaded: %s carries %d%% of the work (%d of %d stations)\n", o.Tag, o.Share, o.Stations, o.TotalStations)
	}
}

// nodeLine is one node: box, label, id, size, people, deps and markers.
func nodeLine(n node) string {
	var b strings.Builder
	b.WriteString(box(n.Status) + " " + n.Label)
	if n.ID != "" {
		b.WriteString("  #" + n.ID)
	}
	switch {
	case n.Size != nil && *n.Size != "":
		b.WriteString("  (" + *n.Size + ")")
	case n.AssumedSize != nil && *n.AssumedSize != "":
		b.WriteString("  (~" + *n.AssumedSize + ")")
	}
	for _, p := range n.People {
		b.WriteString(" @" + strings.TrimPrefix(p, "@"))
	}
	if len(n.Deps) > 0 {
		b.WriteString("  needs " + strings.Join(n.Deps, ", "))
	}
	var marks []string
	if n.EffectiveStatus != nil && *n.EffectiveStatus != "" && (n.Status == nil || *n.EffectiveStatus != *n.Status) {
		marks = append(marks, "effectively "+*n.EffectiveStatus)
	}
	if n.Optional {
		marks = append(marks, "optional")
	}
	if n.Gate == "or" || n.Gate == "xor" {
		marks = append(marks, n.Gate+"-alternative")
	}
	if n.Focus {
		marks = append(marks, "focus")
	}
	if n.Station {
		marks = append(marks, "station")
	}
	if n.InView != nil && !*n.InView {
		marks = append(marks, "under a discarded root")
	}
	if len(marks) > 0 {
		b.WriteString("  [" + strings.Join(marks, ", ") + "]")
	}
	return b.String()
}

// num prints a load or cost without noise: 13, 6.7.
func num(f float64) string {
	return strconv.FormatFloat(float64(int64(f*10+0.5))/10, 'f', -1, 64)
}

// writeResult is the answer of every plan write tool.
type writeResult struct {
	Base         base      `json:"base"`
	Revision     uint64    `json:"revision"`
	Changed      bool      `json:"changed"`
	WarningCount int       `json:"warningCount"`
	Added        []warning `json:"added"`
	Removed      []warning `json:"removed"`
	Replayed     bool      `json:"replayed"`
}

func newRequestID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return "talk-" + hex.EncodeToString(b[:])
}

// planWriteGuards are the guard switches every plan write takes.
type planWriteGuards struct{ allowWarnings, allowProd bool }

// planWrite applies one node verb (tool with its verb arguments) to plan key: it reads the
// base, writes with a fresh request id, and when another writer got in between re-applies
// the verb on the new base (the verb names nodes by id, so it stays meaningful) up to
// maxConflictRetries times. done says what happened, for the human output.
func (a *app) planWrite(ctx context.Context, key, tool string, verb map[string]any, g planWriteGuards, done func(writeResult) string) int {
	_, snap, err := a.readPlan(ctx, key)
	if err != nil {
		return a.failPlan(err)
	}
	cur := snap.Base
	for attempt := 1; ; attempt++ {
		reqID := newRequestID()
		args := map[string]any{"plan": key, "base": cur, "request_id": reqID}
		for k, v := range verb {
			args[k] = v
		}
		if g.allowWarnings {
			args["allowWarnings"] = true
		}
		if g.allowProd {
			args["allowProd"] = true
		}
		res, err := a.callTool(ctx, tool, args)
		var te *toolError
		if errors.As(err, &te) && attempt <= maxConflictRetries {
			var c struct {
				Conflict bool  `json:"conflict"`
				Base     *base `json:"base"`
			}
			if json.Unmarshal(te.res.StructuredContent, &c) == nil && c.Conflict && c.Base != nil {
				a.warnf("plan %s changed meanwhile (now revision %d); applying the change again on the new text", key, c.Base.Revision)
				cur = *c.Base
				continue
			}
		}
		var ue *unreachableError
		if errors.As(err, &ue) {
			// The write may or may not have happened; its request id tells.
			a.warnf("the answer to request %s was lost; ask the daemon with operation_get (plan %q, request_id %q)", reqID, key, reqID)
		}
		if err != nil {
			return a.failPlan(err)
		}
		if a.opts.json {
			a.printResult(res)
			return exitOK
		}
		var wr writeResult
		if err := json.Unmarshal(res.StructuredContent, &wr); err != nil {
			return a.fail(fmt.Errorf("%s answered unexpected JSON: %w", tool, err))
		}
		if wr.Changed {
			fmt.Fprintf(a.stdout, "%s: %s, now revision %d\n", key, done(wr), wr.Revision)
		} else {
			fmt.Fprintf(a.stdout, "%s: %s (revision %d)\n", key, done(wr), wr.Revision)
		}
		for _, w := range wr.Added {
			fmt.Fprintf(a.stdout, "  new warning     %s\n", w)
		}
		for _, w := range wr.Removed {
			fmt.Fprintf(a.stdout, "  warning gone    %s\n", w)
		}
		fmt.Fprintf(a.stdout, "  %s in the plan (talk plan inspect %s)\n", count(wr.WarningCount, "warning"), key)
		return exitOK
	}
}

// neutraliseTerminal makes the plan commands' human output safe for a terminal: plan text
// (labels, people, warnings quoting labels, the whole text for show) comes from whoever
// edited the plan, and a raw ESC sequence in it could set the window title, clear the
// screen or hide text (issue 15). stdout is wrapped unless --json (JSON escapes control
// characters itself and must carry the text unchanged); stderr always, since refusals
// quote the daemon's text.
func (a *app) neutraliseTerminal() {
	if !a.opts.json {
		a.stdout = termSafe{a.stdout}
	}
	a.stderr = termSafe{a.stderr}
}

// termSafe is a writer that passes each write through neutralise. Each write is
// neutralised on its own: a CRLF split across two writes shows its CR escaped, which
// only the whole text of plan show could contain, and that is written at once.
type termSafe struct{ w io.Writer }

func (t termSafe) Write(p []byte) (int, error) {
	if _, err := io.WriteString(t.w, neutralise(string(p))); err != nil {
		return 0, err
	}
	return len(p), nil
}

// neutralise returns s with every character a terminal would act on replaced by a
// visible escape: C0 controls except tab and LF (a CR directly before LF is a line ending
// and stays), DEL and ESC as \xHH, C1 controls (U+0080–U+009F) as \u00HH, and bytes that
// are not UTF-8 (an 8-bit terminal reads 0x9b as CSI) as \xHH. Text without any of these
// is returned as it is.
func neutralise(s string) string {
	i := 0
	for i < len(s) {
		size, ok := plainAt(s, i)
		if !ok {
			break
		}
		i += size
	}
	if i == len(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	b.WriteString(s[:i])
	for i < len(s) {
		size, ok := plainAt(s, i)
		switch {
		case ok:
			b.WriteString(s[i : i+size])
		case size == 1:
			fmt.Fprintf(&b, "\\x%02x", s[i])
		default: // a C1 control, two bytes in UTF-8
			r, _ := utf8.DecodeRuneInString(s[i:])
			fmt.Fprintf(&b, "\\u%04x", r)
		}
		i += size
	}
	return b.String()
}

// plainAt reports the size of the character at s[i] and whether a terminal shows it as
// text (the one rule of neutralise).
func plainAt(s string, i int) (size int, ok bool) {
	c := s[i]
	if c < utf8.RuneSelf {
		return 1, (c >= 0x20 && c < 0x7f) || c == '\t' || c == '\n' || (c == '\r' && i+1 < len(s) && s[i+1] == '\n')
	}
	r, size := utf8.DecodeRuneInString(s[i:])
	if r == utf8.RuneError && size == 1 {
		return 1, false
	}
	return size, r > 0x9f
}

// count is n with its noun, singular for one: "1 warning", "3 warnings".
func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}
