package test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The browser tests check the CORS door (ARCHITECTURE §3.6) with the client it exists for:
// a real headless Chromium. Pages are served by httptest servers on other loopback ports,
// which makes them other origins than talkd; each page runs fetch calls to talkd's /speak
// and writes what it saw into its DOM, which Chromium dumps (--dump-dom). What crossed the
// wire is read from Chromium's own network log (--log-net-log), so the checks on preflight
// and response headers are the browser's view, not a Go client's. What was spoken comes
// from the fake provider's log.

// browserTimeout bounds one Chromium run; the process group is killed when it passes.
const browserTimeout = 90 * time.Second

// browserSpeakerToken is the shared-mode client's token (≥ 32 characters).
var browserSpeakerToken = "brw-" + strings.Repeat("b", 36)

// TestBrowserCORS checks in headless Chromium that /speak is callable from a listed origin
// and blocked from an unlisted one, in local mode and in shared mode with and without a
// bearer token.
func TestBrowserCORS(t *testing.T) {
	if testing.Short() {
		t.Skip("starts headless Chromium; skipped with -short")
	}
	t.Parallel()
	chromium := browserFind(t)
	listed := newBrowserPages(t)
	unlisted := newBrowserPages(t)
	if listed.Origin == unlisted.Origin {
		t.Fatalf("the two page servers share the origin %s", listed.Origin)
	}

	t.Run("local", func(t *testing.T) {
		d := startDaemon(t, daemonOptions{Env: map[string]string{"TALK_ALLOWED_ORIGINS": listed.Origin}})

		// From the listed origin the README's fetch works and is spoken.
		run := browserRun(t, chromium, listed, []browserFetch{
			browserJSONFetch("listed", d.URL, "browser local listed", nil),
		})
		got := run.result(t, "listed")
		if !got.OK || got.Status != http.StatusAccepted || !strings.Contains(got.Body, `"status":"queued"`) {
			t.Fatalf("fetch from the listed origin %s: %+v", listed.Origin, got)
		}
		if got.Type != "cors" {
			t.Errorf("response type %q, want cors", got.Type)
		}
		browserWaitText(t, d, "browser local listed")
		pre := run.exchanges(d.Addr, http.MethodOptions)
		if len(pre) == 0 {
			t.Fatalf("Chromium sent no preflight for a JSON POST; exchanges: %+v", run.all(d.Addr))
		}
		for _, x := range pre {
			browserCheckPreflightAllowed(t, x, listed.Origin)
		}
		posts := run.exchanges(d.Addr, http.MethodPost)
		if len(posts) != 1 || posts[0].Status != http.StatusAccepted || posts[0].Header.Get("Access-Control-Allow-Origin") != listed.Origin {
			t.Errorf("POST as Chromium saw it: %+v", posts)
		}

		// From an unlisted origin the same fetch is blocked at the preflight: TypeError in
		// the page, no CORS header in the preflight's answer, no POST, nothing spoken.
		run = browserRun(t, chromium, unlisted, []browserFetch{
			browserJSONFetch("unlisted", d.URL, "browser local unlisted", nil),
		})
		browserCheckBlocked(t, run, d.Addr, "unlisted")
		browserCheckNotSpoken(t, d, "", "browser local unlisted")
	})

	t.Run("shared", func(t *testing.T) {
		d := startDaemon(t, daemonOptions{
			Config: "version = 1\n\n[[clients]]\nid = \"page\"\ntoken_env = \"TOK_PAGE\"\nspeak = true\n",
			Env:    map[string]string{"TALK_ALLOWED_ORIGINS": listed.Origin, "TOK_PAGE": browserSpeakerToken},
		})
		bearer := map[string]string{"Authorization": "Bearer " + browserSpeakerToken}

		// Listed origin: with the token the preflight (which never carries the token)
		// passes and the POST speaks; without it the page reads the 401.
		run := browserRun(t, chromium, listed, []browserFetch{
			browserJSONFetch("token", d.URL, "browser shared listed token", bearer),
			browserJSONFetch("no token", d.URL, "browser shared listed no token", nil),
		})
		got := run.result(t, "token")
		if !got.OK || got.Status != http.StatusAccepted || !strings.Contains(got.Body, `"status":"queued"`) {
			t.Fatalf("fetch with the token from the listed origin: %+v", got)
		}
		rec := browserWaitText(t, d, "browser shared listed token")
		if rec.Caller != "page" {
			t.Errorf("spoken for caller %q, want the client page", rec.Caller)
		}
		got = run.result(t, "no token")
		if !got.OK || got.Status != http.StatusUnauthorized || !strings.Contains(got.Body, `"unauthorized"`) {
			t.Fatalf("fetch without the token from the listed origin: want a readable 401, got %+v", got)
		}
		pre := run.exchanges(d.Addr, http.MethodOptions)
		if len(pre) == 0 {
			t.Fatalf("Chromium sent no preflight for a POST with Authorization; exchanges: %+v", run.all(d.Addr))
		}
		for _, x := range pre {
			browserCheckPreflightAllowed(t, x, listed.Origin)
		}
		if !browserAskedFor(pre, "authorization") {
			t.Errorf("no preflight asked for Authorization: %+v", pre)
		}
		posts := run.exchanges(d.Addr, http.MethodPost)
		if len(posts) != 2 {
			t.Fatalf("Chromium sent %d POSTs, want 2: %+v", len(posts), posts)
		}
		if posts[0].RequestHeader.Get("Authorization") == "" || posts[1].RequestHeader.Get("Authorization") != "" {
			t.Errorf("Authorization sent %q and %q, want it on the first POST only",
				posts[0].RequestHeader.Get("Authorization"), posts[1].RequestHeader.Get("Authorization"))
		}
		statuses := []int{posts[0].Status, posts[1].Status}
		if statuses[0] != http.StatusAccepted || statuses[1] != http.StatusUnauthorized {
			t.Errorf("POST statuses as Chromium saw them %v, want [202 401]", statuses)
		}
		for _, x := range posts {
			if x.Header.Get("Access-Control-Allow-Origin") != listed.Origin {
				t.Errorf("POST answer %d without Access-Control-Allow-Origin: %v", x.Status, x.Header)
			}
		}

		// Unlisted origin: blocked at the preflight whether or not the page has the token.
		run = browserRun(t, chromium, unlisted, []browserFetch{
			browserJSONFetch("token", d.URL, "browser shared unlisted token", bearer),
			browserJSONFetch("no token", d.URL, "browser shared unlisted no token", nil),
		})
		browserCheckBlocked(t, run, d.Addr, "token", "no token")
		if !browserAskedFor(run.exchanges(d.Addr, http.MethodOptions), "authorization") {
			t.Errorf("no preflight from the unlisted page asked for Authorization: %+v", run.all(d.Addr))
		}
		browserCheckNotSpoken(t, d, "Bearer "+browserSpeakerToken, "browser shared unlisted token", "browser shared unlisted no token")
	})
}

