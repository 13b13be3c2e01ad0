package test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestClaudeCodeScriptedModel drives the real Claude Code CLI (npm @anthropic-ai/claude-code,
// installed in test/clients by .ci/run) against talkd with a scripted model behind a
// loopback Messages API (../shared/mcp/HOSTS.md). The model uses only what the host hands
// it: every base it writes with is taken from the text of a tool result as Claude Code
// passed it on. It runs read → write → replay → stale write (conflict) → redo on the base
// the conflict names → operation_get → inspect, on the example plan and on a plan at the
// 2 MiB input limit, and checks that no answer was swapped for a file or cut, and that
// the file holds both changes. The sizes of what the model was handed are logged.
func TestClaudeCodeScriptedModel(t *testing.T) {
	claude, example := claudeAndExample(t)
	d, paths := startPlanDaemon(t, planFile{Key: "example", Text: string(example)}, planFile{Key: "big", Text: largestPlan(t)})
	for _, tc := range []struct{ plan, a, b string }{
		{"example", "not.ticket", "ed.path.worth"},
		{"big", "t3", "t4"},
	} {
		t.Run(tc.plan, func(t *testing.T) {
			api := newScriptedModel(t, tc.plan, tc.a, tc.b)
			results := runClaude(t, claude, d.URL+"/mcp", api)
			if len(results) != len(api.steps) {
				t.Fatalf("the model got %d tool results, want %d", len(results), len(api.steps))
			}
			var b strings.Builder
			fmt.Fprintf(&b, "\n| step | tool | handed to the model (chars) | ≈ tokens |\n|---|---|---|---|\n")
			for i, r := range results {
				fmt.Fprintf(&b, "| %d | %s | %d | %d |\n", i, api.steps[i].tool, chars(r), chars(r)/4)
				if strings.Contains(r, "persisted-output") || strings.Contains(r, "truncated") {
					t.Errorf("step %d (%s): the answer was swapped for a file or cut: %.300s", i, api.steps[i].tool, r)
				}
			}
			t.Log(b.String())
			if !strings.Contains(results[2], "replayed") && !strings.Contains(results[2], "already applied") {
				t.Errorf("the replay: %.300s", results[2])
			}
			if !strings.Contains(results[3], "conflict") || !strings.Contains(results[5], "conflict") {
				t.Errorf("the stale write and operation_get: %.300s | %.300s", results[3], results[5])
			}
			text := string(readFile(t, paths[tc.plan]))
			for _, id := range []string{tc.a, tc.b} {
				if !regexp.MustCompile(`\[x\][^\n]*#` + regexp.QuoteMeta(id) + `\b`).MatchString(text) {
					t.Errorf("#%s is not done in the file", id)
				}
			}
		})
	}
}

// claudeAndExample is the installed Claude Code CLI (the test skips without it) and the
// shared example plan.
func claudeAndExample(t *testing.T) (claude string, example []byte) {
	t.Helper()
	claude = filepath.Join(repoRoot(), "test", "clients", "node_modules", ".bin", "claude")
	if _, err := os.Stat(claude); err != nil {
		t.Skipf("Claude Code is not installed (cd test/clients && npm ci installs @anthropic-ai/claude-code): %v", err)
	}
	example, err := os.ReadFile(filepath.Join(sharedDir(t), "werkbaum", "examples", "werkbaum.werkbaum"))
	if err != nil {
		t.Fatalf("the example plan: %v", err)
	}
	return claude, example
}

// TestClaudeCodeAgentRhythm: Claude Code's model reads the example plan and writes three
// statuses, thinking 4 s before each write after the first (past the engine's memo trim and
// the daemon's idle release). Each of those writes starts from the analysis the write
// before it left (the engine's edit line says old_text_known=true), the bases the model
// reads off the answers it is handed are current (no conflict), and the file ends with
// the three statuses.
func TestClaudeCodeAgentRhythm(t *testing.T) {
	claude, example := claudeAndExample(t)
	d, paths := startPlanDaemonEnv(t, map[string]string{"TALK_LOG_LEVEL": "debug"}, planFile{Key: "example", Text: string(example)})
	const pause = 4 * time.Second
	write := func(after int, rid, id, status string) func([]string) (map[string]any, error) {
		return func(r []string) (map[string]any, error) {
			base, err := baseOf(r[after])
			return map[string]any{"plan": "example", "base": base, "request_id": rid, "id": id, "status": status}, err
		}
	}
	api := &scriptedModel{t: t, steps: []scriptedStep{
		{tool: "werkbaum_read", args: func([]string) (map[string]any, error) { return map[string]any{"plan": "example"}, nil }},
		{tool: "werkbaum_set_status", args: write(0, "rhythm-1", "not.ticket", "progress")},
		{tool: "werkbaum_set_status", args: write(1, "rhythm-2", "not.ticket", "done"), think: pause},
		{tool: "werkbaum_set_status", args: write(2, "rhythm-3", "ed.path.worth", "done"), think: pause},
	}}
	results := runClaude(t, claude, d.URL+"/mcp", api)
	if len(results) != len(api.steps) {
		t.Fatalf("the model got %d tool results, want %d", len(results), len(api.steps))
	}
	for i, r := range results[1:] {
		if strings.Contains(r, "conflict") {
			t.Errorf("write %d answered a conflict: the model read a stale base off the answer before: %.300s", i+1, r)
		}
	}
	var known []string
	for _, m := range editLine.FindAllStringSubmatch(d.logs(), -1) {
		known = append(known, m[1])
	}
	if len(known) != 3 || known[1] != "true" || known[2] != "true" {
		t.Errorf("old_text_known of the three writes = %v, want the two after a pause true", known)
	}
	text := string(readFile(t, paths["example"]))
	for _, id := range []string{"not.ticket", "ed.path.worth"} {
		if !regexp.MustCompile(`\[x\][^\n]*#` + regexp.QuoteMeta(id) + `\b`).MatchString(text) {
			t.Errorf("#%s is not done in the file", id)
		}
	}
}

// scriptedStep is one tool call of the scripted model; args builds its arguments from
// the tool results so far (as the host handed them over).
type scriptedStep struct {
	tool string
	args func(results []string) (map[string]any, error)
	// think is how long the model takes before it asks for this call (an agent's pause).
	think time.Duration
	// builtin: tool is one of Claude Code's own tools (ReadMcpResourceTool), not talkd's.
	builtin bool
}

// scriptedModel is a loopback Messages API that answers Claude Code's requests with the
// next step of its script, derived from the tool results in the request itself.
type scriptedModel struct {
	t     *testing.T
	steps []scriptedStep
	mu    sync.Mutex
	last  []string // the tool results of the latest request that carried talkd's tools
	fail  error
}

var baseInText = regexp.MustCompile(`\\?"revision\\?":\s*(\d+),\s*\\?"checksum\\?":\s*\\?"([0-9a-f]{64})`)

// baseOf is the first base named in a tool result, as a model would read it.
func baseOf(result string) (map[string]any, error) {
	m := baseInText.FindStringSubmatch(result)
	if m == nil {
		return nil, fmt.Errorf("no base in the answer the model got: %.300s", result)
	}
	return map[string]any{"revision": atoiQuiet(m[1]), "checksum": m[2]}, nil
}

func atoiQuiet(s string) int {
	n := 0
	fmt.Sscan(s, &n)
	return n
}

func newScriptedModel(t *testing.T, plan, a, b string) *scriptedModel {
	write := func(baseStep int, rid, id string) func([]string) (map[string]any, error) {
		return func(r []string) (map[string]any, error) {
			base, err := baseOf(r[baseStep])
			return map[string]any{"plan": plan, "base": base, "request_id": rid, "id": id, "status": "done"}, err
		}
	}
	return &scriptedModel{t: t, steps: []scriptedStep{
		{tool: "werkbaum_read", args: func([]string) (map[string]any, error) { return map[string]any{"plan": plan}, nil }},
		{tool: "werkbaum_set_status", args: write(0, "cc-1", a)},
		{tool: "werkbaum_set_status", args: write(0, "cc-1", a)}, // a retry: the same request
		{tool: "werkbaum_set_status", args: write(0, "cc-2", b)}, // the base of the first read is stale now
		{tool: "werkbaum_set_status", args: write(3, "cc-3", b)}, // redo on the base the conflict names
		{tool: "operation_get", args: func([]string) (map[string]any, error) {
			return map[string]any{"plan": plan, "request_id": "cc-2"}, nil
		}},
		{tool: "werkbaum_inspect", args: func([]string) (map[string]any, error) { return map[string]any{"plan": plan}, nil }},
	}}
}

// toolResults are the texts of the tool_result blocks of a request, in order.
func toolResults(messages []json.RawMessage) []string {
	var out []string
	for _, raw := range messages {
		var m struct {
			Content json.RawMessage `json:"content"`
		}
		var blocks []struct {
			Type    string          `json:"type"`
			Content json.RawMessage `json:"content"`
		}
		if json.Unmarshal(raw, &m) != nil || json.Unmarshal(m.Content, &blocks) != nil {
			continue
		}
		for _, b := range blocks {
			if b.Type != "tool_result" {
				continue
			}
			var s string
			if json.Unmarshal(b.Content, &s) == nil {
				out = append(out, s)
				continue
			}
			var parts []struct {
				Type string `json:"type"`
				Text string `json:"text"`
			}
			_ = json.Unmarshal(b.Content, &parts)
			var sb strings.Builder
			for _, p := range parts {
				sb.WriteString(p.Text)
			}
			out = append(out, sb.String())
		}
	}
	return out
}

func (s *scriptedModel) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	if r.URL.Path != "/v1/messages" {
		http.Error(w, `{"type":"error","error":{"type":"not_found_error","message":"not here"}}`, http.StatusNotFound)
		return
	}
	var req struct {
		Stream   bool              `json:"stream"`
		Messages []json.RawMessage `json:"messages"`
		Tools    []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	ours := false
	for _, tl := range req.Tools {
		ours = ours || strings.HasPrefix(tl.Name, "mcp__talk__")
	}
	var block map[string]any
	stop := "end_turn"
	if !ours {
		block = map[string]any{"type": "text", "text": "ok"} // a side request of the CLI
	} else {
		results := toolResults(req.Messages)
		s.mu.Lock()
		s.last = results
		s.mu.Unlock()
		if n := len(results); n < len(s.steps) {
			time.Sleep(s.steps[n].think)
			args, err := s.steps[n].args(results)
			if err != nil {
				s.mu.Lock()
				s.fail = err
				s.mu.Unlock()
				block = map[string]any{"type": "text", "text": "stopping: " + err.Error()}
			} else {
				name := "mcp__talk__" + s.steps[n].tool
				if s.steps[n].builtin {
					name = s.steps[n].tool
				}
				block = map[string]any{"type": "tool_use", "id": fmt.Sprintf("toolu_%02d", n), "name": name, "input": args}
				stop = "tool_use"
			}
		} else {
			block = map[string]any{"type": "text", "text": "finished"}
		}
	}
	msg := map[string]any{"id": "msg_scripted", "type": "message", "role": "assistant", "model": "scripted",
		"stop_reason": stop, "stop_sequence": nil, "usage": map[string]any{"input_tokens": 1, "output_tokens": 1}}
	if !req.Stream {
		msg["content"] = []any{block}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(msg)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	event := func(name string, v any) {
		b, _ := json.Marshal(v)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", name, b)
	}
	msg["content"], msg["stop_reason"] = []any{}, nil
	event("message_start", map[string]any{"type": "message_start", "message": msg})
	start := map[string]any{}
	for k, v := range block {
		start[k] = v
	}
	var delta map[string]any
	if block["type"] == "tool_use" {
		input, _ := json.Marshal(block["input"])
		start["input"] = map[string]any{}
		delta = map[string]any{"type": "input_json_delta", "partial_json": string(input)}
	} else {
		start["text"] = ""
		delta = map[string]any{"type": "text_delta", "text": block["text"]}
	}
	event("content_block_start", map[string]any{"type": "content_block_start", "index": 0, "content_block": start})
	event("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0, "delta": delta})
	event("content_block_stop", map[string]any{"type": "content_block_stop", "index": 0})
	event("message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil},
		"usage": map[string]any{"output_tokens": 1}})
	event("message_stop", map[string]any{"type": "message_stop"})
}

// runClaude runs `claude -p` against the scripted model and returns the tool results the
// model was handed in its last request.
func runClaude(t *testing.T, claude, mcpURL string, api *scriptedModel) []string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: api, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	defer srv.Close()

	home := t.TempDir()
	cfg, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"talk": map[string]any{"type": "http", "url": mcpURL}}})
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, claude, "-p", "Work on the plan.", "--mcp-config", string(cfg), "--strict-mcp-config",
		"--allowedTools", "mcp__talk,ListMcpResourcesTool,ReadMcpResourceTool", "--max-turns", "20")
	cmd.Dir = home
	cmd.Env = []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "ANTHROPIC_BASE_URL=http://" + ln.Addr().String(),
		"ANTHROPIC_API_KEY=scripted", "ENABLE_TOOL_SEARCH=false", "DISABLE_TELEMETRY=1",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_AUTOUPDATER=1", "DISABLE_ERROR_REPORTING=1"}
	cmd.WaitDelay = 5 * time.Second
	out, err := cmd.CombinedOutput()
	api.mu.Lock()
	defer api.mu.Unlock()
	if err != nil || api.fail != nil {
		t.Fatalf("claude: %v; the script: %v; output:\n%.2000s", err, api.fail, out)
	}
	return api.last
}

