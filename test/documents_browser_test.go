package test

import (
	"context"
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// The live-document doors with the client they exist for: a page in headless Chromium
// running the small live client of test/live (shadow copy, PATCH with checksum and
// (clientId, seq), long-poll feed) edits a plan while an MCP agent writes to it. The page
// is served from another loopback origin (listed in allowed_origins), so every request is
// a real cross-origin fetch with a preflight. The page reaches talkd through a small
// reverse proxy in the test, which lets an agent's write happen exactly while the page's
// PATCH is on its way — the race the protocol's rebase and 409 exist for.

// liveState is what test/live/page.html writes into #result (TalkLive state()).
type liveState struct {
	Version   uint64     `json:"version"`
	Text      string     `json:"text"`
	Shadow    string     `json:"shadow"`
	Pending   bool       `json:"pending"`
	Conflicts int        `json:"conflicts"`
	Events    []docEvent `json:"events"`
	Patches   []struct {
		Seq     int64   `json:"seq"`
		Status  int     `json:"status"`
		Version *uint64 `json:"version"`
	} `json:"patches"`
	Log      []string `json:"log"`
	Error    string   `json:"error"`
	Restores []struct {
		Version    uint64 `json:"version"`
		Status     int    `json:"status"`
		NewVersion uint64 `json:"newVersion"`
	} `json:"restores"`
	History []docHistoryEntry `json:"history"`
}

// livePageServer serves the repository root, so test/live/page.html finds the notation's
// line rules (internal/werkbaum/js/58_lines.js) and live.js.
func livePageServer(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.FileServer(http.Dir(repoRoot())))
	t.Cleanup(srv.Close)
	return srv
}

// liveProxy forwards to talkd and calls beforePatch before it forwards the n-th (1-based)
// PATCH …/content, so a test can slip a write in between.
type liveProxy struct {
	*httptest.Server
	mu          sync.Mutex
	patches     int
	beforePatch func(n int)
}

func newLiveProxy(t *testing.T, d *daemon) *liveProxy {
	t.Helper()
	target, _ := url.Parse(d.URL)
	rp := httputil.NewSingleHostReverseProxy(target)
	rp.ErrorHandler = func(w http.ResponseWriter, r *http.Request, err error) {
		if r.Context().Err() == nil { // the page's own abort of its feed at the end is no error
			t.Logf("live proxy: %s %s: %v", r.Method, r.URL.Path, err)
		}
		w.WriteHeader(http.StatusBadGateway)
	}
	p := &liveProxy{}
	p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPatch && strings.HasSuffix(r.URL.Path, "/content") {
			p.mu.Lock()
			p.patches++
			n, hook := p.patches, p.beforePatch
			p.mu.Unlock()
			if hook != nil {
				hook(n)
			}
		}
		r.Host = target.Host // talkd's Host check: its own loopback address
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(p.Close)
	return p
}

// liveRun opens page.html for the document at docURL with steps in a fresh headless
// Chromium and returns the client's final state.
func liveRun(t *testing.T, chromium, pageBase, docURL, name string, steps []map[string]any) liveState {
	t.Helper()
	rawSteps, _ := json.Marshal(steps)
	q := url.Values{"doc": {docURL}, "name": {name}, "wait": {"5"}, "timeout": {"20000"}, "steps": {string(rawSteps)}}
	page := pageBase + "/test/live/page.html?" + q.Encode()
	// The virtual-time budget lets --dump-dom wait for the script: virtual time does not
	// advance while a fetch is pending (the feed's long poll always is until the page
	// closes its client), so the page works in real time and the DOM is dumped after it.
	dom, stderr := chromiumDOM(t, chromium, page, t.TempDir(), "--virtual-time-budget=30000")
	m := browserResultRe.FindStringSubmatch(dom)
	if !strings.Contains(dom, "<title>done</title>") || m == nil {
		t.Fatalf("the live page did not finish; DOM:\n%s\nstderr:\n%s", browserTail(dom), browserTail(stderr))
	}
	var st liveState
	if err := json.Unmarshal([]byte(html.UnescapeString(m[1])), &st); err != nil {
		t.Fatalf("#result is not JSON: %v\n%s", err, m[1])
	}
	if st.Error != "" {
		t.Fatalf("the live page failed: %s\nlog:\n%s", st.Error, strings.Join(st.Log, "\n"))
	}
	return st
}

