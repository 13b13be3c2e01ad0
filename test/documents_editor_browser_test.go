package test

import (
	"context"
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The editor's way in, in headless Chromium: pages served over https from another
// origin — as the published editors are — reach talkd's document doors on
// http://127.0.0.1 when (and only when) their origin is in [editor] origins. One page is
// the live client of test/live (load, PATCH with checksum/clientId/seq, long-poll feed),
// one does what the editor's Share button does (GET /info, POST /documents, GET the new
// document); the live page also takes the history menu's steps (milestone PATCH, POST
// …/restore, GET …/history). What crossed the wire is read from Chromium's network log.

// shareResult is what share.html writes into #result.
type shareResult struct {
	Secure        bool           `json:"secure"`
	Info          map[string]any `json:"info"`
	CreateStatus  int            `json:"createStatus"`
	Created       map[string]any `json:"created"`
	Fetched       map[string]any `json:"fetched"`
	Error         string         `json:"error"`
	ProblemDetail string         `json:"problemDetail"`
}

const sharePage = `<!doctype html>
<html><head><meta charset="utf-8"><title>running</title></head><body><pre id="result"></pre>
<script>
(async () => {
  const q = new URLSearchParams(location.search);
  const base = q.get('base');
  const out = {secure: window.isSecureContext};
  try {
    let r = await fetch(base + '/api/v1/info', {cache: 'no-store', credentials: 'omit'});
    out.info = await r.json();
    r = await fetch(base + '/api/v1/documents', {method: 'POST', credentials: 'omit',
      headers: {'Content-Type': 'application/json'},
      body: JSON.stringify({title: q.get('title'), content: q.get('content')})});
    out.createStatus = r.status;
    const body = await r.json();
    if (r.ok) {
      out.created = body;
      out.fetched = await (await fetch(body.url, {cache: 'no-store', credentials: 'omit'})).json();
    } else {
      out.problemDetail = body.detail;
    }
  } catch (e) {
    out.error = e.name + ': ' + e.message;
  }
  document.getElementById('result').textContent = JSON.stringify(out);
  document.title = 'done';
})();
</script></body></html>
`

// httpsPages serves the repository root (test/live/page.html and the scripts it loads)
// and share.html over TLS with httptest's self-signed certificate.
func httpsPages(t *testing.T) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	mux.Handle("/", http.FileServer(http.Dir(repoRoot())))
	mux.HandleFunc("/share.html", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, sharePage)
	})
	srv := httptest.NewUnstartedServer(mux)
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv
}

// chromiumHTTPS opens page (on the https page server) in a fresh headless Chromium that
// accepts the test certificate, and returns #result and the network log.
func chromiumHTTPS(t *testing.T, chromium, page string) (string, []browserExchange) {
	t.Helper()
	dir := t.TempDir()
	netlog := filepath.Join(dir, "netlog.json")
	dom, stderr := chromiumDOM(t, chromium, page, dir, "--ignore-certificate-errors",
		"--log-net-log="+netlog, "--virtual-time-budget=30000")
	m := browserResultRe.FindStringSubmatch(dom)
	if !strings.Contains(dom, "<title>done</title>") || m == nil {
		t.Fatalf("the page did not finish; DOM:\n%s\nstderr:\n%s", browserTail(dom), browserTail(stderr))
	}
	raw, err := os.ReadFile(netlog)
	if err != nil {
		t.Fatalf("read Chromium's network log: %v", err)
	}
	exchanges, err := browserParseNetLog(raw)
	if err != nil {
		t.Fatalf("parse Chromium's network log: %v", err)
	}
	return html.UnescapeString(m[1]), exchanges
}

// liveHTTPS runs test/live/page.html from the https server against docURL.
func liveHTTPS(t *testing.T, chromium, pages, docURL, name string, steps []map[string]any) (liveState, []browserExchange) {
	t.Helper()
	rawSteps, _ := json.Marshal(steps)
	q := url.Values{"doc": {docURL}, "name": {name}, "wait": {"5"}, "timeout": {"20000"}, "steps": {string(rawSteps)}}
	result, exchanges := chromiumHTTPS(t, chromium, pages+"/test/live/page.html?"+q.Encode())
	var st liveState
	if err := json.Unmarshal([]byte(result), &st); err != nil {
		t.Fatalf("#result is not JSON: %v\n%s", err, result)
	}
	return st, exchanges
}

