package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"strconv"
)

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
					nodes, warnings := strconv.Itoa(p.Nodes), strconv.Itoa(p.Warnings)
					if p.Analysis != "" || p.Error != "" {
						nodes, warnings = "-", "-" // not counted: 0 would read as an empty plan
					}
					fmt.Fprintf(a.stdout, "%-16s %-6s %8d %6d %6s %8s  %s", p.Key, p.Access, p.Revision, p.Lines, nodes, warnings, document)
					switch {
					case p.Error != "":
						fmt.Fprintf(a.stdout, "  error: %s", p.Error)
					case p.Analysis == "pending":
						fmt.Fprint(a.stdout, "  (still being counted)")
					}
					fmt.Fprintln(a.stdout)
				}
				return exitOK
			}
		},
	}
}

// count is n with its noun, singular for one: "1 warning", "3 warnings".
func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}
