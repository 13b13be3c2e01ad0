package test

import (
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// readmeConfigRe finds the README's live-document config: the toml block that starts
// with the config file's path.
var readmeConfigRe = regexp.MustCompile("(?s)```toml\n\\s*# ~/.config/talk/config.toml\n(.*?)```")

// TestExamplePlan runs the README's live-document steps as written: its config with the
// example plan (docs/examples/first-plan.werkbaum) copied to ~/plans, then talk plan open.
// The plan reads without a warning, the link is the published editor's with the plan's
// document, talk sees the editor's origin listed (no hint), and the root creates plans.
func TestExamplePlan(t *testing.T) {
	t.Parallel()
	readme := string(readFile(t, filepath.Join(repoRoot(), "README.md")))
	m := readmeConfigRe.FindStringSubmatch(readme)
	if m == nil {
		t.Fatal("the README has no toml block starting with # ~/.config/talk/config.toml")
	}
	cfg := strings.ReplaceAll(m[1], "\n   ", "\n") // the block is indented in a list
	text := readFile(t, filepath.Join(repoRoot(), "docs", "examples", "first-plan.werkbaum"))
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, "plans"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, "plans", "first-plan.werkbaum"), text, 0o644); err != nil {
		t.Fatal(err)
	}
	d := startDaemon(t, daemonOptions{Config: cfg, Home: home})
	const key = "plans:first-plan.werkbaum"
	var inspected struct {
		Nodes    []any            `json:"nodes"`
		Warnings []map[string]any `json:"warnings"`
	}
	mcp := newMCPClient(d)
	mcp.ok(t, "werkbaum_inspect", map[string]any{"plan": key, "detail": "full"}, &inspected)
	if len(inspected.Warnings) != 0 || len(inspected.Nodes) != 9 {
		t.Errorf("the example plan: %d nodes, warnings %v", len(inspected.Nodes), inspected.Warnings)
	}
	doc := d.URL + docPathOf(t, d, mcp, key)
	r := talkRun(t, map[string]string{"HOME": home, "XDG_CONFIG_HOME": filepath.Join(home, ".config"), "TALK_URL": d.URL}, "", "plan", "open", key)
	r.want(t, 0, "talk plan open of the example")
	if r.stdout != "https://werkbaum.javagil.de/?live="+strings.ReplaceAll(strings.ReplaceAll(doc, ":", "%3A"), "/", "%2F")+"\n" || r.stderr != "" {
		t.Errorf("talk plan open: stdout %q stderr %q", r.stdout, r.stderr)
	}
	a := newDocHTTP(d, map[string]string{"Origin": "https://werkbaum.javagil.de"}).
		must(t, http.MethodPost, "/api/v1/documents", map[string]any{"title": "Zweiter Plan", "content": "[ ] #z: Zweiter (S)\n"})
	if a.Status != http.StatusCreated || a.Header.Get("Access-Control-Allow-Origin") != "https://werkbaum.javagil.de" {
		t.Errorf("Share from the editor: %s %v", a, a.Header)
	}
}