// TestBrowserEditorOverHTTPS: an https page of a listed editor origin edits a plan live
// and shares a new one; the same pages without the setting cannot reach talkd.
func TestBrowserEditorOverHTTPS(t *testing.T) {
	if testing.Short() {
		t.Skip("starts headless Chromium; skipped with -short")
	}
	t.Parallel()
	chromium := browserFind(t)
	pages := httpsPages(t)
	if !strings.HasPrefix(pages.URL, "https://") {
		t.Fatalf("the page server is not https: %s", pages.URL)
	}
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	notes := filepath.Join(base, "notes")
	if err := os.MkdirAll(notes, 0o755); err != nil {
		t.Fatal(err)
	}
	plan := filepath.Join(notes, "p.werkbaum")
	if err := os.WriteFile(plan, []byte(docPlanText), 0o644); err != nil {
		t.Fatal(err)
	}
	rootCfg := "version = 1\n[[roots]]\nname = \"notes\"\npath = \"" + notes + "\"\ncreate = true\n"
	d := startDaemon(t, daemonOptions{Config: rootCfg + "[editor]\norigins = [\"" + pages.URL + "\"]\n"})
	agent := newMCPClient(d)
	agent.headers = map[string]string{"X-Talk-Agent": "Agent Jörg"}
	const key = "notes:p.werkbaum"
	docURL := d.URL + docPathOf(t, d, agent, key)

	t.Run("live edit", func(t *testing.T) {
		// The page appends a line; then an agent closes #a, which reaches the page
		// through its feed.
		go func() {
			for range 600 { // 30 s
				if b, err := os.ReadFile(plan); err == nil && strings.Contains(string(b), "#p: Aus dem Editor") {
					ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
					defer cancel()
					a, err := agent.call(ctx, "werkbaum_read", map[string]any{"plan": key})
					var r readAnswer
					if err == nil {
						err = a.decode(&r)
					}
					if err == nil {
						a, err = agent.call(ctx, "werkbaum_set_status", writeArgs(key, r.Base, "https-1", map[string]any{"id": "a", "status": "done"}))
					}
					if err != nil || a.IsError {
						t.Errorf("the agent's write: %v %+v", err, a)
					}
					return
				}
				time.Sleep(50 * time.Millisecond)
			}
		}()
		st, exchanges := liveHTTPS(t, chromium, pages.URL, docURL, "Browser Müller", []map[string]any{
			{"insert": []any{4, "  - [ ] #p: Aus dem Editor für @jörg (XS)"}},
			{"settle": true},
			{"waitEvent": "Agent Jörg"},
			{"waitText": "[x] #a: Alpha"},
		})
		if st.Error != "" {
			t.Fatalf("the live page failed: %s\nlog:\n%s", st.Error, strings.Join(st.Log, "\n"))
		}
		want := strings.Replace(docPlanText, "[ ] #a: Alpha", "[x] #a: Alpha", 1) + "  - [ ] #p: Aus dem Editor für @jörg (XS)\n"
		if got := string(readFile(t, plan)); got != want || st.Text != want {
			t.Errorf("the file:\n%s\nthe page:\n%s\nwant\n%s", got, st.Text, want)
		}
		if len(st.Patches) != 1 || st.Patches[0].Status != http.StatusOK {
			t.Errorf("the page's PATCHes: %+v", st.Patches)
		}
		checkEditorExchanges(t, exchanges, d.Addr, pages.URL, http.MethodPatch)
	})

	t.Run("milestone and restore", func(t *testing.T) {
		// The camera button marks the current version, the page types on, then restores the
		// marked version from the history: the file and the page go back, and the history
		// names the page's person for the mark, the save and the restore.
		var doc docDocument
		newDocHTTP(d, nil).must(t, http.MethodGet, docURL[len(d.URL):], nil).decode(t, &doc)
		marked := doc.Version
		st, exchanges := liveHTTPS(t, chromium, pages.URL, docURL, "Browser Müller", []map[string]any{
			{"milestone": true},
			{"insert": []any{5, "  - [ ] #q: Noch eine für @Müller (XS)"}},
			{"settle": true},
			{"restore": marked},
			{"history": true},
		})
		if st.Error != "" {
			t.Fatalf("the live page failed: %s\nlog:\n%s", st.Error, strings.Join(st.Log, "\n"))
		}
		if got := string(readFile(t, plan)); got != doc.Content || st.Text != doc.Content || st.Version != marked+2 {
			t.Errorf("after the restore the file is\n%s\nthe page (version %d)\n%s\nwant version %d\n%s", got, st.Version, st.Text, marked+2, doc.Content)
		}
		if len(st.Patches) != 2 || st.Patches[0].Status != http.StatusOK || st.Patches[0].Version == nil || *st.Patches[0].Version != marked ||
			len(st.Restores) != 1 || st.Restores[0].Status != http.StatusOK {
			t.Errorf("the page's PATCHes %+v and restores %+v", st.Patches, st.Restores)
		}
		byVersion := map[uint64]docHistoryEntry{}
		for _, e := range st.History {
			byVersion[e.Version] = e
		}
		if e := byVersion[marked]; !e.Milestone || e.MarkedBy != "Browser Müller" {
			t.Errorf("the marked version %d in the page's history: %+v", marked, e)
		}
		if e := byVersion[marked+1]; e.DisplayName != "Browser Müller" || e.Milestone || !strings.Contains(e.Content, "#q: Noch eine") {
			t.Errorf("the page's save %d in its history: %+v", marked+1, e)
		}
		if e := byVersion[marked+2]; e.ChangeType != "RESTORED" || e.DisplayName != "Browser Müller" || e.RestoredFrom != marked {
			t.Errorf("the restore %d in the page's history: %+v", marked+2, e)
		}
		checkEditorExchanges(t, exchanges, d.Addr, pages.URL, http.MethodPost)
	})

	t.Run("share", func(t *testing.T) {
		q := url.Values{"base": {d.URL}, "title": {"Geteilt von Müller"}, "content": {"[ ] #root: Geteilt (M)\n"}}
		raw, exchanges := chromiumHTTPS(t, chromium, pages.URL+"/share.html?"+q.Encode())
		var res shareResult
		if err := json.Unmarshal([]byte(raw), &res); err != nil {
			t.Fatalf("#result: %v\n%s", err, raw)
		}
		features, _ := res.Info["features"].(map[string]any)
		if res.Error != "" || !res.Secure || features["create"] != true || res.CreateStatus != http.StatusCreated {
			t.Fatalf("share page: %+v", res)
		}
		if res.Created["key"] != "notes:Geteilt von Müller.werkbaum" || res.Fetched["content"] != "[ ] #root: Geteilt (M)\n" ||
			res.Fetched["title"] != "Geteilt von Müller" {
			t.Errorf("created %v, fetched %v", res.Created, res.Fetched)
		}
		if got := string(readFile(t, filepath.Join(notes, "Geteilt von Müller.werkbaum"))); got != "[ ] #root: Geteilt (M)\n" {
			t.Errorf("the shared file: %q", got)
		}
		checkEditorExchanges(t, exchanges, d.Addr, pages.URL, http.MethodPost)
	})

	t.Run("origin not listed", func(t *testing.T) {
		closed := startDaemon(t, daemonOptions{Config: rootCfg})
		closedDoc := closed.URL + docPathOf(t, closed, newMCPClient(closed), "notes:p.werkbaum")
		st, exchanges := liveHTTPS(t, chromium, pages.URL, closedDoc, "Browser Müller", []map[string]any{
			{"insert": []any{0, "# darf nicht ankommen"}},
		})
		if st.Error == "" {
			t.Fatalf("the page reached talkd without its origin listed: %+v", st)
		}
		for _, x := range exchanges {
			if x.Host != closed.Addr {
				continue
			}
			if x.Method == http.MethodPatch {
				t.Errorf("Chromium sent a PATCH from an unlisted origin: %+v", x)
			}
			for k := range x.Header {
				if strings.HasPrefix(strings.ToLower(k), "access-control-") {
					t.Errorf("%s %s answered an unlisted origin with %s", x.Method, x.Path, k)
				}
			}
		}
		if strings.Contains(string(readFile(t, plan)), "darf nicht ankommen") {
			t.Error("the unlisted page changed the plan")
		}
	})
}

