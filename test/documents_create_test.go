package test

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The editor's Share button at the process boundary: GET /api/v1/info says whether this
// talkd creates documents, and POST /api/v1/documents {title, content} either creates a
// plan file in the root that allows it or answers a problem saying how to allow it.

// docInfo is the answer of GET /api/v1/info.
type docInfo struct {
	Name            string `json:"name"`
	Version         string `json:"version"`
	ProtocolVersion string `json:"protocolVersion"`
	Features        struct {
		Create, Restore, Rename, History, Replace, Delete, List bool
	} `json:"features"`
	Limits struct {
		MaxBodyBytes        int64 `json:"maxBodyBytes"`
		MaxContentBytes     int   `json:"maxContentBytes"`
		MaxTitleChars       int   `json:"maxTitleChars"`
		MaxClientIDChars    int   `json:"maxClientIdChars"`
		MaxDisplayNameChars int   `json:"maxDisplayNameChars"`
		ChangesWaitDefault  int   `json:"changesWaitDefaultSeconds"`
		ChangesWaitMax      int   `json:"changesWaitMaxSeconds"`
	} `json:"limits"`
}

// createConfig is a root "notes" that takes created plans, beside a root that does not.
func createConfig(notes, other string) string {
	return "version = 1\n[[roots]]\nname = \"other\"\npath = \"" + other + "\"\n" +
		"[[roots]]\nname = \"notes\"\npath = \"" + notes + "\"\ncreate = true\n"
}

// TestDocumentInfo: /info names the server, the protocol version, what it serves (create
// only with a root that allows it; restore, rename and history always; PUT, DELETE and
// the list not at all) and its
// limits.
func TestDocumentInfo(t *testing.T) {
	t.Parallel()
	root, _ := rootTree(t)
	plain := startDaemon(t, daemonOptions{Config: rootsConfig(root)})
	creating := startDaemon(t, daemonOptions{Config: createConfig(root, t.TempDir())})
	for _, tc := range []struct {
		d      *daemon
		create bool
	}{{plain, false}, {creating, true}} {
		var info docInfo
		newDocHTTP(tc.d, nil).must(t, http.MethodGet, "/api/v1/info", nil).decode(t, &info)
		f := info.Features
		if info.Name != "talkd" || info.Version == "" || info.ProtocolVersion != "v1" ||
			f.Create != tc.create || !f.Restore || !f.Rename || !f.History || f.Replace || f.Delete || f.List {
			t.Errorf("info (create %v): %+v", tc.create, info)
		}
		l := info.Limits
		if l.MaxContentBytes != 2<<20 || l.MaxBodyBytes < int64(l.MaxContentBytes) || l.MaxTitleChars != 255 ||
			l.MaxClientIDChars != 64 || l.MaxDisplayNameChars != 64 || l.ChangesWaitDefault != 25 || l.ChangesWaitMax < l.ChangesWaitDefault {
			t.Errorf("limits: %+v", l)
		}
	}
}

