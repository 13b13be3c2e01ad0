package api

import (
	"context"
	_ "embed"
	"fmt"
	"net/url"
	"strings"
)

// werkbaumGuide is the notation guide for agents served as werkbaum://guide.
//
//go:embed werkbaum_guide.md
var werkbaumGuide string

const guideURI = "werkbaum://guide"

// registerGuide adds the guide. It is served on every daemon, plans configured or not:
// the notation is learnt before a plan is set up, and a host's model that finds no plans
// can still read what talkd offers.
func (s *Server) registerGuide() {
	s.RegisterResource(Resource{
		URI: guideURI, Name: "werkbaum-guide", Title: "Werkbaum notation guide",
		Description: "How to read and safely change Werkbaum plans through talkd's tools.",
		MimeType:    "text/markdown",
		Read: func(context.Context, Caller, string) ([]ResourceContents, error) {
			return []ResourceContents{{URI: guideURI, MimeType: "text/markdown", Text: werkbaumGuide}}, nil
		},
	})
}

// planURI is the resource URI of the plan key (a key below a root may hold "/").
func planURI(key string) string { return "werkbaum://plan/" + url.PathEscape(key) }

// registerPlanResources adds the plan texts, which resources/list names per caller, and
// the plan prompts; pt is the plan tools' (registerPlanTools).
func (s *Server) registerPlanResources(pt planTools) {
	// The resource is the plan as werkbaum_read hands it to a model: the base first, then
	// the first page and the line to go on from. Claude Code gives its model's resource
	// reads the same treatment as tool answers: the whole 65 KB example plan was swapped
	// for a file and a 2 KB preview, without the base (TestClaudeCodeReadsThePlanResource).
	p := pt.p
	s.RegisterResourceTemplate(ResourceTemplate{
		URITemplate: "werkbaum://plan/{key}", Name: "werkbaum-plan", Title: "Werkbaum plan text",
		Description: "A plan you may read (keys: see plans_list), as werkbaum_read gives it: the base, then " +
			"the text from line 1, a page of about 24,000 characters, and the line to go on from with werkbaum_read.",
		MimeType: "text/plain",
		Read: func(ctx context.Context, caller Caller, uri string, vars map[string]string) ([]ResourceContents, error) {
			key := vars["key"]
			if err := planArg(caller, p, key, false); err != nil {
				return nil, ErrResourceNotFound
			}
			page, terr := pt.readPage(ctx, readIn{Plan: key})
			if terr != nil {
				return nil, fmt.Errorf("read plan %q: %s", key, terr.Message)
			}
			return []ResourceContents{{URI: uri, MimeType: "text/plain", Text: readText(key, page)}}, nil
		},
	})
	s.mcp.listedResources = func(_ context.Context, caller Caller) []resourceEntry {
		var out []resourceEntry
		for _, k := range p.Keys() {
			if caller.CanRead(k) {
				out = append(out, resourceEntry{URI: planURI(k), Name: "plan " + k, Title: "Werkbaum plan " + k,
					Description: "The plan " + k + " as werkbaum_read gives it: the base, then its first page.", MimeType: "text/plain"})
			}
		}
		return out
	}
	s.RegisterPrompt(Prompt{
		Name: "werkbaum/review", Title: "Review a plan",
		Description: "Review a plan's warnings, sizes, missing decomposition from M up, and unclear ownership.",
		Arguments:   []PromptArgument{{Name: "plan", Description: "the plan's key", Required: true}},
		Get: func(ctx context.Context, caller Caller, args map[string]string) (PromptResult, error) {
			if err := planArg(caller, p, args["plan"], false); err != nil {
				return PromptResult{}, err
			}
			text := fmt.Sprintf(`Review the Werkbaum plan %q.

1. Call werkbaum_inspect with plan %q and read the warnings, the nodes and the cheapest path.
2. Report, with line numbers:
   - every warning and what would fix it;
   - size problems: size conflicts, and nodes of size M or larger without sub-packages (needsBreakdown);
   - unclear ownership: open leaves without a person, and an overloaded assignee;
   - the stations of the cheapest path in order, and what blocks them (dependencies, high-risk nodes).
3. Propose concrete changes as node verbs (werkbaum_set_size, werkbaum_add_node, …) but do not apply them until the user agrees.
The notation is explained in the resource %s.`, args["plan"], args["plan"], guideURI)
			return PromptResult{Description: "Review of plan " + args["plan"],
				Messages: []PromptMessage{{Role: "user", Content: TextContent(text)}}}, nil
		},
	})
	s.RegisterPrompt(Prompt{
		Name: "werkbaum/decompose", Title: "Decompose a node",
		Description: "Split a node into sized sub-packages with the node verbs.",
		Arguments: []PromptArgument{
			{Name: "plan", Description: "the plan's key", Required: true},
			{Name: "id", Description: "the id of the node to split", Required: true},
		},
		Get: func(ctx context.Context, caller Caller, args map[string]string) (PromptResult, error) {
			if err := planArg(caller, p, args["plan"], false); err != nil {
				return PromptResult{}, err
			}
			id := strings.TrimPrefix(args["id"], "#")
			if id == "" {
				return PromptResult{}, fieldError("id", `argument "id" is required`)
			}
			text := fmt.Sprintf(`Decompose node #%s of the Werkbaum plan %q into sub-packages.

1. Call werkbaum_inspect with plan %q and id %q to see the node, its size, people and description; call werkbaum_read for the base.
2. Propose 2 to 7 sub-packages, each small enough to finish (XS to M), each with a size, an owner (@name) where known, and an id of the form #%s.<part>. Use | for genuine alternatives only.
3. After the user agrees, add them with werkbaum_add_node (parent %q), one request_id per call, passing the newest base each time; then check the warnings in each answer (sizeConflict means the parts exceed the parent's size: adjust sizes or the parent).
The notation is explained in the resource %s.`, id, args["plan"], args["plan"], id, id, id, guideURI)
			return PromptResult{Description: "Decompose #" + id,
				Messages: []PromptMessage{{Role: "user", Content: TextContent(text)}}}, nil
		},
	})
}
