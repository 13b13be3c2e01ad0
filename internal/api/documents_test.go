package api

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"talkd/internal/config"
	"talkd/internal/werkbaum"
	"talkd/internal/werkbaum/plans"
)

// fakeDocuments is a documentStore for the doors' own laws (decoding, problem details,
// grants, clamping); the store's behaviour is tested beside it and at the process boundary.
type fakeDocuments struct {
	mu      sync.Mutex
	ids     map[string]string // id → key
	patches []plans.ContentPatch
	waits   []time.Duration
	err     error // returned by every call when set
	feed    *plans.ChangeFeed
	signal  chan struct{} // ChangeSignal's; close it (under mu) to wake parked polls
}

const fakeID = "0b6e6f6c-1d2e-4f00-9a3b-0123456789ab"

func (f *fakeDocuments) DocumentID(_ context.Context, key string) (string, error) {
	for id, k := range f.ids {
		if k == key {
			return id, nil
		}
	}
	return "", plans.ErrUnknownDocument
}
func (f *fakeDocuments) DocumentKey(id string) (string, bool) {
	k, ok := f.ids[strings.ToLower(id)]
	return k, ok
}
func (f *fakeDocuments) Document(_ context.Context, id string) (*plans.Document, error) {
	if f.err != nil {
		return nil, f.err
	}
	return &plans.Document{ID: id, Title: "p", Content: "a\nb\n", Version: 3}, nil
}
func (f *fakeDocuments) PatchContent(_ context.Context, id string, p plans.ContentPatch) (*plans.PatchResult, error) {
	f.mu.Lock()
	f.patches = append(f.patches, p)
	f.mu.Unlock()
	if f.err != nil {
		return nil, f.err
	}
	if err := werkbaum.ValidateLineOps(p.Ops); err != nil {
		return nil, err
	}
	return &plans.PatchResult{Version: p.BaseVersion + 1}, nil
}
func (f *fakeDocuments) SetTitle(_ context.Context, id, title string, v uint64, who plans.DocAuthor) (*plans.Document, error) {
	if f.err != nil {
		return nil, f.err
	}
	return &plans.Document{ID: id, Title: title, Version: v + 1}, nil
}
func (f *fakeDocuments) Restore(_ context.Context, id string, v uint64, who plans.DocAuthor) (*plans.Document, error) {
	if f.err != nil {
		return nil, f.err
	}
	return &plans.Document{ID: id, Title: "p", Version: v + 10}, nil
}
func (f *fakeDocuments) Changes(ctx context.Context, id string, since uint64, wait time.Duration) (*plans.ChangeFeed, error) {
	f.mu.Lock()
	f.waits = append(f.waits, wait)
	err, feed := f.err, f.feed
	f.mu.Unlock()
	if err != nil {
		return nil, err
	}
	if feed != nil {
		return feed, nil
	}
	select {
	case <-time.After(wait):
		return nil, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}
func (f *fakeDocuments) ChangeSignal(string) (<-chan struct{}, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil {
		return nil, f.err
	}
	if f.signal == nil {
		f.signal = make(chan struct{})
	}
	return f.signal, nil
}

func (f *fakeDocuments) setFeed(feed *plans.ChangeFeed) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.feed = feed
}

func (f *fakeDocuments) setErr(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.err = err
}

// wake closes the change signal (a version was recorded).
func (f *fakeDocuments) wake() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.signal != nil {
		close(f.signal)
		f.signal = nil
	}
}

func (f *fakeDocuments) History(context.Context, string) ([]plans.HistoryEntry, error) {
	return []plans.HistoryEntry{{DocumentID: fakeID, Version: 1, ChangeType: "CREATED"}}, f.err
}

type docFixture struct {
	t     *testing.T
	srv   *Server
	url   string
	store *fakeDocuments
}

func newDocFixture(t *testing.T, edit func(*config.Config)) *docFixture {
	t.Helper()
	f := newMCPFixture(t, edit)
	st := &fakeDocuments{ids: map[string]string{fakeID: "p", "11111111-2222-4333-8444-555555555555": "secret"}}
	f.srv.documents.store = st
	t.Cleanup(func() {
		// Parked polls are no longer the test server's connections: end them.
		f.srv.EndPolls()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := f.srv.WaitPolls(ctx); err != nil {
			t.Errorf("parked polls were not answered: %v", err)
		}
	})
	return &docFixture{t: t, srv: f.srv, url: f.http.URL, store: st}
}