// checkEditorExchanges checks, in Chromium's own log, that the page's request with method
// went to talkd after a preflight that was answered for the page's origin, and that every
// answer of talkd carried that origin.
func checkEditorExchanges(t *testing.T, exchanges []browserExchange, addr, origin, method string) {
	t.Helper()
	preflighted, sent := false, false
	for _, x := range exchanges {
		if x.Host != addr {
			continue
		}
		if got := x.RequestHeader.Get("Origin"); got != origin {
			t.Errorf("%s %s sent Origin %q, want %q", x.Method, x.Path, got, origin)
		}
		if x.Status != 0 && x.Header.Get("Access-Control-Allow-Origin") != origin {
			t.Errorf("%s %s answered %d without Access-Control-Allow-Origin %s: %v", x.Method, x.Path, x.Status, origin, x.Header)
		}
		switch x.Method {
		case http.MethodOptions:
			if strings.EqualFold(x.RequestHeader.Get("Access-Control-Request-Method"), method) {
				preflighted = true
				if !strings.Contains(x.Header.Get("Access-Control-Allow-Methods"), method) {
					t.Errorf("the preflight for %s allowed %q", method, x.Header.Get("Access-Control-Allow-Methods"))
				}
			}
		case method:
			sent = true
		}
	}
	if !preflighted || !sent {
		t.Errorf("want a preflight for %s and the %s itself; Chromium's exchanges with talkd: %+v", method, method, exchanges)
	}
}

