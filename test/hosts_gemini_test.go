package test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestHookRealGeminiCLI: after talk setup gemini, the real Gemini CLI (headless, against a
// fake Gemini API on loopback) runs the AfterAgent hook, and talkd says the project and
// the reply's first sentence. Skipped where Gemini CLI is not installed
// ($TALK_TEST_GEMINI, else test/hosts after npm ci there, else gemini on the PATH).
func TestHookRealGeminiCLI(t *testing.T) {
	t.Parallel()
	gemini := hostCLI(t, "TALK_TEST_GEMINI", "hosts", "gemini")
	d := hookDaemon(t, "")
	reply := map[string]any{
		"candidates": []any{map[string]any{"index": 0, "finishReason": "STOP",
			"content": map[string]any{"role": "model", "parts": []any{map[string]string{"text": "Die Tests für **Jörg** sind grün, siehe `cmd/talk/hook.go`. Noch etwas?"}}}}},
		"usageMetadata": map[string]int{"promptTokenCount": 5, "candidatesTokenCount": 5, "totalTokenCount": 10},
	}
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := json.Marshal(reply)
		switch {
		case strings.Contains(r.URL.Path, ":countTokens"):
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"totalTokens":10}`)
		case strings.Contains(r.URL.Path, ":streamGenerateContent"):
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprintf(w, "data: %s\r\n\r\n", raw)
		default:
			w.Header().Set("Content-Type", "application/json")
			w.Write(raw)
		}
	}))
	defer api.Close()
	home := t.TempDir()
	project := filepath.Join(t.TempDir(), "Müller-app")
	os.MkdirAll(filepath.Join(home, ".gemini"), 0o700)
	os.MkdirAll(project, 0o755)
	// The user's own settings: API-key auth (the fake API takes any key).
	os.WriteFile(filepath.Join(home, ".gemini", "settings.json"), []byte(`{"security": {"auth": {"selectedType": "gemini-api-key"}}}`), 0o600)
	talkRun(t, map[string]string{"HOME": home}, "", "setup", "gemini").want(t, 0, "setup gemini")

	cmd := exec.Command(gemini, "-m", "gemini-2.5-flash", "-p", "run the tests")
	cmd.Dir = project
	cmd.Env = []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "TALK_URL=" + d.URL, "GEMINI_API_KEY=test",
		"GOOGLE_GEMINI_BASE_URL=" + api.URL, "GEMINI_CLI_TRUST_WORKSPACE=true", "NO_COLOR=1"}
	out, err := runHostCLI(t, "gemini", cmd)
	if err != nil || !strings.Contains(string(out), "Noch etwas?") {
		t.Fatalf("gemini (%v):\n%s", err, out)
	}
	got := d.waitSpoken(t, 1)
	if got[0].Text != "Müller-app: Die Tests für Jörg sind grün." || got[0].Agent != "gemini" {
		t.Errorf("said %q by %q", got[0].Text, got[0].Agent)
	}
}
