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
	"testing"
)

// TestHookRealCodex: after talk setup codex on a config with the user's own settings,
// the real Codex CLI (codex exec, against a fake Responses API on loopback) runs the
// notify program at the end of the turn, and talkd says the project and the reply's first
// sentence; codex mcp list shows the talk server. Skipped where Codex is not installed
// ($TALK_TEST_CODEX, else test/hosts after npm ci there, else codex on the PATH).
func TestHookRealCodex(t *testing.T) {
	t.Parallel()
	codex := hostCLI(t, "TALK_TEST_CODEX", "hosts", "codex")
	d := hookDaemon(t, "")
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/responses") {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"data":[]}`)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		send := func(typ string, data map[string]any) {
			data["type"] = typ
			raw, _ := json.Marshal(data)
			fmt.Fprintf(w, "event: %s\ndata: %s\n\n", typ, raw)
		}
		send("response.created", map[string]any{"response": map[string]any{"id": "r1"}})
		send("response.output_item.done", map[string]any{"item": map[string]any{"type": "message", "role": "assistant", "id": "m1",
			"content": []any{map[string]string{"type": "output_text", "text": "Deployed **v2.3** to staging; see https://ci.example.com/run/7. Anything else?"}}}})
		send("response.completed", map[string]any{"response": map[string]any{"id": "r1",
			"usage": map[string]any{"input_tokens": 5, "output_tokens": 5, "total_tokens": 10}}})
	}))
	defer api.Close()
	home := t.TempDir()
	project := filepath.Join(t.TempDir(), "api-server")
	os.MkdirAll(filepath.Join(home, ".codex"), 0o700)
	os.MkdirAll(project, 0o755)
	os.WriteFile(filepath.Join(home, ".codex", "config.toml"), []byte(`# my codex
model = "test-model"
model_provider = "fake"

[model_providers.fake]
name = "fake"
base_url = "`+api.URL+`/v1"
wire_api = "responses"
env_key = "FAKE_KEY"
`), 0o600)
	talkRun(t, map[string]string{"HOME": home}, "", "setup", "codex").want(t, 0, "setup codex")

	env := []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "TALK_URL=" + d.URL, "FAKE_KEY=test", "NO_COLOR=1"}
	cmd := exec.Command(codex, "exec", "--skip-git-repo-check", "deploy it")
	cmd.Dir, cmd.Env = project, env
	out, err := runHostCLI(t, "codex", cmd)
	if err != nil || !strings.Contains(string(out), "Anything else?") {
		t.Fatalf("codex exec (%v):\n%s", err, out)
	}
	got := d.waitSpoken(t, 1)
	if got[0].Text != "api-server: Deployed v2.3 to staging." || got[0].Agent != "codex" {
		t.Errorf("said %q by %q", got[0].Text, got[0].Agent)
	}
	list := exec.Command(codex, "mcp", "list")
	list.Dir, list.Env = project, env
	if out, err := list.CombinedOutput(); err != nil || !strings.Contains(string(out), "talk ") || !strings.Contains(string(out), " mcp ") {
		t.Errorf("codex mcp list (%v):\n%s", err, out)
	}
}
