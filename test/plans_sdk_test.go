package test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestPlanGoSDK: the official Go SDK's Streamable HTTP client, in both protocol eras, runs
// read → inspect → set_status → inspect on a copy of the shared example plan and sees the
// change; the file changes in exactly the node's line, and the journal names the SDK
// client as the agent when the era carries its name.
func TestPlanGoSDK(t *testing.T) {
	t.Parallel()
	example, err := os.ReadFile(filepath.Join(sharedDir(t), "werkbaum", "examples", "werkbaum.werkbaum"))
	if err != nil {
		t.Fatalf("the example plan: %v", err)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "werkbaum.werkbaum")
	if err := os.WriteFile(path, example, 0o644); err != nil {
		t.Fatal(err)
	}
	d := startDaemon(t, daemonOptions{Config: plansConfig(map[string]string{"werkbaum": path})})
	// Two eras, two nodes, both planned ([ ]) in the example.
	cases := []struct {
		era, version, node, line string
	}{
		{"2026", "", "not.ticket", "#not.ticket: Ticket references"},
		{"2025", "2025-11-25", "ed.path.worth", "#ed.path.worth: The most worthwhile path"},
	}
	for _, tc := range cases {
		t.Run(tc.era, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			agent := "sdk-plans-" + tc.era
			client := mcp.NewClient(&mcp.Implementation{Name: agent, Version: "1.0"}, nil)
			var opts *mcp.ClientSessionOptions
			if tc.version != "" {
				opts = &mcp.ClientSessionOptions{ProtocolVersion: tc.version}
			}
			session, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: d.URL + "/mcp", MaxRetries: -1}, opts)
			if err != nil {
				t.Fatalf("connect: %v", err)
			}
			defer session.Close()

			tools, err := session.ListTools(ctx, nil)
			if err != nil {
				t.Fatalf("tools/list: %v", err)
			}
			seen := map[string]*mcp.Tool{}
			for _, tool := range tools.Tools {
				seen[tool.Name] = tool
			}
			for _, name := range []string{"plans_list", "werkbaum_read", "werkbaum_inspect", "werkbaum_write", "werkbaum_apply_ops",
				"werkbaum_set_status", "werkbaum_add_node", "werkbaum_move_node", "werkbaum_set_size", "werkbaum_remove_node", "operation_get"} {
				tool := seen[name]
				write := strings.HasPrefix(name, "werkbaum_") && name != "werkbaum_read" && name != "werkbaum_inspect"
				// The write tools leave their output schema out of tools/list (issue 30).
				if tool == nil || (tool.OutputSchema == nil) != write || tool.Annotations == nil {
					t.Fatalf("tool %s as the SDK sees it: %+v", name, tool)
				}
				if tool.Annotations.ReadOnlyHint == write || (write && (!tool.Annotations.IdempotentHint || tool.Annotations.DestructiveHint == nil || *tool.Annotations.DestructiveHint)) {
					t.Errorf("annotations of %s: %+v", name, tool.Annotations)
				}
			}

			call := func(name string, args map[string]any) *mcp.CallToolResult {
				t.Helper()
				res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				if res.IsError {
					t.Fatalf("%s failed: %+v", name, res.Content)
				}
				return res
			}
			structured := func(res *mcp.CallToolResult, v any) {
				t.Helper()
				raw, err := json.Marshal(res.StructuredContent)
				if err != nil {
					t.Fatal(err)
				}
				if err := json.Unmarshal(raw, v); err != nil {
					t.Fatalf("structuredContent %s: %v", raw, err)
				}
			}
			nodeStatus := func() (string, planBase) {
				t.Helper()
				var in struct {
					Base  planBase         `json:"base"`
					Nodes []map[string]any `json:"nodes"`
				}
				structured(call("werkbaum_inspect", map[string]any{"plan": "werkbaum", "detail": "full", "id": tc.node, "include": []string{"tree"}}), &in)
				if len(in.Nodes) == 0 || in.Nodes[0]["id"] != tc.node {
					t.Fatalf("inspect %s: %+v", tc.node, in.Nodes)
				}
				s, _ := in.Nodes[0]["status"].(string)
				return s, in.Base
			}

			var r readAnswer
			structured(call("werkbaum_read", map[string]any{"plan": "werkbaum", "to": 100000}), &r)
			before := readFile(t, path)
			if r.Text != string(before) || r.Base.Checksum != sha(before) {
				t.Fatalf("read: base %+v, text equal %v", r.Base, r.Text == string(before))
			}
			status, base := nodeStatus()
			if status != "planned" || base != r.Base {
				t.Fatalf("before: %s %+v", status, base)
			}
			var w writeAnswer
			structured(call("werkbaum_set_status", map[string]any{"plan": "werkbaum", "base": r.Base, "request_id": "sdk-" + tc.era,
				"id": tc.node, "status": "done"}), &w)
			if !w.Changed || w.Revision != r.Base.Revision+1 {
				t.Fatalf("set_status: %+v", w)
			}
			status, base = nodeStatus()
			if status != "done" || base != w.Base {
				t.Fatalf("after: %s %+v, write answered %+v", status, base, w.Base)
			}

			// Exactly the node's line changed, from [ ] to [x].
			after := readFile(t, path)
			bl, al := strings.Split(string(before), "\n"), strings.Split(string(after), "\n")
			if len(bl) != len(al) {
				t.Fatalf("line count %d → %d", len(bl), len(al))
			}
			changed := 0
			for i := range bl {
				if bl[i] != al[i] {
					changed++
					if !strings.Contains(al[i], tc.line) || strings.Replace(bl[i], "[ ]", "[x]", 1) != al[i] {
						t.Errorf("line %d: %q → %q", i+1, bl[i], al[i])
					}
				}
			}
			if changed != 1 {
				t.Errorf("%d lines changed", changed)
			}

			var op opAnswer
			structured(call("operation_get", map[string]any{"plan": "werkbaum", "request_id": "sdk-" + tc.era}), &op)
			wantAgent := agent
			if tc.version != "" {
				wantAgent = "" // a 2025-era HTTP client names itself only in initialize (no sessions)
			}
			if op.State != "applied" || op.Author == nil || op.Author.Agent != wantAgent {
				t.Errorf("operation_get: %+v author %+v", op, op.Author)
			}
		})
	}
}
