package test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// redirectDocServer is a document server (DOCUMENTS.md) in front of which sits a proxy
// that answers talkd's PATCH with a redirect: the status and where it points are set per
// case. It serves GET of the document, applies a PATCH that reaches /moved/…/content (the
// same-origin target of a 307/308), and records what reached it.
type redirectDocServer struct {
	srv   *httptest.Server
	token string

	mu       sync.Mutex
	content  string
	version  uint64
	status   int    // the redirect answered to PATCH …/content (0: none, apply it)
	location string // where it points
	getRedir string // answer GET of the document with 301 to here as well ("": serve it)
	applied  []redirectHit
}

// redirectHit is one PATCH that reached a server's apply handler.
type redirectHit struct {
	Method, Auth string
	Seq          int64
}

const redirectDocID = "5a0c0f7e-9d1b-4c6e-8f2a-3b4c5d6e7f80"

func (d *redirectDocServer) docPath() string { return "/api/v1/documents/" + redirectDocID }

func (d *redirectDocServer) serve(w http.ResponseWriter, r *http.Request) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if r.Header.Get("Authorization") != "Bearer "+d.token {
		writeProblem(w, http.StatusUnauthorized, "a valid bearer token is required")
		return
	}
	switch {
	case r.Method == http.MethodGet && r.URL.Path == d.docPath():
		if d.getRedir != "" {
			w.Header().Set("Location", d.getRedir)
			w.WriteHeader(http.StatusMovedPermanently)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(docDocument{ID: redirectDocID, Title: "Plan", Content: d.content, Version: d.version})
	case r.URL.Path == d.docPath()+"/content" && d.status != 0:
		w.Header().Set("Location", d.location)
		w.WriteHeader(d.status)
	case r.URL.Path == d.docPath()+"/content" || r.URL.Path == "/moved"+d.docPath()+"/content":
		d.apply(w, r)
	default:
		writeProblem(w, http.StatusNotFound, "no "+r.URL.Path)
	}
}

// apply takes a PATCH whose base is the current version (the only case this test needs).
func (d *redirectDocServer) apply(w http.ResponseWriter, r *http.Request) {
	var p docPatch
	if err := json.NewDecoder(r.Body).Decode(&p); err != nil || r.Method != http.MethodPatch {
		writeProblem(w, http.StatusBadRequest, fmt.Sprintf("want a PATCH with a ContentPatch body (%s, %v)", r.Method, err))
		return
	}
	if p.BaseVersion != d.version || p.Checksum != docChecksum(d.content) {
		writeProblem(w, http.StatusUnprocessableEntity, "base mismatch")
		return
	}
	next, ok := docApply(d.content, p.Ops)
	if !ok {
		writeProblem(w, http.StatusUnprocessableEntity, "ops do not apply")
		return
	}
	d.content, d.version = next, d.version+1
	d.applied = append(d.applied, redirectHit{Method: r.Method, Auth: r.Header.Get("Authorization"), Seq: p.Seq})
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{"version": d.version, "opsSinceBase": []docOp{}})
}

func (d *redirectDocServer) state() (string, uint64, []redirectHit) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.content, d.version, append([]redirectHit(nil), d.applied...)
}