func (f *docFixture) do(method, path, body string, h map[string]string) (*http.Response, map[string]any) {
	f.t.Helper()
	req, err := http.NewRequest(method, f.url+path, strings.NewReader(body))
	if err != nil {
		f.t.Fatal(err)
	}
	for k, v := range h {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var m map[string]any
	if len(raw) > 0 && raw[0] == '{' {
		if err := json.Unmarshal(raw, &m); err != nil {
			f.t.Fatalf("%s %s: %v: %s", method, path, err, raw)
		}
	}
	return resp, m
}

// problem checks that an answer is a problem details object with this status (and a
// detail containing want).
func (f *docFixture) problem(resp *http.Response, body map[string]any, status int, want string) {
	f.t.Helper()
	if resp.StatusCode != status {
		f.t.Fatalf("status %d, want %d: %v", resp.StatusCode, status, body)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/problem+json" {
		f.t.Errorf("Content-Type %q", ct)
	}
	for _, k := range []string{"type", "title", "status", "detail", "instance"} {
		if _, ok := body[k]; !ok {
			f.t.Errorf("problem without %s: %v", k, body)
		}
	}
	if body["status"] != float64(status) || !strings.HasPrefix(body["type"].(string), problemTypePrefix) {
		f.t.Errorf("problem %v", body)
	}
	if d, _ := body["detail"].(string); !strings.Contains(d, want) {
		f.t.Errorf("detail %q does not contain %q", d, want)
	}
}

const docPath = "/api/v1/documents/" + fakeID

func patchBody(extra string) string {
	return `{"baseVersion":3,"checksum":"sha256:` + strings.Repeat("a", 64) + `","clientId":"c1","seq":1,` + extra + `}`
}

// TestDocumentPatchDecoding: every malformed ContentPatch is a 400 problem naming the
// member; unknown members are accepted (the editor may send more) and a well-formed patch
// reaches the store as sent.
func TestDocumentPatchDecoding(t *testing.T) {
	f := newDocFixture(t, nil)
	bad := []struct{ body, field, detail string }{
		{`[]`, "", "JSON object"},
		{`{"checksum":"sha256:` + strings.Repeat("a", 64) + `","clientId":"c","seq":1,"ops":[]}`, "baseVersion", "required"},
		{patchBody(`"ops":[{"op":"delete","index":1}]`), "ops[0].count", "required"},
		{patchBody(`"ops":[{"op":"replace","index":1,"lines":["x"]}]`), "ops[0].count", "required"},
		{patchBody(`"ops":[{"op":"insert","index":-1,"lines":["x"]}]`), "ops[0].index", "≥ 0"},
		{patchBody(`"ops":[{"op":"delete","index":0,"count":-2}]`), "ops[0].count", "≥ 0"},
		{patchBody(`"ops":[{"op":"insert","index":0}]`), "ops[0].lines", "required"},
		{patchBody(`"ops":[{"op":"move","index":0,"count":1}]`), "ops[0].op", "move"},
		{patchBody(`"ops":[{"op":"insert","index":0,"lines":["a\nb"]}]`), "ops[0].lines[0]", "line break"},
		{patchBody(`"ops":[{"op":"insert","index":1.5,"lines":[]}]`), "ops.index", "number"},
		{patchBody(`"ops":[{"op":"insert","index":2,"lines":["x"]},{"op":"insert","index":1,"lines":["y"]}]`), "ops", "ops[1]"},
		{patchBody(`"ops":[{"op":"delete","index":0,"count":3},{"op":"insert","index":1,"lines":["y"]}]`), "ops", "ops[1]"},
		{patchBody(`"ops":[], "displayName":"` + strings.Repeat("é", 65) + `"`), "displayName", "at most 64"},
		{patchBody(`"ops":[], "displayName":"a\u0007b"`), "displayName", "control"},
		{`{"baseVersion":3,"checksum":"sha256:` + strings.Repeat("a", 64) + `","clientId":"` + strings.Repeat("c", 65) + `","seq":1,"ops":[]}`, "clientId", "1 to 64"},
		{`{"baseVersion":3,"checksum":"sha256:` + strings.Repeat("a", 64) + `","clientId":"","seq":1,"ops":[]}`, "clientId", "1 to 64"},
		{`{"baseVersion":3,"checksum":"md5:00","clientId":"c","seq":1,"ops":[]}`, "checksum", "sha256"},
		{`{"baseVersion":3,"checksum":"sha256:` + strings.Repeat("a", 64) + `","clientId":"c","seq":-1,"ops":[]}`, "seq", "≥ 0"},
		{patchBody(`"milestone":true`), "ops", "required"},
		{patchBody(`"ops":[]} {`), "", "exactly one"},
		{patchBody(`"ops":[{"op":"insert","index":0,"lines":["` + "\xff" + `"]}]`), "ops[0].lines[0]", "UTF-8"},
	}
	for _, tc := range bad {
		resp, body := f.do(http.MethodPatch, docPath+"/content", tc.body, nil)
		f.problem(resp, body, http.StatusBadRequest, tc.detail)
		if got, _ := body["field"].(string); got != tc.field {
			t.Errorf("%s: field %q, want %q (%v)", tc.body, got, tc.field, body["detail"])
		}
	}
	f.store.patches = nil
	good := patchBody(`"displayName":"Jörg Müller","milestone":true,"editorState":{"cursor":3},` +
		`"ops":[{"op":"insert","index":0,"count":0,"lines":["- [ ] #n: Neu @jörg"]},{"op":"delete","index":1,"count":1,"lines":null},{"op":"replace","index":4,"count":2,"lines":["x"]}]`)
	resp, body := f.do(http.MethodPatch, docPath+"/content", good, map[string]string{"Content-Type": "application/json"})
	if resp.StatusCode != http.StatusOK || body["version"] != float64(4) {
		t.Fatalf("good patch: %d %v", resp.StatusCode, body)
	}
	if ops, ok := body["opsSinceBase"].([]any); !ok || len(ops) != 0 {
		t.Errorf("opsSinceBase must be an empty array: %v", body)
	}
	p := f.store.patches[0]
	want := []werkbaum.LineOp{{Op: "insert", Index: 0, Lines: []string{"- [ ] #n: Neu @jörg"}}, {Op: "delete", Index: 1, Count: 1}, {Op: "replace", Index: 4, Count: 2, Lines: []string{"x"}}}
	if p.BaseVersion != 3 || p.ClientID != "c1" || p.Seq != 1 || p.DisplayName != "Jörg Müller" || !p.Milestone || len(p.Ops) != 3 {
		t.Fatalf("patch reached the store as %+v", p)
	}
	for i := range want {
		if p.Ops[i].Op != want[i].Op || p.Ops[i].Index != want[i].Index || p.Ops[i].Count != want[i].Count || strings.Join(p.Ops[i].Lines, "|") != strings.Join(want[i].Lines, "|") {
			t.Errorf("ops[%d] = %+v, want %+v", i, p.Ops[i], want[i])
		}
	}
}

// TestDocumentStoreErrors: the store's answers become the protocol's statuses; a 409
// carries currentVersion and opsSinceBase beside the problem's members.
func TestDocumentStoreErrors(t *testing.T) {
	f := newDocFixture(t, nil)
	cases := []struct {
		err    error
		status int
		detail string
	}{
		{&plans.PatchConflict{CurrentVersion: 9, OpsSinceBase: []werkbaum.LineOp{{Op: "delete", Index: 2, Count: 1}}}, http.StatusConflict, "version 9"},
		{wrapErr(plans.ErrPatchUnapplicable, "checksum mismatch"), http.StatusUnprocessableEntity, "checksum mismatch"},
		{&werkbaum.InputError{Code: "badOps", Message: "ops[2]: index 9 is past the end (7 lines)"}, http.StatusBadRequest, "index 9"},
		{plans.ErrUnknownDocument, http.StatusNotFound, "unknown"},
		{context.DeadlineExceeded, http.StatusServiceUnavailable, "in time"},
		{wrapErr(werkbaum.ErrTooLarge, "3000000 bytes"), http.StatusRequestEntityTooLarge, "limit"},
		{io.ErrUnexpectedEOF, http.StatusInternalServerError, "failed"},
	}
	for _, tc := range cases {
		f.store.err = tc.err
		resp, body := f.do(http.MethodPatch, docPath+"/content", patchBody(`"ops":[]`), nil)
		f.problem(resp, body, tc.status, tc.detail)
		if tc.status == http.StatusConflict {
			ops, _ := body["opsSinceBase"].([]any)
			if body["currentVersion"] != float64(9) || len(ops) != 1 || ops[0].(map[string]any)["lines"] == nil {
				t.Errorf("409 members: %v", body)
			}
		}
	}
	f.store.err = wrapErr(plans.ErrStaleVersion, "expectedVersion 2 is not current (5)")
	resp, body := f.do(http.MethodPatch, docPath+"/title", `{"title":"Neu","expectedVersion":2}`, nil)
	f.problem(resp, body, http.StatusConflict, "not current")
}

type wrapped struct {
	base error
	msg  string
}

func (w wrapped) Error() string { return w.base.Error() + ": " + w.msg }
func (w wrapped) Unwrap() error { return w.base }

func wrapErr(base error, msg string) error { return wrapped{base, msg} }

// TestDocumentRoutes: unknown paths and ids are 404, the methods a file-backed plan does
// not offer are 405 saying why, and the title and info doors answer.
func TestDocumentRoutes(t *testing.T) {
	f := newDocFixture(t, nil)
	for _, tc := range []struct{ method, path, detail string }{
		{http.MethodGet, "/api/v1/documents", "plans_list"},
		{http.MethodPut, docPath, "PATCH"},
		{http.MethodDelete, docPath, "deleted in its folder"},
		{http.MethodGet, docPath + "/restore", "POST"},
		{http.MethodGet, docPath + "/content", "PATCH"},
	} {
		resp, body := f.do(tc.method, tc.path, `{"title":"x","content":""}`, nil)
		f.problem(resp, body, http.StatusMethodNotAllowed, tc.detail)
	}
	// A restore names its version: without one 409 (the contract's answer for a document
	// that exists), with one the store's document; the store's refusals by kind.
	resp, body := f.do(http.MethodPost, docPath+"/restore", `{"clientId":"ed"}`, nil)
	f.problem(resp, body, http.StatusConflict, "name the version")
	resp, body = f.do(http.MethodPost, docPath+"/restore", `{"version":2,"clientId":"ed"}`, nil)
	if resp.StatusCode != http.StatusOK || body["version"] != float64(12) {
		t.Errorf("restore: %d %v", resp.StatusCode, body)
	}
	for _, bad := range []string{`{"version":-1}`, `{"version":"2"}`, `{"version":2,"displayName":"a\nb"}`} {
		resp, body = f.do(http.MethodPost, docPath+"/restore", bad, nil)
		f.problem(resp, body, http.StatusBadRequest, "")
	}
	for _, tc := range []struct {
		err    error
		status int
		code   string
	}{
		{wrapErr(plans.ErrVersionNotKept, "version 2 no longer kept"), http.StatusUnprocessableEntity, "version_not_kept"},
		{wrapErr(plans.ErrNoSuchVersion, "version 99"), http.StatusNotFound, "no_such_version"},
	} {
		f.store.setErr(tc.err)
		resp, body = f.do(http.MethodPost, docPath+"/restore", `{"version":2}`, nil)
		f.problem(resp, body, tc.status, tc.err.Error())
		if body["code"] != tc.code {
			t.Errorf("restore refused with %v: code %v, want %s", tc.err, body["code"], tc.code)
		}
	}
	f.store.setErr(nil)
	// Creating without a root that allows it: 403 saying how to allow it.
	resp, body = f.do(http.MethodPost, "/api/v1/documents", `{"title":"x","content":""}`, nil)
	f.problem(resp, body, http.StatusForbidden, "create = true")
	for _, p := range []string{"/api/v1/documents/not-a-uuid", "/api/v1/documents/99999999-2222-4333-8444-555555555555", "/api/v1/nothing", docPath + "/more/deep"} {
		resp, body := f.do(http.MethodGet, p, "", nil)
		f.problem(resp, body, http.StatusNotFound, "")
	}
	// Any case of the UUID names the same document.
	resp, body = f.do(http.MethodGet, docPath[:18]+strings.ToUpper(fakeID), "", nil)
	if resp.StatusCode != http.StatusOK || body["id"] != fakeID || body["content"] != "a\nb\n" || body["version"] != float64(3) {
		t.Errorf("GET upper-case id: %d %v", resp.StatusCode, body)
	}
	resp, body = f.do(http.MethodPatch, docPath+"/title", `{"title":"Neuer Plan für @jörg","expectedVersion":3}`, nil)
	if resp.StatusCode != http.StatusOK || body["title"] != "Neuer Plan für @jörg" || body["version"] != float64(4) {
		t.Errorf("title: %d %v", resp.StatusCode, body)
	}
	for _, bad := range []string{`{"title":"","expectedVersion":3}`, `{"title":"` + strings.Repeat("t", 256) + `","expectedVersion":3}`, `{"title":"x"}`, `{"title":"a\nb","expectedVersion":1}`} {
		resp, body = f.do(http.MethodPatch, docPath+"/title", bad, nil)
		f.problem(resp, body, http.StatusBadRequest, "")
	}
	// Only a content PATCH may carry a large body.
	resp, body = f.do(http.MethodPatch, docPath+"/title", `{"title":"`+strings.Repeat("t", 70<<10)+`","expectedVersion":3}`, nil)
	f.problem(resp, body, http.StatusRequestEntityTooLarge, "limit")
	resp, body = f.do(http.MethodPatch, docPath+"/content", patchBody(`"ops":[{"op":"insert","index":0,"lines":["`+strings.Repeat("x", 200<<10)+`"]}]`), nil)
	if resp.StatusCode != http.StatusOK {
		t.Errorf("a 200 KiB content PATCH: %d %v", resp.StatusCode, body)
	}
	resp, body = f.do(http.MethodGet, "/api/v1/info", "", nil)
	if resp.StatusCode != http.StatusOK || body["name"] != "talkd" || body["version"] != "test" {
		t.Errorf("info: %d %v", resp.StatusCode, body)
	}
	resp, _ = f.do(http.MethodGet, docPath+"/history", "", nil)
	if resp.StatusCode != http.StatusOK {
		t.Errorf("history: %d", resp.StatusCode)
	}
}

// TestDocumentChangesWait: wait defaults to 25 s and is clamped to [0, 30 s]; a bad value is
// a 400; nothing new is 204; EndPolls answers held polls at once.
func TestDocumentChangesWait(t *testing.T) {
	f := newDocFixture(t, nil)
	for _, q := range []string{"?since=3&wait=0", "?since=3&wait=-5"} {
		resp, _ := f.do(http.MethodGet, docPath+"/changes"+q, "", nil)
		if resp.StatusCode != http.StatusNoContent {
			t.Errorf("%s: %d, want 204", q, resp.StatusCode)
		}
	}
	for _, q := range []string{"?since=-1", "?since=x", "?wait=soon", "?wait=NaN"} {
		resp, body := f.do(http.MethodGet, docPath+"/changes"+q, "", nil)
		f.problem(resp, body, http.StatusBadRequest, "")
	}
	// The default and the clamp, seen in the parked polls' deadlines; EndPolls ends them.
	done := make(chan int, 2)
	start := time.Now()
	for _, q := range []string{"?since=3", "?since=3&wait=3600"} {
		go func() {
			resp, _ := f.do(http.MethodGet, docPath+"/changes"+q, "", nil)
			done <- resp.StatusCode
		}()
	}
	waits := f.parkedWaits(2, start)
	slices.Sort(waits)
	if len(waits) != 2 || waits[0]-DefaultChangesWait > 2*time.Second || waits[0] < DefaultChangesWait ||
		waits[1]-MaxChangesWait > 2*time.Second || waits[1] < MaxChangesWait {
		t.Fatalf("waits of the parked polls: %v", waits)
	}
	start = time.Now()
	f.srv.EndPolls()
	for range 2 {
		if st := <-done; st != http.StatusNoContent {
			t.Errorf("held poll ended by EndPolls: %d", st)
		}
	}
	if el := time.Since(start); el > 5*time.Second {
		t.Errorf("EndPolls took %v", el)
	}
	// After EndPolls a poll that would wait answers at once.
	if resp, _ := f.do(http.MethodGet, docPath+"/changes?since=3&wait=20", "", nil); resp.StatusCode != http.StatusNoContent {
		t.Errorf("a poll after EndPolls: %d", resp.StatusCode)
	}
	f.store.mu.Lock()
	for _, w := range f.store.waits {
		if w != 0 {
			t.Errorf("the store was asked to wait %v: polls wait parked, the store is only looked at", w)
		}
	}
	f.store.mu.Unlock()
	// A feed: ops exactly when fromVersion is there, content when not.
	from := uint64(3)
	f.store.setFeed(&plans.ChangeFeed{FromVersion: &from, CurrentVersion: 4, Events: []plans.ChangeEvent{{Version: 4, ChangeType: "UPDATED", ClientID: "mcp-1", DisplayName: "Claude"}}})
	resp, body := f.do(http.MethodGet, docPath+"/changes?since=3", "", nil)
	if ops, ok := body["ops"].([]any); resp.StatusCode != 200 || !ok || len(ops) != 0 || body["content"] != nil || body["fromVersion"] != float64(3) {
		t.Errorf("feed with fromVersion: %d %v", resp.StatusCode, body)
	}
	content := "x\n"
	f.store.setFeed(&plans.ChangeFeed{CurrentVersion: 4, Content: &content})
	_, body = f.do(http.MethodGet, docPath+"/changes?since=0", "", nil)
	if _, has := body["ops"]; has || body["content"] != content || body["fromVersion"] != nil {
		t.Errorf("feed with content: %v", body)
	}
	if ev, ok := body["events"].([]any); !ok || len(ev) != 0 {
		t.Errorf("events must be an array: %v", body)
	}
}

// TestDocumentAdmission: in shared mode a token is needed, reading needs the plan's read
// grant (an unreadable plan's document does not exist), PATCH its write grant; CORS for the
// listed origin with a preflight allowing PATCH; an unlisted origin is refused.
func TestDocumentAdmission(t *testing.T) {
	f := newDocFixture(t, func(c *config.Config) {
		c.Server.AllowedOrigins = []string{"https://editor.example"}
		c.Clients = []config.Client{
			{ID: "reader", Token: "tok-reader-" + strings.Repeat("r", 30), Read: []string{"p"}},
			{ID: "writer", Token: "tok-writer-" + strings.Repeat("w", 30), Write: []string{"p"}},
		}
	})
	reader := map[string]string{"Authorization": "Bearer tok-reader-" + strings.Repeat("r", 30)}
	writer := map[string]string{"Authorization": "Bearer tok-writer-" + strings.Repeat("w", 30)}
	resp, body := f.do(http.MethodGet, docPath, "", nil)
	f.problem(resp, body, http.StatusUnauthorized, "Bearer")
	if resp, _ := f.do(http.MethodGet, docPath, "", reader); resp.StatusCode != http.StatusOK {
		t.Errorf("reader GET: %d", resp.StatusCode)
	}
	resp, body = f.do(http.MethodGet, "/api/v1/documents/11111111-2222-4333-8444-555555555555", "", writer)
	f.problem(resp, body, http.StatusNotFound, "no document")
	resp, body = f.do(http.MethodPatch, docPath+"/content", patchBody(`"ops":[]`), reader)
	f.problem(resp, body, http.StatusForbidden, "no write grant")
	if resp, body := f.do(http.MethodPatch, docPath+"/content", patchBody(`"ops":[]`), writer); resp.StatusCode != http.StatusOK {
		t.Errorf("writer PATCH: %d %v", resp.StatusCode, body)
	}

	pre := map[string]string{"Origin": "https://editor.example", "Access-Control-Request-Method": "PATCH",
		"Access-Control-Request-Headers": "content-type, authorization"}
	resp, _ = f.do(http.MethodOptions, docPath+"/content", "", pre)
	h := resp.Header
	if resp.StatusCode != http.StatusNoContent || h.Get("Access-Control-Allow-Origin") != "https://editor.example" ||
		!strings.Contains(h.Get("Access-Control-Allow-Methods"), "PATCH") || !strings.Contains(h.Get("Access-Control-Allow-Headers"), "Authorization") {
		t.Errorf("preflight: %d %v", resp.StatusCode, h)
	}
	resp, _ = f.do(http.MethodGet, docPath, "", merge2(writer, map[string]string{"Origin": "https://editor.example"}))
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Access-Control-Allow-Origin") != "https://editor.example" || !strings.Contains(resp.Header.Get("Vary"), "Origin") {
		t.Errorf("listed origin GET: %d %v", resp.StatusCode, resp.Header)
	}
	resp, body = f.do(http.MethodGet, docPath, "", merge2(writer, map[string]string{"Origin": "https://evil.example"}))
	f.problem(resp, body, http.StatusForbidden, "allowed_origins")
	resp, _ = f.do(http.MethodOptions, docPath+"/content", "", map[string]string{"Origin": "https://evil.example", "Access-Control-Request-Method": "PATCH"})
	if resp.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("preflight from an unlisted origin got CORS headers: %v", resp.Header)
	}
}