// TestBrowserEditorFromPublicAddress: the published editors are pages on public
// addresses, and Chromium lets such a page reach a loopback address only with the
// person's permission (local network access) and talkd's CORS answer. Chromium is told
// that the https page server is public (--ip-address-space-overrides) and is driven over
// the DevTools protocol, which grants the permission a person would: without it the
// fetches fail and nothing is created; with it the share page creates a plan and the
// live client edits one; with it but without the origin in [editor] origins, CORS blocks.
func TestBrowserEditorFromPublicAddress(t *testing.T) {
	if testing.Short() {
		t.Skip("starts headless Chromium; skipped with -short")
	}
	t.Parallel()
	chromium := browserFind(t)
	pages := httpsPages(t)
	host := strings.TrimPrefix(pages.URL, "https://")
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	notes := filepath.Join(base, "notes")
	if err := os.MkdirAll(notes, 0o755); err != nil {
		t.Fatal(err)
	}
	plan := filepath.Join(notes, "p.werkbaum")
	if err := os.WriteFile(plan, []byte(docPlanText), 0o644); err != nil {
		t.Fatal(err)
	}
	rootCfg := "version = 1\n[[roots]]\nname = \"notes\"\npath = \"" + notes + "\"\ncreate = true\n"
	listed := startDaemon(t, daemonOptions{Config: rootCfg + "[editor]\norigins = [\"" + pages.URL + "\"]\n"})
	unlisted := startDaemon(t, daemonOptions{Config: rootCfg})

	run := func(t *testing.T, grant bool, page string) string {
		t.Helper()
		b := startCDP(t, chromium, "--ignore-certificate-errors", "--ip-address-space-overrides="+host+"=public")
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		if grant {
			if err := b.call(ctx, "", "Browser.grantPermissions",
				map[string]any{"permissions": []string{"loopbackNetwork"}, "origin": pages.URL}, nil); err != nil {
				t.Fatal(err)
			}
		}
		session, err := b.open(ctx, page)
		if err != nil {
			t.Fatal(err)
		}
		res, err := b.waitDone(ctx, session)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	share := func(t *testing.T, d *daemon, grant bool, title string) shareResult {
		t.Helper()
		q := url.Values{"base": {d.URL}, "title": {title}, "content": {"[ ] #root: " + title + " (M)\n"}}
		var res shareResult
		if raw := run(t, grant, pages.URL+"/share.html?"+q.Encode()); json.Unmarshal([]byte(raw), &res) != nil {
			t.Fatalf("#result: %s", raw)
		}
		return res
	}
	exists := func(title string) bool {
		_, err := os.Stat(filepath.Join(notes, title+".werkbaum"))
		return err == nil
	}

	t.Run("without permission", func(t *testing.T) {
		res := share(t, listed, false, "Ohne Erlaubnis")
		if res.Error == "" || !strings.HasPrefix(res.Error, "TypeError") || exists("Ohne Erlaubnis") {
			t.Errorf("a public page reached talkd without the permission: %+v", res)
		}
	})
	t.Run("with permission", func(t *testing.T) {
		res := share(t, listed, true, "Mit Erlaubnis")
		if res.Error != "" || res.CreateStatus != http.StatusCreated || !exists("Mit Erlaubnis") {
			t.Fatalf("share from a public page with the permission: %+v", res)
		}
		q := url.Values{"doc": {listed.URL + docPathOf(t, listed, newMCPClient(listed), "notes:p.werkbaum")},
			"name": {"Öffentliche Seite"}, "wait": {"5"}, "timeout": {"20000"},
			"steps": {`[{"insert":[4,"  - [ ] #q: Von außen (XS)"]},{"settle":true}]`}}
		var st liveState
		if raw := run(t, true, pages.URL+"/test/live/page.html?"+q.Encode()); json.Unmarshal([]byte(raw), &st) != nil {
			t.Fatalf("#result: %s", raw)
		}
		if st.Error != "" || !strings.Contains(string(readFile(t, plan)), "#q: Von außen") {
			t.Errorf("the live page from a public address: %s\nlog:\n%s", st.Error, strings.Join(st.Log, "\n"))
		}
	})
	t.Run("with permission, origin not listed", func(t *testing.T) {
		res := share(t, unlisted, true, "Nicht gelistet")
		if res.Error == "" || exists("Nicht gelistet") {
			t.Errorf("an unlisted public page reached talkd: %+v", res)
		}
	})
}