func writeProblem(w http.ResponseWriter, status int, detail string) {
	w.Header().Set("Content-Type", "application/problem+json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]any{"type": "about:blank", "title": http.StatusText(status), "status": status, "detail": detail})
}

// TestRemoteRedirectsAreNotFollowed is issue 34's first point at the process boundary: a
// document server (or the proxy before it) that answers talkd's PATCH with a redirect.
// Go's client used to follow 301/302/303 as a GET and take the returned document for the
// patch result (the write said applied, the server never got it), and to re-send a 307 or
// 308 to another host. Now only a same-origin 307/308 is followed (same method, same body,
// the token to that origin only); every other redirect is a remote_failed tool error, the
// document is unchanged, nothing reached another host, and the request id is unknown.
func TestRemoteRedirectsAreNotFollowed(t *testing.T) {
	t.Parallel()
	const text = "%% redirected plan of @jörg\n- [~] #top: Release\n  - [ ] #a: Login @Müller (S)\n"
	token := "doc-" + strings.Repeat("5", 40)
	origin := &redirectDocServer{token: token, content: text, version: 1}
	origin.srv = httptest.NewServer(http.HandlerFunc(origin.serve))
	defer origin.srv.Close()

	// Another host (another port is another origin): it must never see a request.
	var elsewhere struct {
		sync.Mutex
		hits []string
	}
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		elsewhere.Lock()
		elsewhere.hits = append(elsewhere.hits, fmt.Sprintf("%s %s auth=%q body=%d bytes", r.Method, r.URL.Path, r.Header.Get("Authorization"), len(body)))
		elsewhere.Unlock()
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"version": 99, "opsSinceBase": []}`)
	}))
	defer other.Close()

	docURL := origin.srv.URL + origin.docPath()
	d := startDaemon(t, daemonOptions{Env: map[string]string{"DOC_TOKEN": token}, Config: fmt.Sprintf(
		"version = 1\n[[plans]]\nkey = \"p\"\nurl = %q\ntoken_env = \"DOC_TOKEN\"\nlang = \"en\"\n", docURL)})
	c := newMCPClient(d)

	status := "done"
	cases := []struct {
		name     string
		code     int
		location string
		follow   bool
	}{
		{"301 to the document", http.StatusMovedPermanently, docURL, false},
		{"302 to the document", http.StatusFound, docURL, false},
		{"303 to the document", http.StatusSeeOther, docURL, false},
		{"307 to another host", http.StatusTemporaryRedirect, other.URL + origin.docPath() + "/content", false},
		{"308 to another host", http.StatusPermanentRedirect, other.URL + origin.docPath() + "/content", false},
		{"300 multiple choices", http.StatusMultipleChoices, docURL, false},
		{"307 to the same origin", http.StatusTemporaryRedirect, origin.srv.URL + "/moved" + origin.docPath() + "/content", true},
		{"308 to the same origin", http.StatusPermanentRedirect, origin.srv.URL + "/moved" + origin.docPath() + "/content", true},
	}
	for i, tc := range cases {
		r := c.read(t, "p")
		before, beforeVersion, beforeHits := origin.state()
		origin.mu.Lock()
		origin.status, origin.location = tc.code, tc.location
		origin.mu.Unlock()
		rid := fmt.Sprintf("redir-%d", i)
		ans := c.must(t, "werkbaum_set_status", writeArgs("p", r.Base, rid, map[string]any{"id": "a", "status": status}))
		after, afterVersion, hits := origin.state()
		if !tc.follow {
			if !ans.IsError || ans.Map["error"] != "remote_failed" || !strings.Contains(ans.Text, fmt.Sprint(tc.code)) || !strings.Contains(ans.Text, "redirect") {
				t.Errorf("%s: want a remote_failed tool error naming the redirect, got %s %s", tc.name, ans.Text, ans.Structured)
			}
			if after != before || afterVersion != beforeVersion || len(hits) != len(beforeHits) {
				t.Errorf("%s: the document changed (version %d → %d)", tc.name, beforeVersion, afterVersion)
			}
			if op := c.operation(t, "p", rid); op.State != "unknown" {
				t.Errorf("%s: operation_get says %q, want unknown", tc.name, op.State)
			}
			continue
		}
		var w writeAnswer
		if err := ans.decode(&w); ans.IsError || err != nil || !w.Changed || w.Revision != beforeVersion+1 {
			t.Errorf("%s: want the write applied at version %d, got %s %s", tc.name, beforeVersion+1, ans.Text, ans.Structured)
		}
		if len(hits) != len(beforeHits)+1 {
			t.Fatalf("%s: %d patches reached the moved document, want 1", tc.name, len(hits)-len(beforeHits))
		}
		if h := hits[len(hits)-1]; h.Method != http.MethodPatch || h.Auth != "Bearer "+token || h.Seq == 0 {
			t.Errorf("%s: the followed request was %+v, want the same PATCH with the token", tc.name, h)
		}
		if want := strings.Replace(before, "[ ] #a", "[x] #a", 1); status == "done" && after != want {
			t.Errorf("%s: the document reads\n%s", tc.name, after)
		}
		if status == "done" {
			status = "planned"
		} else {
			status = "done"
		}
	}
	elsewhere.Lock()
	if len(elsewhere.hits) != 0 {
		t.Errorf("requests reached another host: %v", elsewhere.hits)
	}
	elsewhere.Unlock()

	// A read answered with a redirect is refused the same way.
	origin.mu.Lock()
	origin.getRedir = other.URL + origin.docPath()
	origin.mu.Unlock()
	if ans := c.must(t, "werkbaum_read", map[string]any{"plan": "p"}); !ans.IsError || ans.Map["error"] != "remote_failed" || !strings.Contains(ans.Text, "301") {
		t.Errorf("a redirected read: %s %s", ans.Text, ans.Structured)
	}
	if logs := d.logs(); !strings.Contains(logs, "answered a redirect") {
		t.Errorf("no log line for a redirected write:\n%s", logs)
	}
}
