package test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// Helpers of the document-door tests (documents*_test.go): a plain HTTP client of the
// live-document protocol (shared/werkbaum/DOCUMENTS.md) that keeps a shadow copy the way
// the editor's live client does, usable from goroutines.

// docOp is one LineOperation.
type docOp struct {
	Op    string   `json:"op"`
	Index int      `json:"index"`
	Count int      `json:"count"`
	Lines []string `json:"lines"`
}

// docDocument is a Document answer.
type docDocument struct {
	ID        string    `json:"id"`
	Title     string    `json:"title"`
	Content   string    `json:"content"`
	Version   uint64    `json:"version"`
	CreatedAt time.Time `json:"createdAt"`
	UpdatedAt time.Time `json:"updatedAt"`
}

// docEvent is a ChangeEvent.
type docEvent struct {
	Version     uint64 `json:"version"`
	ChangeType  string `json:"changeType"`
	ClientID    string `json:"clientId"`
	DisplayName string `json:"displayName"`
	Title       string `json:"title"`
}

// docFeed is a ChangeFeed.
type docFeed struct {
	FromVersion    *uint64    `json:"fromVersion"`
	CurrentVersion uint64     `json:"currentVersion"`
	Ops            []docOp    `json:"ops"`
	Content        *string    `json:"content"`
	Events         []docEvent `json:"events"`
}

// docAnswer is one HTTP answer of a document door.
type docAnswer struct {
	Status int
	Header http.Header
	Close  bool // the answer ends its connection (Connection: close)
	Raw    []byte
	Map    map[string]any
}

func (a docAnswer) String() string { return fmt.Sprintf("HTTP %d %s", a.Status, a.Raw) }

// docHTTP talks to one daemon's document doors.
type docHTTP struct {
	base    string // http://127.0.0.1:PORT
	http    *http.Client
	headers map[string]string
}

func newDocHTTP(d *daemon, headers map[string]string) *docHTTP {
	return &docHTTP{base: d.URL, headers: headers, http: &http.Client{Timeout: 60 * time.Second,
		Transport: &http.Transport{MaxIdleConnsPerHost: 16}}}
}