func merge2(a, b map[string]string) map[string]string {
	m := map[string]string{}
	for k, v := range a {
		m[k] = v
	}
	for k, v := range b {
		m[k] = v
	}
	return m
}

// TestDocumentPollOutlivesServerTimeouts: a held poll is answered after its whole wait
// even when the server's ReadTimeout and WriteTimeout are shorter than the wait.
func TestDocumentPollOutlivesServerTimeouts(t *testing.T) {
	cfg := &config.Config{Version: 1}
	cfg.Server.MaxBodyBytes = 64 << 10
	s := New(Options{Config: cfg, Voice: &mcpTestVoice{}, Version: "test"})
	s.documents.store = &fakeDocuments{ids: map[string]string{fakeID: "p"}}
	hs := httptest.NewUnstartedServer(s.Handler())
	hs.Config.ReadTimeout = 500 * time.Millisecond
	hs.Config.WriteTimeout = 500 * time.Millisecond
	hs.Start()
	t.Cleanup(hs.Close)
	s.SetListenAddr(strings.TrimPrefix(hs.URL, "http://"))
	start := time.Now()
	resp, err := http.Get(hs.URL + docPath + "/changes?since=3&wait=1.5")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if el := time.Since(start); resp.StatusCode != http.StatusNoContent || el < 1400*time.Millisecond {
		t.Errorf("a 1.5 s poll under 0.5 s server timeouts: %d after %v", resp.StatusCode, el)
	}
}