// TestBrowserSimplePostFromUnlistedOrigin checks that a page of an unlisted origin cannot
// make talkd speak with a "simple" cross-origin request: one Chromium sends without a
// preflight (Content-Type text/plain, or mode no-cors, as a form post would). CORS only
// keeps such a page from reading the answer; the request itself reaches the daemon, so
// the door has to refuse it by its Origin. Both a daemon with an allow-list and one with
// the default empty list are asked, from one page.
func TestBrowserSimplePostFromUnlistedOrigin(t *testing.T) {
	if testing.Short() {
		t.Skip("starts headless Chromium; skipped with -short")
	}
	t.Parallel()
	chromium := browserFind(t)
	listed := newBrowserPages(t)
	unlisted := newBrowserPages(t)
	withList := startDaemon(t, daemonOptions{Env: map[string]string{"TALK_ALLOWED_ORIGINS": listed.Origin}})
	closed := startDaemon(t, daemonOptions{})

	var fetches []browserFetch
	texts := map[*daemon][]string{}
	for _, target := range []struct {
		name string
		d    *daemon
	}{{"with list", withList}, {"closed", closed}} {
		for _, mode := range []string{"cors", "no-cors"} {
			name := target.name + " text/plain " + mode
			f := browserJSONFetch(name, target.d.URL, "browser simple "+name, nil)
			f.Headers = map[string]string{"Content-Type": "text/plain;charset=UTF-8"}
			f.Mode = mode
			fetches = append(fetches, f)
			texts[target.d] = append(texts[target.d], "browser simple "+name)
		}
	}
	run := browserRun(t, chromium, unlisted, fetches)
	for _, f := range fetches {
		got := run.result(t, f.Name)
		switch {
		case f.Mode == "no-cors" && (!got.OK || got.Type != "opaque"):
			t.Errorf("%s: want an opaque response, got %+v", f.Name, got)
		case f.Mode == "cors" && got.OK:
			t.Errorf("%s: the page read the answer: %+v", f.Name, got)
		}
	}
	for d, want := range texts {
		posts := run.exchanges(d.Addr, http.MethodPost)
		if len(posts) != len(want) || len(run.exchanges(d.Addr, http.MethodOptions)) != 0 {
			t.Fatalf("want %d POSTs without preflight, Chromium sent: %+v", len(want), run.all(d.Addr))
		}
		for _, x := range posts {
			for k := range x.Header {
				if strings.HasPrefix(strings.ToLower(k), "access-control-") {
					t.Errorf("POST from an unlisted origin answered with %s: %v", k, x.Header)
				}
			}
		}
		browserCheckNotSpoken(t, d, "", want...)
	}
}