// do sends one request; v (if not nil and not a string) is marshalled as the body.
func (c *docHTTP) do(ctx context.Context, method, path string, v any) (docAnswer, error) {
	var body io.Reader
	switch b := v.(type) {
	case nil:
	case string:
		body = strings.NewReader(b)
	default:
		raw, err := json.Marshal(v)
		if err != nil {
			return docAnswer{}, err
		}
		body = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, body)
	if err != nil {
		return docAnswer{}, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range c.headers {
		req.Header.Set(k, v)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return docAnswer{}, fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return docAnswer{}, fmt.Errorf("%s %s: reading the answer: %w", method, path, err)
	}
	a := docAnswer{Status: resp.StatusCode, Header: resp.Header, Close: resp.Close, Raw: raw}
	if len(raw) > 0 && raw[0] == '{' {
		if err := json.Unmarshal(raw, &a.Map); err != nil {
			return a, fmt.Errorf("%s %s: the answer is not JSON: %w: %s", method, path, err, raw)
		}
	}
	return a, nil
}

// must is do for the test goroutine.
// parkedPoll starts a long poll of the document's feed since a version (wait 25 s) and
// returns once it has had time to be parked; its answer arrives on the channel.
func (c *docHTTP) parkedPoll(docPath string, since uint64) <-chan docAnswer {
	answer := make(chan docAnswer, 1)
	go func() {
		a, _ := c.do(context.Background(), http.MethodGet, fmt.Sprintf("%s/changes?since=%d&wait=25", docPath, since), nil)
		answer <- a
	}()
	time.Sleep(300 * time.Millisecond)
	return answer
}

func (c *docHTTP) must(t testing.TB, method, path string, v any) docAnswer {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	a, err := c.do(ctx, method, path, v)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// decode unmarshals an answer's body into v.
func (a docAnswer) decode(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(a.Raw, v); err != nil {
		t.Fatalf("answer %s: %v", a, err)
	}
}

// problem checks that a is a problem details answer with status whose detail contains
// want.
func (a docAnswer) problem(t testing.TB, status int, want string) {
	t.Helper()
	if a.Status != status {
		t.Fatalf("want HTTP %d, got %s", status, a)
	}
	if ct := a.Header.Get("Content-Type"); ct != "application/problem+json" {
		t.Errorf("a refusal's Content-Type is %q, want application/problem+json: %s", ct, a)
	}
	for _, k := range []string{"type", "title", "status", "detail", "instance"} {
		if _, ok := a.Map[k]; !ok {
			t.Errorf("the problem has no %q: %s", k, a)
		}
	}
	if a.Map["status"] != float64(status) {
		t.Errorf("problem status %v, HTTP %d", a.Map["status"], status)
	}
	if d, _ := a.Map["detail"].(string); !strings.Contains(d, want) {
		t.Errorf("problem detail %q does not say %q", d, want)
	}
}

// docChecksum is the protocol's checksum of a text (NOTATION §25).
func docChecksum(text string) string {
	text = strings.ReplaceAll(text, "\r\n", "\n")
	text = strings.ReplaceAll(text, "\r", "\n")
	s := sha256.Sum256([]byte(text))
	return "sha256:" + hex.EncodeToString(s[:])
}

// docApply applies ops to text the way NOTATION §25 describes (strict); false when they
// do not fit.
func docApply(text string, ops []docOp) (string, bool) {
	base := strings.Split(text, "\n")
	var out []string
	cursor := 0
	for _, op := range ops {
		removed := 0
		if op.Op != "insert" {
			removed = op.Count
		}
		end := op.Index + removed
		if op.Index < cursor || op.Index < 0 || end > len(base) {
			return "", false
		}
		out = append(out, base[cursor:op.Index]...)
		if op.Op != "delete" {
			out = append(out, op.Lines...)
		}
		cursor = end
	}
	out = append(out, base[cursor:]...)
	return strings.Join(out, "\n"), true
}

// docPatch is a ContentPatch body.
type docPatch struct {
	BaseVersion uint64  `json:"baseVersion"`
	Checksum    string  `json:"checksum"`
	ClientID    string  `json:"clientId"`
	Seq         int64   `json:"seq"`
	DisplayName string  `json:"displayName,omitempty"`
	Milestone   bool    `json:"milestone,omitempty"`
	Ops         []docOp `json:"ops"`
}

// docEditor is an editor's live client: a shadow copy (text and version) and its own
// clientId and running seq.
type docEditor struct {
	c       *docHTTP
	path    string // /api/v1/documents/<id>
	id      string
	name    string
	seq     atomic.Int64
	shadow  string
	version uint64
}

func newDocEditor(c *docHTTP, docPath, clientID, name string) *docEditor {
	return &docEditor{c: c, path: docPath, id: clientID, name: name}
}

// load takes the document as the shadow copy.
func (e *docEditor) load(ctx context.Context) error {
	a, err := e.c.do(ctx, http.MethodGet, e.path, nil)
	if err != nil {
		return err
	}
	if a.Status != http.StatusOK {
		return fmt.Errorf("GET %s: %s", e.path, a)
	}
	var doc docDocument
	if err := json.Unmarshal(a.Raw, &doc); err != nil {
		return err
	}
	e.shadow, e.version = doc.Content, doc.Version
	return nil
}

// patch sends ops against the shadow copy with the next seq; on 200 the shadow is brought
// forward (opsSinceBase, then the own ops rebased by the server — reconstructed here by
// reloading, which is what a client does that does not track its own shifted ops).
func (e *docEditor) patch(ctx context.Context, ops []docOp, milestone bool) (docAnswer, error) {
	body := docPatch{BaseVersion: e.version, Checksum: docChecksum(e.shadow), ClientID: e.id, Seq: e.seq.Add(1),
		DisplayName: e.name, Milestone: milestone, Ops: ops}
	return e.c.do(ctx, http.MethodPatch, e.path+"/content", body)
}

// docPathOf asks plans_list for the plan's document URL and returns its path; it checks
// that the URL names this daemon's address.
func docPathOf(t testing.TB, d *daemon, mcp *mcpClient, key string) string {
	t.Helper()
	var list struct {
		Plans []struct {
			Key      string `json:"key"`
			Document string `json:"document"`
		} `json:"plans"`
	}
	a := mcp.ok(t, "plans_list", map[string]any{}, &list)
	for _, p := range list.Plans {
		if p.Key != key {
			continue
		}
		prefix := d.URL + "/api/v1/documents/"
		id, ok := strings.CutPrefix(p.Document, prefix)
		if !ok || len(id) != 36 || strings.Count(id, "-") != 4 {
			t.Fatalf("plan %q: document URL %q, want %s<uuid>", key, p.Document, prefix)
		}
		if !strings.Contains(a.Text, p.Document) {
			t.Errorf("plans_list's text does not show the document URL %s:\n%s", p.Document, a.Text)
		}
		return "/api/v1/documents/" + id
	}
	t.Fatalf("plans_list has no plan %q: %+v", key, list)
	return ""
}
