package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"talkd/internal/api/mcprev"
)

// mcpProtocolVersion is the 2025-era revision talk's plain JSON-RPC calls claim; that era
// needs no session, so each tools/call is one independent POST /mcp.
const mcpProtocolVersion = mcprev.Latest2025

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