// browserCheckPreflightAllowed checks a preflight answer to a listed origin, and that the
// preflight itself carried no credentials (browsers never send them there, so the door
// must not ask for them).
func browserCheckPreflightAllowed(t *testing.T, x browserExchange, origin string) {
	t.Helper()
	if x.Status != http.StatusNoContent {
		t.Errorf("preflight status %d, want 204", x.Status)
	}
	if got := x.Header.Get("Access-Control-Allow-Origin"); got != origin {
		t.Errorf("preflight Access-Control-Allow-Origin %q, want %q", got, origin)
	}
	if got := x.Header.Get("Access-Control-Allow-Methods"); got != "POST, OPTIONS" {
		t.Errorf("preflight Access-Control-Allow-Methods %q", got)
	}
	if got := x.Header.Get("Access-Control-Allow-Headers"); got != "Content-Type, Authorization" {
		t.Errorf("preflight Access-Control-Allow-Headers %q", got)
	}
	if x.RequestHeader.Get("Authorization") != "" {
		t.Errorf("the preflight carried Authorization: %v", x.RequestHeader)
	}
}

// browserAskedFor reports whether one of the preflights asked to send header.
func browserAskedFor(preflights []browserExchange, header string) bool {
	for _, x := range preflights {
		for _, h := range strings.Split(x.RequestHeader.Get("Access-Control-Request-Headers"), ",") {
			if strings.EqualFold(strings.TrimSpace(h), header) {
				return true
			}
		}
	}
	return false
}

// browserCheckBlocked checks that the named fetches failed with a TypeError, that Chromium
// preflighted, that every answer it got from talkd (at addr) carried no CORS header but
// Vary: Origin, and that no POST went out.
func browserCheckBlocked(t *testing.T, run *browserResult, addr string, names ...string) {
	t.Helper()
	for _, name := range names {
		got := run.result(t, name)
		if got.OK || !strings.HasPrefix(got.Error, "TypeError") {
			t.Errorf("fetch %q from the unlisted origin: want a TypeError, got %+v", name, got)
		}
	}
	all := run.all(addr)
	if len(run.exchanges(addr, http.MethodOptions)) == 0 {
		t.Errorf("no preflight seen; exchanges: %+v", all)
	}
	for _, x := range all {
		if x.Method == http.MethodPost {
			t.Errorf("Chromium sent a POST from the unlisted origin: %+v", x)
		}
		for k := range x.Header {
			if strings.HasPrefix(strings.ToLower(k), "access-control-") {
				t.Errorf("%s %s answered an unlisted origin with %s: %v", x.Method, x.Path, k, x.Header)
			}
		}
		if x.Header.Get("Vary") != "Origin" {
			t.Errorf("%s %s without Vary: Origin: %v", x.Method, x.Path, x.Header)
		}
	}
}