// parkedWaits waits until n polls are parked and returns each one's wait, counted from
// start (the deadline the parker holds minus the time the poll was sent).
func (f *docFixture) parkedWaits(n int, start time.Time) []time.Duration {
	f.t.Helper()
	p := f.srv.documents.parker
	deadline := time.Now().Add(5 * time.Second)
	for p.parked() < n {
		if time.Now().After(deadline) {
			f.t.Fatalf("%d polls parked, want %d", p.parked(), n)
		}
		time.Sleep(2 * time.Millisecond)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	var waits []time.Duration
	for _, g := range p.groups {
		for _, poll := range g.polls {
			waits = append(waits, poll.deadline.Sub(start))
		}
	}
	return waits
}

// TestDocumentParkedPolls: a poll with nothing new is parked (its connection taken over);
// a recorded version answers every parked poll with the one rendered feed, with its own
// CORS headers, and ends the connection; a parked poll past its wait gets 204; a store
// error reaches the parked polls as a problem with one log line each.
func TestDocumentParkedPolls(t *testing.T) {
	f := newDocFixture(t, func(c *config.Config) { c.Server.AllowedOrigins = []string{"https://editor.example"} })
	type answer struct {
		status int
		header http.Header
		body   map[string]any
		close  bool
	}
	poll := func(q string, h map[string]string, out chan<- answer) {
		resp, body := f.do(http.MethodGet, docPath+"/changes"+q, "", h)
		out <- answer{resp.StatusCode, resp.Header, body, resp.Close}
	}
	answers := make(chan answer, 3)
	go poll("?since=3&wait=20", nil, answers)
	go poll("?since=3&wait=20", map[string]string{"Origin": "https://editor.example"}, answers)
	go poll("?since=3&wait=20", nil, answers)
	f.parkedWaits(3, time.Now())
	from := uint64(3)
	f.store.setFeed(&plans.ChangeFeed{FromVersion: &from, CurrentVersion: 4, Events: []plans.ChangeEvent{{Version: 4, ChangeType: "UPDATED", ClientID: "mcp-1", DisplayName: "Jörg"}}})
	f.store.wake()
	withCORS := 0
	for range 3 {
		a := <-answers
		ev, _ := a.body["events"].([]any)
		if a.status != http.StatusOK || len(ev) != 1 || a.body["currentVersion"] != float64(4) {
			t.Fatalf("a parked poll after the version: %d %v", a.status, a.body)
		}
		if !a.close || a.header.Get("Content-Type") != "application/json" || a.header.Get("Cache-Control") != "no-store" || !strings.Contains(a.header.Get("Vary"), "Origin") {
			t.Errorf("a parked poll's answer headers: close=%v %v", a.close, a.header)
		}
		if a.header.Get("Access-Control-Allow-Origin") == "https://editor.example" {
			withCORS++
		}
		if name := ev[0].(map[string]any)["displayName"]; name != "Jörg" {
			t.Errorf("display name %v", name)
		}
	}
	if withCORS != 1 {
		t.Errorf("%d answers carried the editor's CORS header, want the 1 poll that sent its Origin", withCORS)
	}
	if n := f.srv.documents.parker.parked(); n != 0 {
		t.Errorf("%d polls still parked after their answer", n)
	}

	// The end of the wait: 204, after the wait and not much later.
	f.store.setFeed(nil)
	start := time.Now()
	resp, _ := f.do(http.MethodGet, docPath+"/changes?since=4&wait=0.3", "", nil)
	if el := time.Since(start); resp.StatusCode != http.StatusNoContent || el < 300*time.Millisecond || el > 3*time.Second {
		t.Errorf("a 0.3 s poll: %d after %v", resp.StatusCode, el)
	}

	// A store error while parked (the document went away in a reload).
	go poll("?since=4&wait=20", nil, answers)
	f.parkedWaits(1, time.Now())
	f.store.setErr(wrapErr(plans.ErrUnknownDocument, fakeID))
	f.store.wake()
	a := <-answers
	if a.status != http.StatusNotFound || a.header.Get("Content-Type") != "application/problem+json" || a.body["instance"] != docPath+"/changes" {
		t.Errorf("a parked poll whose document went away: %d %v %v", a.status, a.header, a.body)
	}
}

// TestDocumentHeldPoll: where the connection cannot be taken over, the handler holds the
// poll and the group answers it all the same; a client that leaves unparks it.
func TestDocumentHeldPoll(t *testing.T) {
	f := newDocFixture(t, nil)
	h := f.srv.Handler()
	rec := httptest.NewRecorder() // no Hijack
	served := make(chan struct{})
	go func() {
		defer close(served)
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "http://"+strings.TrimPrefix(f.url, "http://")+docPath+"/changes?since=3&wait=20", nil))
	}()
	f.parkedWaits(1, time.Now())
	content := "a\n"
	f.store.setFeed(&plans.ChangeFeed{CurrentVersion: 4, Content: &content})
	f.store.wake()
	select {
	case <-served:
	case <-time.After(5 * time.Second):
		t.Fatal("the held poll was not answered")
	}
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `"content":"a\n"`) || rec.Header().Get("Content-Type") != "application/json" {
		t.Errorf("held poll: %d %v %s", rec.Code, rec.Header(), rec.Body)
	}

	f.store.setFeed(nil)
	ctx, cancel := context.WithCancel(context.Background())
	served = make(chan struct{})
	go func() {
		defer close(served)
		r := httptest.NewRequestWithContext(ctx, http.MethodGet, "http://"+strings.TrimPrefix(f.url, "http://")+docPath+"/changes?since=4&wait=20", nil)
		h.ServeHTTP(httptest.NewRecorder(), r)
	}()
	f.parkedWaits(1, time.Now())
	cancel()
	<-served
	f.store.wake() // a round drops the abandoned poll
	deadline := time.Now().Add(5 * time.Second)
	for f.srv.documents.parker.parked() != 0 && time.Now().Before(deadline) {
		time.Sleep(2 * time.Millisecond)
	}
	if n := f.srv.documents.parker.parked(); n != 0 {
		t.Errorf("%d polls parked after their client left", n)
	}
}