// TestContentOnlyHostLibraries: the scripted flow of TestClaudeCodeScriptedModel through
// @ai-sdk/mcp and @openai/agents with their default mapping of an answer to model input
// (the text only), on the example plan and on the 2 MiB plan (test/clients/hosts.mjs).
// They need Node 22; the inspector's node package (test/clients/inspector) provides it.
func TestContentOnlyHostLibraries(t *testing.T) {
	dir := tsClientsDir(t)
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@ai-sdk", "mcp")); err != nil {
		t.Skipf("@ai-sdk/mcp is not installed (cd test/clients && npm ci): %v", err)
	}
	node := filepath.Join(dir, "inspector", "node_modules", ".bin", "node")
	if _, err := os.Stat(node); err != nil {
		t.Skipf("these libraries need Node 22, from test/clients/inspector (npm ci there): %v", err)
	}
	example, err := os.ReadFile(filepath.Join(sharedDir(t), "werkbaum", "examples", "werkbaum.werkbaum"))
	if err != nil {
		t.Fatalf("the example plan: %v", err)
	}
	big := largestPlan(t)
	var files []planFile
	for _, lib := range []string{"aisdk", "openai"} {
		files = append(files, planFile{Key: "example-" + lib, Text: string(example)}, planFile{Key: "big-" + lib, Text: big})
	}
	d, paths := startPlanDaemon(t, files...)
	for _, lib := range []string{"aisdk", "openai"} {
		for _, tc := range []struct{ plan, a, b string }{{"example-" + lib, "not.ticket", "ed.path.worth"}, {"big-" + lib, "t3", "t4"}} {
			out := runNode(t, node, dir, append(os.Environ(), "NODE_NO_WARNINGS=1"), "hosts.mjs",
				"--lib", lib, "--url", d.URL+"/mcp", "--plan", tc.plan, "--a", tc.a, "--b", tc.b)
			t.Logf("%s on %s:\n%s", lib, tc.plan, out)
			text := string(readFile(t, paths[tc.plan]))
			for _, id := range []string{tc.a, tc.b} {
				if !regexp.MustCompile(`\[x\][^\n]*#` + regexp.QuoteMeta(id) + `\b`).MatchString(text) {
					t.Errorf("%s: #%s is not done in the file", tc.plan, id)
				}
			}
		}
	}
}