// browserCheckNotSpoken speaks a sentinel from Go and waits for it, so every earlier
// request has been handled, then checks that none of texts was spoken.
func browserCheckNotSpoken(t *testing.T, d *daemon, authorization string, texts ...string) {
	t.Helper()
	sentinel := fmt.Sprintf("browser sentinel %d", time.Now().UnixNano())
	h := map[string]string{}
	if authorization != "" {
		h["Authorization"] = authorization
	}
	status, ans := d.postJSON(t, "/speak", map[string]any{"text": sentinel, "now": true}, h)
	if status != http.StatusAccepted {
		t.Fatalf("sentinel: %d %v", status, ans)
	}
	browserWaitText(t, d, sentinel)
	for _, r := range d.spoken(t) {
		for _, text := range texts {
			if r.Text == text {
				t.Errorf("spoken although the browser should have blocked it: %+v", r)
			}
		}
	}
}

// browserWaitText waits until the fake provider has spoken text and returns its record.
func browserWaitText(t *testing.T, d *daemon, text string) spokenRecord {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		for _, r := range d.spoken(t) {
			if r.Text == text {
				return r
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%q was not spoken; fake log: %+v", text, d.spoken(t))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// browserFind returns Chromium's path. A missing browser is installed from Debian only
// when the test runs as root in CI (CI=true) or TALK_INSTALL_BROWSER=1; otherwise the
// test is skipped with the command that would install it.
func browserFind(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("TALK_CHROMIUM"); p != "" {
		return p
	}
	look := func() string {
		if _, err := os.Stat("/usr/bin/chromium"); err == nil {
			return "/usr/bin/chromium"
		}
		if p, err := exec.LookPath("chromium"); err == nil {
			return p
		}
		return ""
	}
	if p := look(); p != "" {
		return p
	}
	mayInstall := os.Getenv("CI") == "true" || os.Getenv("TALK_INSTALL_BROWSER") == "1"
	if !mayInstall || os.Geteuid() != 0 {
		t.Skip("Chromium not found at /usr/bin/chromium: install it with `apt-get install -y chromium`, " +
			"or run as root with CI=true or TALK_INSTALL_BROWSER=1 to let this test install it")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	apt := func(args ...string) error {
		cmd := exec.CommandContext(ctx, "apt-get", args...)
		cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
		out, err := cmd.CombinedOutput()
		if err != nil {
			return fmt.Errorf("apt-get %s: %w\n%s", strings.Join(args, " "), err, out)
		}
		return nil
	}
	if err := apt("install", "-y", "-qq", "chromium"); err != nil {
		t.Logf("first install attempt failed, updating the package lists: %v", err)
		if err := apt("update", "-qq"); err != nil {
			t.Fatal(err)
		}
		if err := apt("install", "-y", "-qq", "chromium"); err != nil {
			t.Fatal(err)
		}
	}
	p := look()
	if p == "" {
		t.Fatal("apt-get installed chromium but /usr/bin/chromium is still missing")
	}
	return p
}

// browserFetch is one fetch a page runs: a POST of body to url with headers.
type browserFetch struct {
	Name    string            `json:"name"`
	URL     string            `json:"url"`
	Headers map[string]string `json:"headers"`
	Body    string            `json:"body"`
	// Mode is fetch's mode: "cors" (also when empty) or "no-cors".
	Mode string `json:"mode,omitempty"`
}

// browserJSONFetch is the README's fetch: a JSON body, so a cross-origin call preflights.
func browserJSONFetch(name, base, text string, headers map[string]string) browserFetch {
	h := map[string]string{"Content-Type": "application/json"}
	for k, v := range headers {
		h[k] = v
	}
	body, _ := json.Marshal(map[string]any{"text": text, "now": true})
	return browserFetch{Name: name, URL: base + "/speak", Headers: h, Body: string(body)}
}

// browserPages serves the test pages of one origin: each run registers its fetches under
// a fresh path.
type browserPages struct {
	Origin string

	mu    sync.Mutex
	pages map[string][]browserFetch
	next  int
}

func newBrowserPages(t *testing.T) *browserPages {
	t.Helper()
	p := &browserPages{pages: map[string][]browserFetch{}}
	srv := httptest.NewServer(p)
	t.Cleanup(srv.Close)
	p.Origin = srv.URL
	return p
}

// add registers a page running fetches and returns its URL.
func (p *browserPages) add(fetches []browserFetch) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.next++
	path := "/page/" + strconv.Itoa(p.next)
	p.pages[path] = fetches
	return p.Origin + path
}

// browserPageScript runs the fetches one after another and writes one result per fetch as
// JSON into #result; the title turns "done" when all are settled.
const browserPageScript = `
(async () => {
  const fetches = JSON.parse(document.getElementById("fetches").textContent);
  const results = [];
  for (const f of fetches) {
    const r = {name: f.name};
    try {
      const resp = await fetch(f.url, {method: "POST", mode: f.mode || "cors", headers: f.headers, body: f.body});
      r.ok = true; r.status = resp.status; r.type = resp.type; r.body = await resp.text();
    } catch (e) {
      r.ok = false; r.error = e.name + ": " + e.message;
    }
    results.push(r);
  }
  document.getElementById("result").textContent = JSON.stringify(results);
  document.title = "done";
})();
`

func (p *browserPages) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	fetches, ok := p.pages[r.URL.Path]
	p.mu.Unlock()
	if !ok {
		http.NotFound(w, r)
		return
	}
	// json.Marshal escapes <, > and &, so the data cannot close the script element.
	data, err := json.Marshal(fetches)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	fmt.Fprintf(w, "<!doctype html>\n<html><head><title>running</title></head><body>\n"+
		"<script type=\"application/json\" id=\"fetches\">%s</script>\n"+
		"<pre id=\"result\"></pre>\n<script>%s</script>\n</body></html>\n", data, browserPageScript)
}

// browserFetchResult is what the page saw of one fetch.
type browserFetchResult struct {
	Name   string `json:"name"`
	OK     bool   `json:"ok"`
	Status int    `json:"status"`
	Type   string `json:"type"`
	Body   string `json:"body"`
	Error  string `json:"error"`
}

// browserExchange is one HTTP request and answer as Chromium's network log recorded them.
type browserExchange struct {
	Host          string
	Method        string
	Path          string
	RequestHeader http.Header
	Status        int
	Header        http.Header
}

// browserResult is one Chromium run: the page's results and the network log.
type browserResult struct {
	Results   []browserFetchResult
	Exchanges []browserExchange
}

func (r *browserResult) result(t *testing.T, name string) browserFetchResult {
	t.Helper()
	for _, x := range r.Results {
		if x.Name == name {
			return x
		}
	}
	t.Fatalf("the page reported no fetch %q: %+v", name, r.Results)
	return browserFetchResult{}
}

// all returns the exchanges with host (host:port).
func (r *browserResult) all(host string) []browserExchange {
	var out []browserExchange
	for _, x := range r.Exchanges {
		if x.Host == host {
			out = append(out, x)
		}
	}
	return out
}

// exchanges returns the exchanges with host that used method.
func (r *browserResult) exchanges(host, method string) []browserExchange {
	var out []browserExchange
	for _, x := range r.all(host) {
		if x.Method == method {
			out = append(out, x)
		}
	}
	return out
}

var browserResultRe = regexp.MustCompile(`(?s)<pre id="result">(.*?)</pre>`)

// chromiumDOM runs a fresh headless Chromium (profile and HOME in dir) on page with the
// extra flags, bounded by browserTimeout, and returns the dumped DOM and its stderr.
// Chromium forks a zygote and helpers: it runs in its own process group, killed whole on
// timeout and after it exits.
func chromiumDOM(t *testing.T, chromium, page, dir string, flags ...string) (dom, stderr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), browserTimeout)
	defer cancel()
	args := append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--disable-dev-shm-usage", "--user-data-dir=" + filepath.Join(dir, "profile")}, flags...)
	cmd := exec.CommandContext(ctx, chromium, append(args, "--dump-dom", page)...)
	cmd.Env = append(os.Environ(), "HOME="+dir)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	start := time.Now()
	err := cmd.Run()
	if cmd.Process != nil {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	if ctx.Err() != nil {
		t.Fatalf("Chromium did not finish %s within %s; stderr:\n%s", page, browserTimeout, browserTail(errOut.String()))
	}
	if err != nil {
		t.Fatalf("chromium %s: %v; stderr:\n%s", page, err, browserTail(errOut.String()))
	}
	t.Logf("Chromium ran %s in %s", page, time.Since(start).Round(time.Millisecond))
	return out.String(), errOut.String()
}

// browserRun opens a page of pages running fetches in a fresh headless Chromium, bounded
// by browserTimeout, and returns what the page reported and what crossed the wire.
func browserRun(t *testing.T, chromium string, pages *browserPages, fetches []browserFetch) *browserResult {
	t.Helper()
	dir := t.TempDir()
	netlog := filepath.Join(dir, "netlog.json")
	url := pages.add(fetches)
	dom, stderr := chromiumDOM(t, chromium, url, dir, "--log-net-log="+netlog, "--virtual-time-budget=10000")
	if !strings.Contains(dom, "<title>done</title>") {
		t.Fatalf("the page did not finish its fetches; DOM:\n%s\nstderr:\n%s", dom, browserTail(stderr))
	}
	m := browserResultRe.FindStringSubmatch(dom)
	if m == nil {
		t.Fatalf("no #result in the DOM:\n%s", dom)
	}
	res := &browserResult{}
	if err := json.Unmarshal([]byte(html.UnescapeString(m[1])), &res.Results); err != nil {
		t.Fatalf("#result is not JSON: %v\n%s", err, m[1])
	}
	raw, err := os.ReadFile(netlog)
	if err != nil {
		t.Fatalf("read Chromium's network log: %v", err)
	}
	if res.Exchanges, err = browserParseNetLog(raw); err != nil {
		t.Fatalf("parse Chromium's network log: %v", err)
	}
	return res
}

// browserTail is the end of a long log, enough to see why Chromium failed.
func browserTail(s string) string {
	if len(s) > 4000 {
		return "…" + s[len(s)-4000:]
	}
	return s
}

// browserParseNetLog extracts the HTTP/1 exchanges from a Chromium NetLog file: the sent
// request headers and the received response headers, paired by the log's source id.
func browserParseNetLog(raw []byte) ([]browserExchange, error) {
	var log struct {
		Constants struct {
			LogEventTypes map[string]int `json:"logEventTypes"`
		} `json:"constants"`
		Events []struct {
			Type   int `json:"type"`
			Source struct {
				ID int `json:"id"`
			} `json:"source"`
			Params struct {
				Line    string   `json:"line"`
				Headers []string `json:"headers"`
			} `json:"params"`
		} `json:"events"`
	}
	if err := json.Unmarshal(raw, &log); err != nil {
		// A log cut short by a killed browser lacks its closing brackets.
		trimmed := strings.TrimRight(strings.TrimSpace(string(raw)), ",")
		if err2 := json.Unmarshal([]byte(trimmed+"]}"), &log); err2 != nil {
			return nil, fmt.Errorf("netlog is not JSON: %w", err)
		}
	}
	sendType, ok1 := log.Constants.LogEventTypes["HTTP_TRANSACTION_SEND_REQUEST_HEADERS"]
	readType, ok2 := log.Constants.LogEventTypes["HTTP_TRANSACTION_READ_RESPONSE_HEADERS"]
	if !ok1 || !ok2 {
		return nil, errors.New("netlog names no HTTP header events")
	}
	var out []browserExchange
	open := map[int]int{} // source id → index in out of the exchange waiting for its answer
	for _, ev := range log.Events {
		switch ev.Type {
		case sendType:
			fields := strings.Fields(ev.Params.Line)
			if len(fields) < 2 {
				continue
			}
			hdr := browserHeaderLines(ev.Params.Headers)
			out = append(out, browserExchange{Host: hdr.Get("Host"), Method: fields[0], Path: fields[1], RequestHeader: hdr})
			open[ev.Source.ID] = len(out) - 1
		case readType:
			i, ok := open[ev.Source.ID]
			if !ok || len(ev.Params.Headers) == 0 {
				continue
			}
			delete(open, ev.Source.ID)
			status := strings.Fields(ev.Params.Headers[0])
			if len(status) >= 2 {
				out[i].Status, _ = strconv.Atoi(status[1])
			}
			out[i].Header = browserHeaderLines(ev.Params.Headers[1:])
		}
	}
	return out, nil
}

// browserHeaderLines turns "Name: value" lines into a header map.
func browserHeaderLines(lines []string) http.Header {
	h := http.Header{}
	for _, l := range lines {
		k, v, ok := strings.Cut(l, ":")
		if ok {
			h.Add(strings.TrimSpace(k), strings.TrimSpace(v))
		}
	}
	return h
}