// TestDocumentCreate: with a root that allows it, POST /documents makes a plan file named
// after the title (made safe, never over an existing file), answers 201 with the
// Document, its URL (also as Location) and key; the new plan is a document and a plan
// for the agents at once. Without such a root, and for bad bodies, a problem names why.
func TestDocumentCreate(t *testing.T) {
	t.Parallel()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	notes, other := filepath.Join(base, "notes"), filepath.Join(base, "other")
	for _, dir := range []string{notes, other} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	taken := "[ ] #keep: Schon da (S)\n"
	if err := os.WriteFile(filepath.Join(notes, "Sprint.werkbaum"), []byte(taken), 0o644); err != nil {
		t.Fatal(err)
	}
	d := startDaemon(t, daemonOptions{Config: createConfig(notes, other)})
	c := newDocHTTP(d, nil)

	type created struct {
		docDocument
		URL string `json:"url"`
		Key string `json:"key"`
	}
	create := func(title, content string) created {
		t.Helper()
		a := c.must(t, http.MethodPost, "/api/v1/documents", map[string]any{"title": title, "content": content})
		var got created
		if a.Status != http.StatusCreated {
			t.Fatalf("POST %q: %s", title, a)
		}
		a.decode(t, &got)
		if a.Header.Get("Location") != got.URL || !strings.HasPrefix(got.URL, d.URL+"/api/v1/documents/") || !strings.HasSuffix(got.URL, got.ID) {
			t.Errorf("POST %q: url %q, Location %q", title, got.URL, a.Header.Get("Location"))
		}
		return got
	}

	// A title with characters no file name may hold: the file is named safely, the
	// document keeps the title; CRLF arrives as LF.
	doc := create("Plan für @jörg: Q3/Q4", "[ ] #root: Plan (M)\r\n  - [ ] #a: Müller fragen (S)\r\n")
	wantText := "[ ] #root: Plan (M)\n  - [ ] #a: Müller fragen (S)\n"
	if doc.Key != "notes:Plan für -jörg- Q3-Q4.werkbaum" || doc.Title != "Plan für @jörg: Q3/Q4" || doc.Content != wantText {
		t.Fatalf("created %+v", doc)
	}
	if got := string(readFile(t, filepath.Join(notes, "Plan für -jörg- Q3-Q4.werkbaum"))); got != wantText {
		t.Fatalf("the new file:\n%q", got)
	}
	var again docDocument
	c.must(t, http.MethodGet, strings.TrimPrefix(doc.URL, d.URL), nil).decode(t, &again)
	if again.ID != doc.ID || again.Content != wantText || again.Title != doc.Title {
		t.Errorf("GET the new document: %+v", again)
	}
	// The agents have the plan under the key.
	if r := newMCPClient(d).read(t, doc.Key); r.Text != wantText {
		t.Errorf("werkbaum_read %s: %q", doc.Key, r.Text)
	}

	// A taken name is never overwritten: the next free one is used.
	second := create("Sprint", "[ ] #new: Neu (S)\n")
	if second.Key != "notes:Sprint 2.werkbaum" || second.Title != "Sprint" {
		t.Errorf("second create: %+v", second)
	}
	if got := string(readFile(t, filepath.Join(notes, "Sprint.werkbaum"))); got != taken {
		t.Errorf("the existing plan was changed:\n%s", got)
	}
	// Nothing went to the other root, and no temp file is left.
	if entries, _ := os.ReadDir(other); len(entries) != 0 {
		t.Errorf("the other root got files: %v", entries)
	}
	entries, _ := os.ReadDir(notes)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			t.Errorf("left behind in the root: %s", e.Name())
		}
	}

	// Bad bodies: 400 naming the member.
	c.must(t, http.MethodPost, "/api/v1/documents", map[string]any{"content": "x"}).problem(t, http.StatusBadRequest, `"title" is required`)
	c.must(t, http.MethodPost, "/api/v1/documents", map[string]any{"title": "", "content": "x"}).problem(t, http.StatusBadRequest, "title")
	c.must(t, http.MethodPost, "/api/v1/documents", map[string]any{"title": "x"}).problem(t, http.StatusBadRequest, `"content" is required`)
	c.must(t, http.MethodPost, "/api/v1/documents", "[1]").problem(t, http.StatusBadRequest, "JSON object")
	if entries2, _ := os.ReadDir(notes); len(entries2) != len(entries) {
		t.Errorf("a refused create made a file: %d files, were %d", len(entries2), len(entries))
	}

	// Without a root that allows it: 403 whose detail says how, and a log line.
	root, _ := rootTree(t)
	closed := startDaemon(t, daemonOptions{Config: rootsConfig(root)})
	newDocHTTP(closed, nil).must(t, http.MethodPost, "/api/v1/documents", map[string]any{"title": "x", "content": ""}).
		problem(t, http.StatusForbidden, "add create = true to a [[roots]] entry")
	if !strings.Contains(closed.logs(), `msg="request refused" door=/api/v1/documents status=403`) {
		t.Errorf("no log line for the refused create:\n%s", closed.logs())
	}

	// Shared mode grants plans by key: it never creates, and says so.
	planPath := filepath.Join(t.TempDir(), "p.werkbaum")
	if err := os.WriteFile(planPath, []byte(sharedPlan), 0o644); err != nil {
		t.Fatal(err)
	}
	shared := startDaemon(t, daemonOptions{Config: sharedConfig(planPath), Env: sharedEnv()})
	newDocHTTP(shared, map[string]string{"Authorization": "Bearer " + sharedTokens["writer"]}).
		must(t, http.MethodPost, "/api/v1/documents", map[string]any{"title": "x", "content": ""}).
		problem(t, http.StatusForbidden, "shared mode")
	var info docInfo
	newDocHTTP(shared, map[string]string{"Authorization": "Bearer " + sharedTokens["writer"]}).
		must(t, http.MethodGet, "/api/v1/info", nil).decode(t, &info)
	if info.Features.Create {
		t.Errorf("shared mode's /info offers create: %+v", info)
	}
}