// TestClaudeCodeSharedModeHint: Claude Code, connecting to a shared-mode talkd without a
// token, probes OAuth and shows its user the error of the probe; that error now carries
// talkd's hint (how to send the token), where it showed "Dynamic Client Registration
// rejected (HTTP 404)" before.
func TestClaudeCodeSharedModeHint(t *testing.T) {
	claude := filepath.Join(repoRoot(), "test", "clients", "node_modules", ".bin", "claude")
	if _, err := os.Stat(claude); err != nil {
		t.Skipf("Claude Code is not installed (cd test/clients && npm ci installs @anthropic-ai/claude-code): %v", err)
	}
	d := startDaemon(t, daemonOptions{
		Config: "version = 1\n[[clients]]\nid = \"agent\"\ntoken_env = \"TOK_AGENT\"\nspeak = true\n",
		Env:    map[string]string{"TOK_AGENT": strings.Repeat("t", 40)},
	})
	home := t.TempDir()
	run := func(args ...string) string {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, claude, args...)
		cmd.Dir = home
		cmd.Env = []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "ANTHROPIC_API_KEY=unused", "DISABLE_TELEMETRY=1",
			"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_AUTOUPDATER=1", "DISABLE_ERROR_REPORTING=1"}
		cmd.WaitDelay = 5 * time.Second
		out, err := cmd.CombinedOutput()
		if err != nil && ctx.Err() != nil {
			t.Fatalf("claude %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	run("mcp", "add", "--transport", "http", "talk", d.URL+"/mcp")
	out := run("mcp", "list")
	t.Logf("claude mcp list:\n%s", out)
	if !strings.Contains(out, "talkd does not use OAuth") || !strings.Contains(out, `Authorization: Bearer $TOKEN`) {
		t.Errorf("Claude Code does not show talkd's hint:\n%s", out)
	}
}

// TestClaudeCodeReadsThePlanResource: Claude Code offers its model tools of its own to list
// and read an MCP server's resources, and hands it what they read as it hands tool
// answers. The model lists talkd's resources, finds werkbaum://plan/{key} of the example
// plan and of a plan at the 2 MiB input limit there (a template alone is not listed),
// reads it and is handed a page it can take in (not swapped for a file and a preview, as
// the whole 65 KB text was), opening with the base, which its next write passes unchanged.
func TestClaudeCodeReadsThePlanResource(t *testing.T) {
	claude, example := claudeAndExample(t)
	d, paths := startPlanDaemon(t, planFile{Key: "example", Text: string(example)}, planFile{Key: "big", Text: largestPlan(t)})
	for _, tc := range []struct{ plan, id string }{{"example", "not.ticket"}, {"big", "t3"}} {
		t.Run(tc.plan, func(t *testing.T) {
			listed := regexp.MustCompile(`werkbaum://plan/` + regexp.QuoteMeta(tc.plan) + `\b`)
			api := &scriptedModel{t: t, steps: []scriptedStep{
				{tool: "ListMcpResourcesTool", builtin: true, args: func([]string) (map[string]any, error) {
					return map[string]any{"server": "talk"}, nil
				}},
				{tool: "ReadMcpResourceTool", builtin: true, args: func(r []string) (map[string]any, error) {
					uri := listed.FindString(r[0])
					if uri == "" {
						return nil, fmt.Errorf("the resource list the model got names no plan %s: %.300s", tc.plan, r[0])
					}
					return map[string]any{"server": "talk", "uri": uri}, nil
				}},
				{tool: "werkbaum_set_status", args: func(r []string) (map[string]any, error) {
					base, err := baseOf(r[1])
					return map[string]any{"plan": tc.plan, "base": base, "request_id": "res-1", "id": tc.id, "status": "done"}, err
				}},
			}}
			results := runClaude(t, claude, d.URL+"/mcp", api)
			if len(results) != 3 {
				t.Fatalf("the model got %d tool results, want 3", len(results))
			}
			t.Logf("%s: the resource list handed to the model: %d chars", tc.plan, chars(results[0]))
			read := results[1]
			t.Logf("%s: the resource read handed to the model: %d chars", tc.plan, chars(read))
			if strings.Contains(read, "persisted-output") || strings.Contains(read, "truncated") || chars(read) > maxAnswerLargestPlan {
				t.Fatalf("the resource read was swapped for a file, cut, or too large (%d chars): %.300s", chars(read), read)
			}
			if !strings.Contains(read, "werkbaum_read with from ") {
				t.Errorf("the resource page does not say how to read on: %.300s", read[max(0, len(read)-300):])
			}
			if strings.Contains(results[2], "conflict") || !strings.Contains(results[2], "revision") {
				t.Errorf("the write with the resource's base: %.300s", results[2])
			}
			if !regexp.MustCompile(`\[x\][^\n]*#` + regexp.QuoteMeta(tc.id) + `\b`).MatchString(string(readFile(t, paths[tc.plan]))) {
				t.Errorf("#%s is not done in the file", tc.id)
			}
		})
	}
}
