package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"regexp"

	"talkd/internal/werkbaum"
	"talkd/internal/werkbaum/plans"
)

// Plans is what the MCP plan tools need of the plan store.
type Plans interface {
	Keys() []string
	// Lookup says whether a key names a plan now (configured, or a file below a root);
	// its error says why not, for keys below a root (plans.AddressError).
	Lookup(key string) error
	Read(ctx context.Context, key string) (*plans.Snapshot, error)
	Inspect(ctx context.Context, key string, opts werkbaum.InspectOptions) (*plans.Inspected, error)
	// Outline is the whole plan's outline, which the compact reading is made of.
	Outline(ctx context.Context, key string) (*plans.Outlined, error)
	Summarize(ctx context.Context, key string) plans.Summary
	Write(ctx context.Context, key string, req plans.WriteRequest) (*plans.WriteResult, error)
	// ChangesSince diffs the text at base (when still kept) to cur: what a conflict sends.
	ChangesSince(ctx context.Context, key string, base plans.Base, cur *plans.Snapshot) ([]werkbaum.LineOp, bool, error)
	Operation(ctx context.Context, key, client, requestID string) (*plans.OperationStatus, error)
}

// RegisterPlans adds the plan tools of ARCHITECTURE §5.1 to the MCP door and lets
// /status list the plans each caller may read. v is the notation engine's vocabulary
// (werkbaum.Engine.Vocabulary): the tools' status and size words come from it.
func (s *Server) RegisterPlans(p Plans, v werkbaum.Vocabulary) {
	s.plans = p
	s.registerPlanResources(registerPlanTools(s, p, v))
	s.mcp.setInstructions(instructions + planInstructions)
}

const planInstructions = " It also keeps Werkbaum plans: plans_list shows the plans you may use; " +
	"werkbaum_inspect gives a plan's statuses, warnings and cheapest path (trust it); werkbaum_read gives " +
	"the text after its base. Change plans with the node verbs, passing the base of your last read or write " +
	"and a new request_id each time; a conflict names the new base and the changed lines: redo the change " +
	"on it; resend the same request_id after a lost connection. The notation is explained in the resource " +
	"werkbaum://guide."

var checksumRe = regexp.MustCompile(`^[0-9a-f]{64}$`)

// planArg checks the plan key and the caller's grant.
func planArg(caller Caller, p Plans, key string, write bool) *Error {
	if key == "" {
		return fieldError("plan", `field "plan" is required: the key of a plan (see plans_list)`)
	}
	err := p.Lookup(key)
	if err != nil || !caller.CanRead(key) {
		// A plan the caller may not read is indistinguishable from one that does not exist;
		// a key below a root (local mode only) says what is wrong with it.
		var addr *plans.AddressError
		if errors.As(err, &addr) && caller.CanRead(key) {
			return fieldError("plan", addr.Error()+"; plans_list shows the plans you may use")
		}
		return fieldError("plan", fmt.Sprintf("unknown plan %q; plans_list shows the plans you may use", key))
	}
	if write && !caller.CanWrite(key) {
		return &Error{Status: http.StatusForbidden, Code: CodeForbidden, Field: "plan",
			Message: fmt.Sprintf("client %q has no write grant for plan %q", caller.ID, key)}
	}
	return nil
}

// PlanInfo is one plan as a caller sees it in plans_list and /status: the store's
// summary field by field (it is part of plans_list's output schema, so a field the
// summary gains is not sent before it is declared here) and the caller's access.
type PlanInfo struct {
	Key      string `json:"key"`
	Revision uint64 `json:"revision"`
	Checksum string `json:"checksum"`
	Lines    int    `json:"lines"`
	Nodes    int    `json:"nodes"`
	Warnings int    `json:"warnings"`
	Lang     string `json:"lang"`
	Error    string `json:"error,omitempty" desc:"why the plan could not be summarised"`
	Analysis string `json:"analysis,omitempty" enum:"pending,failed" desc:"pending while the engine still counts nodes and warnings (then 0), failed when it could not (error says why)"`
	Mirror   any    `json:"mirror,omitempty" type:"object" desc:"the plan's git mirror: last commit and its state"`
	Access   string `json:"access" enum:"read,write"`
	Document string `json:"document,omitempty" desc:"the plan's live-document URL (the Werkbaum editor opens it; DOCUMENTS.md protocol)"`
}

func planInfo(sum plans.Summary, access string) PlanInfo {
	return PlanInfo{Key: sum.Key, Revision: sum.Revision, Checksum: sum.Checksum, Lines: sum.Lines, Nodes: sum.Nodes,
		Warnings: sum.Warnings, Lang: sum.Lang, Error: sum.Error, Analysis: sum.Analysis, Mirror: sum.Mirror, Access: access}
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
		pl := planInfo(p.Summarize(ctx, k), access)
		pl.Document = s.documentURL(ctx, k)
		out = append(out, pl)
	}
	return out
}