// TestBrowserLiveDocument: a Chromium page from an allowed origin edits a plan live while
// an MCP agent writes. Non-overlapping lines: the agent's write lands while the page's
// PATCH is in flight, the server rebases the page's insert, both survive, and a later
// agent write reaches the page through its feed with the agent's display name.
// Overlapping lines: the agent's write in flight makes the page's PATCH a 409 (the page
// takes the agent's line); the page's next edit wins, and the agent, still on its old
// base, gets a conflict carrying the page's line.
func TestBrowserLiveDocument(t *testing.T) {
	if testing.Short() {
		t.Skip("starts headless Chromium; skipped with -short")
	}
	t.Parallel()
	chromium := browserFind(t)
	pages := livePageServer(t)
	const agentName = "Agent Jörg"

	start := func(t *testing.T) (*daemon, string, *mcpClient, *liveProxy, string) {
		dir := t.TempDir()
		p := filepath.Join(dir, "p.werkbaum")
		if err := os.WriteFile(p, []byte(docPlanText), 0o644); err != nil {
			t.Fatal(err)
		}
		d := startDaemon(t, daemonOptions{Config: plansConfig(map[string]string{"p": p}),
			Env: map[string]string{"TALK_ALLOWED_ORIGINS": pages.URL}})
		agent := newMCPClient(d)
		agent.headers = map[string]string{"X-Talk-Agent": agentName}
		docPath := docPathOf(t, d, agent, "p")
		proxy := newLiveProxy(t, d)
		return d, p, agent, proxy, proxy.URL + docPath
	}

	t.Run("non-overlapping", func(t *testing.T) {
		_, file, agent, proxy, docURL := start(t)
		var hookErr error
		proxy.beforePatch = func(n int) {
			if n == 1 { // the agent closes #a while the page appends a line
				_, hookErr = liveAgentWrite(agent, "live-1", "a", "done")
			}
		}
		// A second agent write once the page's line is in the file: it reaches the page
		// only through the feed.
		go func() {
			deadline := time.Now().Add(60 * time.Second)
			for time.Now().Before(deadline) {
				if b, err := os.ReadFile(file); err == nil && strings.Contains(string(b), "#p: Vom Browser") {
					if _, err := liveAgentWrite(agent, "live-2", "b", "progress"); err != nil {
						t.Error(err)
					}
					return
				}
				time.Sleep(50 * time.Millisecond)
			}
		}()
		st := liveRun(t, chromium, pages.URL, docURL, "Browser Müller", []map[string]any{
			{"insert": []any{4, "  - [ ] #p: Vom Browser für @jörg (XS)"}},
			{"settle": true},
			{"waitEvent": agentName},
			{"waitText": "[~] #b: Beta"},
		})
		if hookErr != nil {
			t.Fatal(hookErr)
		}
		want := "[ ] #root: Wurzel (L)\n  - [x] #a: Alpha (S) @jörg\n  - [~] #b: Beta (S) @Müller\n  - [ ] #c: Gamma (XS)\n  - [ ] #p: Vom Browser für @jörg (XS)\n"
		if got := string(readFile(t, file)); got != want {
			t.Fatalf("the file:\n%s\nwant\n%s", got, want)
		}
		if st.Text != want || st.Shadow != want || st.Pending {
			t.Errorf("the page's text:\n%s\nshadow:\n%s", st.Text, st.Shadow)
		}
		if len(st.Patches) != 1 || st.Patches[0].Status != http.StatusOK {
			t.Errorf("the page's PATCHes: %+v\nlog:\n%s", st.Patches, strings.Join(st.Log, "\n"))
		}
		if !strings.Contains(strings.Join(st.Log, "\n"), "rebased over") {
			t.Errorf("the page's PATCH was not rebased over the agent's write; log:\n%s", strings.Join(st.Log, "\n"))
		}
		named := false
		for _, e := range st.Events {
			named = named || (e.DisplayName == agentName && strings.HasPrefix(e.ClientID, "mcp-"))
		}
		if !named {
			t.Errorf("the page's feed does not show the agent's name: %+v", st.Events)
		}
	})

	t.Run("overlapping", func(t *testing.T) {
		_, file, agent, proxy, docURL := start(t)
		var agentBase planBase
		var hookErr error
		proxy.beforePatch = func(n int) {
			if n == 1 { // the agent closes #a while the page rewrites #a's line
				agentBase, hookErr = liveAgentWrite(agent, "live-3", "a", "done")
			}
		}
		browserLine := "  - [~] #a: Alpha vom Browser (S) @jörg"
		st := liveRun(t, chromium, pages.URL, docURL, "Browser Müller", []map[string]any{
			{"edit": []any{1, browserLine}},
			{"settle": true},
			{"waitText": "[x] #a: Alpha (S)"},
			{"edit": []any{1, browserLine}},
			{"settle": true},
		})
		if hookErr != nil {
			t.Fatal(hookErr)
		}
		if len(st.Patches) != 2 || st.Patches[0].Status != http.StatusConflict || st.Patches[1].Status != http.StatusOK || st.Conflicts < 1 {
			t.Fatalf("the page's PATCHes: %+v (conflicts %d)\nlog:\n%s", st.Patches, st.Conflicts, strings.Join(st.Log, "\n"))
		}
		want := strings.Replace(docPlanText, "  - [ ] #a: Alpha (S) @jörg", browserLine, 1)
		if got := string(readFile(t, file)); got != want || st.Text != want {
			t.Fatalf("the file:\n%s\nthe page:\n%s\nwant\n%s", got, st.Text, want)
		}
		// The agent, still on the base of its write, overlaps the page's line: a conflict
		// with the current text.
		a := agent.must(t, "werkbaum_set_status", writeArgs("p", agentBase, "live-4", map[string]any{"id": "a", "status": "skeleton"}))
		if !a.IsError || !strings.Contains(string(a.Structured), `"conflict"`) || !strings.Contains(string(a.Structured), "Alpha vom Browser") {
			t.Errorf("the agent's write on its old base: %s %s", a.Text, a.Structured)
		}
		if got := string(readFile(t, file)); got != want {
			t.Errorf("the agent's conflicting write changed the file:\n%s", got)
		}
	})
}

// liveAgentWrite is an agent's werkbaum_set_status on a fresh read, usable from any
// goroutine; it returns the base after the write.
func liveAgentWrite(agent *mcpClient, requestID, id, status string) (planBase, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var r readAnswer
	a, err := agent.call(ctx, "werkbaum_read", map[string]any{"plan": "p"})
	if err == nil {
		err = a.decode(&r)
	}
	if err != nil {
		return planBase{}, err
	}
	a, err = agent.call(ctx, "werkbaum_set_status", writeArgs("p", r.Base, requestID, map[string]any{"id": id, "status": status}))
	if err != nil {
		return planBase{}, err
	}
	var w writeAnswer
	if a.IsError {
		return planBase{}, fmt.Errorf("agent set_status %s %s: %s", id, status, a.Text)
	}
	if err := a.decode(&w); err != nil {
		return planBase{}, err
	}
	return w.Base, nil
}
