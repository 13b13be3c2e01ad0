package test

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The editor's origins at the document doors, over plain HTTP: the published editors'
// one-line setting ([editor] origins) lets their pages preflight and use /api/v1 —
// including the private-network preflight an https page on the internet needs to reach
// talkd on loopback — and nothing else; without it the doors stay closed to them.

// publishedEditors is the documented one-line setting.
const publishedEditors = "[editor]\norigins = [\"https://werkbaum.javagil.de\", \"https://mhoennig.github.io\"]\n"

func TestDocumentEditorOrigins(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := filepath.Join(dir, "p.werkbaum")
	if err := os.WriteFile(p, []byte(docPlanText), 0o644); err != nil {
		t.Fatal(err)
	}
	open := startDaemon(t, daemonOptions{Config: plansConfig(map[string]string{"p": p}) + publishedEditors})
	closed := startDaemon(t, daemonOptions{Config: plansConfig(map[string]string{"p": p})})
	path := docPathOf(t, open, newMCPClient(open), "p")
	closedPath := docPathOf(t, closed, newMCPClient(closed), "p")

	preflight := func(origin, method string) map[string]string {
		return map[string]string{"Origin": origin, "Access-Control-Request-Method": method,
			"Access-Control-Request-Headers": "content-type", "Access-Control-Request-Private-Network": "true"}
	}
	for _, tc := range []struct {
		origin, method, path string
	}{
		{"https://werkbaum.javagil.de", "PATCH", path + "/content"},
		{"https://mhoennig.github.io", "GET", path + "/changes?since=0&wait=25"},
		{"https://werkbaum.javagil.de", "POST", "/api/v1/documents"},
	} {
		status, hdr, raw := open.request(t, http.MethodOptions, tc.path, "", preflight(tc.origin, tc.method))
		if status != http.StatusNoContent || hdr.Get("Access-Control-Allow-Origin") != tc.origin ||
			!strings.Contains(hdr.Get("Access-Control-Allow-Methods"), tc.method) ||
			hdr.Get("Access-Control-Allow-Private-Network") != "true" ||
			!strings.Contains(strings.ToLower(hdr.Get("Access-Control-Allow-Headers")), "content-type") ||
			hdr.Get("Vary") != "Origin" {
			t.Errorf("preflight %s %s from %s: %d %v %s", tc.method, tc.path, tc.origin, status, hdr, raw)
		}
	}
	// The real request from an editor page carries the CORS answer.
	status, hdr, raw := open.request(t, http.MethodGet, path, "", map[string]string{"Origin": "https://werkbaum.javagil.de"})
	if status != http.StatusOK || hdr.Get("Access-Control-Allow-Origin") != "https://werkbaum.javagil.de" {
		t.Errorf("GET from the editor: %d %v %s", status, hdr, raw)
	}

	// Another origin gets no CORS answer and is refused.
	status, hdr, _ = open.request(t, http.MethodOptions, path+"/content", "", preflight("https://evil.example", "PATCH"))
	if status != http.StatusNoContent || hdr.Get("Access-Control-Allow-Origin") != "" || hdr.Get("Access-Control-Allow-Private-Network") != "" {
		t.Errorf("preflight from an unlisted origin: %d %v", status, hdr)
	}
	status, _, raw = open.request(t, http.MethodGet, path, "", map[string]string{"Origin": "https://evil.example"})
	if status != http.StatusForbidden || !strings.Contains(string(raw), "origin_not_allowed") {
		t.Errorf("GET from an unlisted origin: %d %s", status, raw)
	}

	// An editor origin opens the document doors only: no speaking, no muting.
	for _, door := range []string{"/speak", "/mute"} {
		status, _, raw := open.request(t, http.MethodPost, door, `{"text":"vom Editor","now":true}`,
			map[string]string{"Origin": "https://werkbaum.javagil.de", "Content-Type": "text/plain"})
		if status != http.StatusForbidden || !strings.Contains(string(raw), "origin_not_allowed") {
			t.Errorf("POST %s from an editor origin: %d %s", door, status, raw)
		}
	}
	status, hdr, _ = open.request(t, http.MethodOptions, "/speak", "", preflight("https://werkbaum.javagil.de", "POST"))
	if hdr.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("/speak preflight answered an editor origin: %d %v", status, hdr)
	}

	// Off unless configured: the same page is refused, and the refusal names the setting.
	status, hdr, _ = closed.request(t, http.MethodOptions, closedPath+"/content", "", preflight("https://werkbaum.javagil.de", "PATCH"))
	if hdr.Get("Access-Control-Allow-Origin") != "" || hdr.Get("Access-Control-Allow-Private-Network") != "" {
		t.Errorf("preflight without [editor] origins: %d %v", status, hdr)
	}
	status, _, raw = closed.request(t, http.MethodGet, closedPath, "", map[string]string{"Origin": "https://werkbaum.javagil.de"})
	if status != http.StatusForbidden || !strings.Contains(string(raw), "[editor] origins") {
		t.Errorf("GET without [editor] origins: %d %s", status, raw)
	}
	if !strings.Contains(closed.logs(), `msg="request refused" door=/api/v1/documents`) || !strings.Contains(closed.logs(), "origin_not_allowed") {
		t.Errorf("no log line for the refused editor page:\n%s", closed.logs())
	}
}

// TestDocumentEditorSettingsReload: [editor] origins and a root's create = true take
// effect with a reload (talk reload), as the README's steps say, and go away with one.
func TestDocumentEditorSettingsReload(t *testing.T) {
	t.Parallel()
	root, _ := rootTree(t)
	d := startDaemon(t, daemonOptions{Config: rootsConfig(root)})
	c := newDocHTTP(d, map[string]string{"Origin": "https://werkbaum.javagil.de"})
	body := map[string]any{"title": "Nach dem Reload", "content": "[ ] #r: Neu (S)\n"}
	c.must(t, http.MethodPost, "/api/v1/documents", body).problem(t, http.StatusForbidden, "[editor] origins")

	d.writeConfig(t, rootsConfig(root)+"create = true\n"+publishedEditors)
	talkAt(t, d, "", "reload").want(t, 0, "talk reload")
	if a := c.must(t, http.MethodPost, "/api/v1/documents", body); a.Status != http.StatusCreated ||
		a.Header.Get("Access-Control-Allow-Origin") != "https://werkbaum.javagil.de" {
		t.Fatalf("create after the reload: %s %v", a, a.Header)
	}
	if got := string(readFile(t, filepath.Join(root, "Nach dem Reload.werkbaum"))); got != "[ ] #r: Neu (S)\n" {
		t.Errorf("the created file: %q", got)
	}

	d.writeConfig(t, rootsConfig(root))
	talkAt(t, d, "", "reload").want(t, 0, "talk reload")
	c.must(t, http.MethodPost, "/api/v1/documents", body).problem(t, http.StatusForbidden, "[editor] origins")
	newDocHTTP(d, nil).must(t, http.MethodPost, "/api/v1/documents", body).problem(t, http.StatusForbidden, "create = true")
}
