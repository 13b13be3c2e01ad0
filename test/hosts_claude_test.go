package test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// hostCLI finds a real host's CLI for the tests that drive it: $envVar, else the copy
// `npm ci` installs in test/<npmDir> (CI does that), else name on the PATH; without any,
// the test skips saying how to get it.
func hostCLI(t *testing.T, envVar, npmDir, name string) string {
	t.Helper()
	if p := os.Getenv(envVar); p != "" {
		return p
	}
	local := filepath.Join(repoRoot(), "test", npmDir, "node_modules", ".bin", name)
	if _, err := os.Stat(local); err == nil {
		return local
	}
	p, err := exec.LookPath(name)
	if err != nil {
		t.Skipf("%s is not installed: run `cd test/%s && npm ci`, or set %s to its binary", name, npmDir, envVar)
	}
	return p
}

// runHostCLI runs a host's CLI to its end, or kills it after 90 s and fails the test
// with what it printed.
func runHostCLI(t *testing.T, name string, cmd *exec.Cmd) ([]byte, error) {
	t.Helper()
	done := make(chan struct{})
	var out []byte
	var err error
	go func() { out, err = cmd.CombinedOutput(); close(done) }()
	select {
	case <-done:
	case <-time.After(90 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Fatalf("%s did not finish; output:\n%s", name, out)
	}
	return out, err
}

// claudeBinary finds the Claude Code CLI (npm @anthropic-ai/claude-code, in test/clients).
func claudeBinary(t *testing.T) string {
	return hostCLI(t, "TALK_TEST_CLAUDE", "clients", "claude")
}

// fakeMessagesAPI answers Claude Code's POST /v1/messages with one text reply (streamed
// as server-sent events when asked), so the real CLI finishes a turn without a model.
func fakeMessagesAPI(t *testing.T, reply string) (*httptest.Server, *atomic.Int32) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasSuffix(r.URL.Path, "/v1/messages") {
			http.NotFound(w, r)
			return
		}
		calls.Add(1)
		var req struct {
			Model  string `json:"model"`
			Stream bool   `json:"stream"`
		}
		raw, _ := io.ReadAll(r.Body)
		json.Unmarshal(raw, &req)
		msg := map[string]any{"id": "msg_1", "type": "message", "role": "assistant", "model": req.Model,
			"content": []any{}, "stop_reason": nil, "stop_sequence": nil, "usage": map[string]int{"input_tokens": 10, "output_tokens": 1}}
		if !req.Stream {
			msg["content"] = []any{map[string]string{"type": "text", "text": reply}}
			msg["stop_reason"] = "end_turn"
			w.Header().Set("Content-Type", "application/json")
			json.NewEncoder(w).Encode(msg)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		send := func(event string, data any) {
			raw, _ := json.Marshal(data)
			fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, raw)
		}
		send("message_start", map[string]any{"type": "message_start", "message": msg})
		send("content_block_start", map[string]any{"type": "content_block_start", "index": 0, "content_block": map[string]string{"type": "text", "text": ""}})
		send("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0, "delta": map[string]string{"type": "text_delta", "text": reply}})
		send("content_block_stop", map[string]any{"type": "content_block_stop", "index": 0})
		send("message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": "end_turn", "stop_sequence": nil}, "usage": map[string]int{"output_tokens": 12}})
		send("message_stop", map[string]any{"type": "message_stop"})
	}))
	t.Cleanup(srv.Close)
	return srv, &calls
}

// TestHookRealClaudeCode: after talk setup claude-code, the real Claude Code CLI runs the
// Stop hook at the end of a turn, and talkd says the project and the reply's first
// sentence. Skipped where Claude Code is not installed.
func TestHookRealClaudeCode(t *testing.T) {
	t.Parallel()
	claude := claudeBinary(t)
	d := hookDaemon(t, "")
	api, calls := fakeMessagesAPI(t, "## Result\n\nAll **12 tests** pass in `internal/queue`; see https://example.com/ci. Anything else?")
	home := t.TempDir()
	project := filepath.Join(t.TempDir(), "mein-projekt")
	os.MkdirAll(project, 0o755)
	talkRun(t, map[string]string{"HOME": home}, "", "setup", "claude-code").want(t, 0, "setup claude-code")

	cmd := exec.Command(claude, "-p", "run the tests", "--strict-mcp-config")
	cmd.Dir = project
	cmd.Env = []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "TALK_URL=" + d.URL,
		"ANTHROPIC_BASE_URL=" + api.URL, "ANTHROPIC_API_KEY=sk-test", "ENABLE_TOOL_SEARCH=false",
		"DISABLE_TELEMETRY=1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_AUTOUPDATER=1", "DISABLE_ERROR_REPORTING=1",
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config")}
	out, err := runHostCLI(t, "claude", cmd)
	if err != nil {
		t.Fatalf("claude: %v\n%s", err, out)
	}
	if calls.Load() == 0 {
		t.Fatalf("claude never asked the fake Messages API; output:\n%s", out)
	}
	got := d.waitSpoken(t, 1)
	if got[0].Text != "mein-projekt: All 12 tests pass." {
		t.Errorf("said %q (agent %q)", got[0].Text, got[0].Agent)
	}
	if got[0].Agent != "claude-code" {
		t.Errorf("agent %q", got[0].Agent)
	}

	// The MCP entry in ~/.claude.json is one Claude Code starts and connects to.
	list := exec.Command(claude, "mcp", "list")
	list.Dir, list.Env = project, cmd.Env
	out, err = list.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "talk: ") || !strings.Contains(string(out), "Connected") || strings.Contains(string(out), "failed") {
		t.Errorf("claude mcp list (%v):\n%s", err, out)
	}
}
