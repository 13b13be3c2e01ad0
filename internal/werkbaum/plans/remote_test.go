package plans

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.etcd.io/bbolt"

	"talkd/internal/config"
	"talkd/internal/queue"
	"talkd/internal/werkbaum"
)

const fakeDocID = "0f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f9"

// fakeDocServer is a small but honest document server (DOCUMENTS.md): it keeps every
// version, checks the base's checksum, rebases patches over what came since when they do
// not overlap (409 when they do), and answers a repeated (clientId, seq) with the answer
// it gave then, changing nothing.
type fakeDocServer struct {
	eng *werkbaum.Engine
	srv *httptest.Server

	mu       sync.Mutex
	versions []string // versions[v-1] is the content of version v
	authors  []string // displayName of each version ("" for the first)
	answers  map[string]fakeAnswer
	token    string // wanted bearer token ("" = none needed)
	auth     []string
	patches  int // PATCH requests received
	applied  int // patches that made a version
	seqs     []int64
	clients  map[string]bool
	compact  uint64        // versions below this are compacted (422)
	delay    time.Duration // before answering anything
	dropNext int           // apply, then drop the answer of this many PATCHes
	// beforePatch runs once (unlocked) when a PATCH arrives, before it is handled:
	// another writer's change landing between talkd's read and its PATCH.
	beforePatch func()
}

type fakeAnswer struct {
	status int
	body   any
}

func newFakeDocServer(t *testing.T, eng *werkbaum.Engine, content string) *fakeDocServer {
	t.Helper()
	f := &fakeDocServer{eng: eng, versions: []string{content}, authors: []string{""}, answers: map[string]fakeAnswer{}, clients: map[string]bool{}}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeDocServer) url() string { return f.srv.URL + "/api/v1/documents/" + fakeDocID }

func (f *fakeDocServer) current() (string, uint64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.versions[len(f.versions)-1], uint64(len(f.versions))
}

// edit makes a new version as another writer would.
func (f *fakeDocServer) edit(content, author string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.versions = append(f.versions, content)
	f.authors = append(f.authors, author)
}

func (f *fakeDocServer) counts() (patches, applied int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.patches, f.applied
}

func writeJSON(w http.ResponseWriter, status int, body any) {
	ct := "application/json"
	if status >= 400 && status != http.StatusConflict {
		ct = "application/problem+json"
	}
	w.Header().Set("Content-Type", ct)
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(body)
}

func problem(status int, detail string) fakeAnswer {
	return fakeAnswer{status, map[string]any{"type": "about:blank", "title": http.StatusText(status), "status": status, "detail": detail}}
}

// seen is what the server recorded, copied under its lock: the display name of each
// version, the seqs of the patches it applied or refused, and the clientIds.
func (f *fakeDocServer) seen() (authors []string, seqs []int64, clients map[string]bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	clients = map[string]bool{}
	for c := range f.clients {
		clients[c] = true
	}
	return append([]string(nil), f.authors...), append([]int64(nil), f.seqs...), clients
}

// set changes the server's behaviour while requests may run.
func (f *fakeDocServer) set(change func(*fakeDocServer)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	change(f)
}

func (f *fakeDocServer) serve(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	delay := f.delay
	f.mu.Unlock()
	if delay > 0 {
		select {
		case <-time.After(delay):
		case <-r.Context().Done():
			return
		}
	}
	f.mu.Lock()
	f.auth = append(f.auth, r.Header.Get("Authorization"))
	token := f.token
	f.mu.Unlock()
	if token != "" && r.Header.Get("Authorization") != "Bearer "+token {
		a := problem(http.StatusUnauthorized, "a valid bearer token is required")
		writeJSON(w, a.status, a.body)
		return
	}
	doc := "/api/v1/documents/" + fakeDocID
	switch {
	case r.Method == http.MethodGet && r.URL.Path == doc:
		content, v := f.current()
		writeJSON(w, http.StatusOK, map[string]any{"id": fakeDocID, "title": "Plan", "content": content, "version": v,
			"createdAt": "2026-12-01T20:00:00Z", "updatedAt": "2026-12-01T20:00:00Z"})
	case r.Method == http.MethodPatch && r.URL.Path == doc+"/content":
		f.mu.Lock()
		before := f.beforePatch
		f.beforePatch = nil // once
		f.mu.Unlock()
		if before != nil {
			before()
		}
		a, drop := f.patch(r)
		if drop {
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				conn.Close()
			}
			return
		}
		writeJSON(w, a.status, a.body)
	default:
		a := problem(http.StatusNotFound, "no document "+r.URL.Path)
		writeJSON(w, a.status, a.body)
	}
}

func (f *fakeDocServer) patch(r *http.Request) (fakeAnswer, bool) {
	var p struct {
		BaseVersion *uint64           `json:"baseVersion"`
		Checksum    string            `json:"checksum"`
		ClientID    string            `json:"clientId"`
		Seq         *int64            `json:"seq"`
		DisplayName string            `json:"displayName"`
		Milestone   bool              `json:"milestone"`
		Ops         []werkbaum.LineOp `json:"ops"`
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.patches++
	drop := false
	if f.dropNext > 0 {
		f.dropNext--
		drop = true
	}
	if err := json.NewDecoder(r.Body).Decode(&p); err != nil || p.BaseVersion == nil || p.Seq == nil || p.ClientID == "" {
		return problem(http.StatusBadRequest, fmt.Sprintf("malformed patch (%v)", err)), drop
	}
	if err := werkbaum.ValidateLineOps(p.Ops); err != nil {
		return problem(http.StatusBadRequest, err.Error()), drop
	}
	idem := p.ClientID + "/" + strconv.FormatInt(*p.Seq, 10)
	if a, ok := f.answers[idem]; ok {
		return a, drop
	}
	f.seqs = append(f.seqs, *p.Seq)
	f.clients[p.ClientID] = true
	a := f.apply(r.Context(), *p.BaseVersion, p.Checksum, p.Ops, p.DisplayName)
	f.answers[idem] = a
	return a, drop
}

func (f *fakeDocServer) apply(ctx context.Context, base uint64, checksum string, ops []werkbaum.LineOp, who string) fakeAnswer {
	cur := uint64(len(f.versions))
	if base < 1 || base > cur || base < f.compact {
		return problem(http.StatusUnprocessableEntity, fmt.Sprintf("base version %d is not available", base))
	}
	baseText, curText := f.versions[base-1], f.versions[cur-1]
	if werkbaum.DocumentChecksum(baseText) != checksum {
		return problem(http.StatusUnprocessableEntity, "checksum mismatch")
	}
	since := []werkbaum.LineOp{}
	if base != cur {
		d, err := f.eng.DiffLines(ctx, baseText, curText)
		if err != nil {
			return problem(http.StatusInternalServerError, err.Error())
		}
		since = d
		rebased, ok, err := f.eng.RebaseLines(ctx, ops, since)
		if err != nil {
			return problem(http.StatusInternalServerError, err.Error())
		}
		if !ok {
			return fakeAnswer{http.StatusConflict, map[string]any{"currentVersion": cur, "opsSinceBase": since}}
		}
		ops = rebased
	}
	next, err := f.eng.ApplyLines(ctx, curText, ops)
	if err != nil {
		return problem(http.StatusUnprocessableEntity, err.Error())
	}
	f.versions = append(f.versions, next)
	f.authors = append(f.authors, who)
	f.applied++
	return fakeAnswer{http.StatusOK, map[string]any{"version": len(f.versions), "opsSinceBase": since}}
}

// remoteFixture is a plan store whose plan "p" is the fake server's document.
type remoteFixture struct {
	doc *fakeDocServer
	svc *Service
	db  *bbolt.DB
	eng *werkbaum.Engine
	dir string
	p   config.Plan
}

// newRemoteFixture starts the fake server with content and opens the store on it; the
// setups run before the store is opened (its start reads the plan in the background).
func newRemoteFixture(t *testing.T, content string, setups ...func(*remoteFixture)) *remoteFixture {
	t.Helper()
	eng, err := werkbaum.NewEngine(werkbaum.Options{})
	if err != nil {
		t.Fatal(err)
	}
	f := &remoteFixture{eng: eng, dir: t.TempDir()}
	f.doc = newFakeDocServer(t, eng, content)
	f.p = config.Plan{Key: "p", URL: f.doc.url(), Lang: "en"}
	f.db = stateDB(t, f.dir)
	for _, setup := range setups {
		setup(f)
	}
	f.svc = f.open(t)
	return f
}

func (f *remoteFixture) open(t *testing.T) *Service {
	t.Helper()
	svc, err := New(Options{Plans: []config.Plan{f.p}, Engine: f.eng, DB: Bolt(f.db), Lanes: &queue.Lanes{}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { svc.Close() })
	return svc
}

func (f *remoteFixture) read(t *testing.T) *Snapshot {
	t.Helper()
	snap, err := f.svc.Read(context.Background(), "p")
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

func setDone(base Base, id, requestID string) WriteRequest {
	return WriteRequest{Tool: "werkbaum_set_status", RequestID: requestID, ArgsHash: "h-" + requestID, Base: base,
		Verb: werkbaum.SetStatus{ID: id, Status: "done"}, Author: Author{Client: "local", Agent: "Claude Code"}}
}

func TestRemoteRead(t *testing.T) {
	t.Setenv("H3_DOC_TOKEN", "doc-token-0123")
	f := newRemoteFixture(t, planText, func(f *remoteFixture) {
		f.doc.token = "doc-token-0123"
		f.p.TokenEnv = "H3_DOC_TOKEN"
	})
	snap := f.read(t)
	if snap.Text != planText || snap.Base.Revision != 1 || snap.Base.Checksum != werkbaum.Checksum([]byte(planText)) || snap.Lines != 4 {
		t.Fatalf("read = %+v", snap)
	}
	f.doc.mu.Lock()
	for _, got := range f.doc.auth {
		if got != "Bearer doc-token-0123" {
			t.Errorf("Authorization = %q", got)
		}
	}
	f.doc.mu.Unlock()
	ins, err := f.svc.Inspect(context.Background(), "p", werkbaum.InspectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(ins.JSON), `"auth"`) || !strings.Contains(string(ins.JSON), "jörg") {
		t.Fatalf("inspect = %.300s", ins.JSON)
	}
	// An outside edit is a new version, read as such.
	f.doc.edit(planText+"  - [ ] #more: More @Müller (S)\n", "Jörg")
	if snap := f.read(t); snap.Base.Revision != 2 || !strings.Contains(snap.Text, "#more") {
		t.Fatalf("after edit: %+v", snap.Base)
	}
	// Without the token the server says 401 and the error says what to check.
	t.Setenv("H3_DOC_TOKEN", "wrong")
	_, err = f.svc.Read(context.Background(), "p")
	var re *RemoteError
	if !errors.As(err, &re) || re.Status != 401 || !strings.Contains(err.Error(), "$H3_DOC_TOKEN") || !strings.Contains(err.Error(), "127.0.0.1") {
		t.Fatalf("wrong token: %v", err)
	}
}

func TestRemoteWriteAndReplay(t *testing.T) {
	f := newRemoteFixture(t, planText)
	ctx := context.Background()
	snap := f.read(t)
	res, err := f.svc.Write(ctx, "p", setDone(snap.Base, "auth", "r1"))
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Replace(planText, "[ ] #auth", "[x] #auth", 1)
	content, v := f.doc.current()
	if content != want || v != 2 {
		t.Fatalf("server content v%d:\n%s", v, content)
	}
	if !res.Changed || res.Revision != 2 || res.Base != (Base{Revision: 2, Checksum: werkbaum.Checksum([]byte(want))}) {
		t.Fatalf("result = %+v", res)
	}
	if authors, _, _ := f.doc.seen(); authors[1] != "Claude Code" {
		t.Fatalf("displayName = %q", authors[1])
	}
	// The same request id is answered from the journal: no second PATCH.
	again, err := f.svc.Write(ctx, "p", setDone(snap.Base, "auth", "r1"))
	if err != nil || !again.Replayed || again.Revision != 2 {
		t.Fatalf("replay = %+v, %v", again, err)
	}
	if p, a := f.doc.counts(); p != 1 || a != 1 {
		t.Fatalf("patches %d, applied %d; want 1, 1", p, a)
	}
	op, err := f.svc.Operation(ctx, "p", "local", "r1")
	if err != nil || op.State != StateApplied || op.Revision != 2 {
		t.Fatalf("operation = %+v, %v", op, err)
	}
	// A settled entry does not keep its patch (the ops of a whole text can be large).
	if e, err := f.svc.entry("p", entryKey("local", "r1")); err != nil || e == nil || e.Remote != nil {
		t.Fatalf("journal entry = %+v, %v", e, err)
	}
	// The next write goes on from the answered base; an agent without a name is "Agent".
	req := setDone(res.Base, "docs", "r2")
	req.Author.Agent = ""
	if _, err := f.svc.Write(ctx, "p", req); err != nil {
		t.Fatal(err)
	}
	if content, _ := f.doc.current(); !strings.Contains(content, "[x] #docs") || !strings.Contains(content, "[x] #auth") {
		t.Fatalf("second write lost:\n%s", content)
	}
	authors, seqs, clients := f.doc.seen()
	if authors[2] != "Agent" {
		t.Fatalf("fallback displayName = %q", authors[2])
	}
	// Both patches came from one clientId with increasing seqs.
	if len(clients) != 1 || len(seqs) != 2 || seqs[1] <= seqs[0] {
		t.Fatalf("clients %v, seqs %v", clients, seqs)
	}
	for c := range clients {
		if !strings.HasPrefix(c, "mcp-") || c != f.svc.agentClientID {
			t.Fatalf("clientId %q", c)
		}
	}
}

func TestRemoteDisplayNameOverride(t *testing.T) {
	f := newRemoteFixture(t, planText, func(f *remoteFixture) { f.p.DisplayName = "Build bot" })
	if _, err := f.svc.Write(context.Background(), "p", setDone(f.read(t).Base, "auth", "d1")); err != nil {
		t.Fatal(err)
	}
	if authors, _, _ := f.doc.seen(); authors[1] != "Build bot" {
		t.Fatalf("displayName = %q", authors[1])
	}
}

func TestRemoteStaleBaseIsAConflict(t *testing.T) {
	f := newRemoteFixture(t, planText)
	old := f.read(t).Base
	edited := strings.Replace(planText, "Docs", "Documentation", 1)
	f.doc.edit(edited, "Jörg")
	_, err := f.svc.Write(context.Background(), "p", setDone(old, "auth", "s1"))
	var conflict *ConflictError
	if !errors.As(err, &conflict) || conflict.Current.Text != edited || conflict.Current.Base.Revision != 2 {
		t.Fatalf("want a conflict carrying version 2, got %v", err)
	}
	if p, _ := f.doc.counts(); p != 0 {
		t.Fatalf("%d PATCHes sent on a stale base", p)
	}
	op, err := f.svc.Operation(context.Background(), "p", "local", "s1")
	if err != nil || op.State != StateConflict {
		t.Fatalf("operation = %+v, %v", op, err)
	}
}

// A change that lands on the server between talkd's read and its PATCH: the server
// rebases a non-overlapping one (both survive, the base answered is the document's now)
// and answers 409 to an overlapping one (a conflict carrying the current text).
func TestRemoteRaceWithAnotherWriter(t *testing.T) {
	f := newRemoteFixture(t, planText)
	ctx := context.Background()
	foreign := strings.Replace(planText, "%% test plan", "%% test plan (edited)", 1)
	f.doc.set(func(d *fakeDocServer) { d.beforePatch = func() { f.doc.edit(foreign, "Jörg") } })
	res, err := f.svc.Write(ctx, "p", setDone(f.read(t).Base, "auth", "x1"))
	if err != nil {
		t.Fatal(err)
	}
	content, v := f.doc.current()
	if !strings.Contains(content, "(edited)") || !strings.Contains(content, "[x] #auth") || v != 3 {
		t.Fatalf("rebase lost a change (v%d):\n%s", v, content)
	}
	if res.Revision != 3 || res.Base != (Base{Revision: 3, Checksum: werkbaum.Checksum([]byte(content))}) {
		t.Fatalf("result after rebase = %+v", res)
	}

	overlap := strings.Replace(content, "Docs @Müller", "Docs by hand @Müller", 1)
	f.doc.set(func(d *fakeDocServer) { d.beforePatch = func() { f.doc.edit(overlap, "Jörg") } })
	_, err = f.svc.Write(ctx, "p", setDone(res.Base, "docs", "x2"))
	var conflict *ConflictError
	if !errors.As(err, &conflict) || conflict.Current.Text != overlap || conflict.Current.Base.Revision != 4 {
		t.Fatalf("want a conflict carrying version 4, got %v", err)
	}
	if got, _ := f.doc.current(); got != overlap {
		t.Fatalf("a conflicting patch changed the document:\n%s", got)
	}
	if op, _ := f.svc.Operation(ctx, "p", "local", "x2"); op.State != StateConflict {
		t.Fatalf("operation = %+v", op)
	}
}

// 422 (the base is no longer there, or its checksum does not match): read again, report
// a conflict.
func TestRemote422IsAConflict(t *testing.T) {
	f := newRemoteFixture(t, planText)
	f.doc.set(func(d *fakeDocServer) {
		d.beforePatch = func() {
			f.doc.set(func(d *fakeDocServer) {
				d.versions = append(d.versions, planText)
				d.authors = append(d.authors, "compactor")
				d.compact = uint64(len(d.versions))
			})
		}
	})
	_, err := f.svc.Write(context.Background(), "p", setDone(f.read(t).Base, "auth", "c1"))
	var conflict *ConflictError
	if !errors.As(err, &conflict) || conflict.Current.Base.Revision != 2 || conflict.Current.Text != planText {
		t.Fatalf("want a conflict on version 2, got %v", err)
	}
	if _, a := f.doc.counts(); a != 0 {
		t.Fatal("a 422 patch was applied")
	}
}

func TestRemoteServerDown(t *testing.T) {
	f := newRemoteFixture(t, planText)
	base := f.read(t).Base
	f.doc.srv.Close()
	for _, call := range []func() error{
		func() error { _, err := f.svc.Read(context.Background(), "p"); return err },
		func() error {
			_, err := f.svc.Write(context.Background(), "p", setDone(base, "auth", "down1"))
			return err
		},
	} {
		err := call()
		var re *RemoteError
		if !errors.As(err, &re) || re.Status != 0 || !strings.Contains(err.Error(), "unreachable") || !strings.Contains(err.Error(), strings.TrimPrefix(f.doc.srv.URL, "http://")) {
			t.Fatalf("want an unreachable error naming the server, got %v", err)
		}
	}
	if op, _ := f.svc.Operation(context.Background(), "p", "local", "down1"); op.State != StateUnknown {
		t.Fatalf("a write that never reached the server is %q", op.State)
	}
}

func TestRemoteSlowServerTimesOut(t *testing.T) {
	f := newRemoteFixture(t, planText)
	f.svc.remote.SetTimeout(200 * time.Millisecond)
	f.doc.set(func(d *fakeDocServer) { d.delay = 5 * time.Second })
	start := time.Now()
	_, err := f.svc.Read(context.Background(), "p")
	var re *RemoteError
	if !errors.As(err, &re) || !re.Timeout || !strings.Contains(err.Error(), "did not answer") {
		t.Fatalf("want a timeout, got %v", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Fatalf("the timeout took %v", d)
	}
	// The caller's context is honoured as well.
	f.svc.remote.SetTimeout(time.Minute)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start = time.Now()
	if _, err := f.svc.Read(ctx, "p"); err == nil || time.Since(start) > 3*time.Second {
		t.Fatalf("cancelled read: %v after %v", err, time.Since(start))
	}
}

// A slow document server costs a status (Summarize) at most remoteSummaryWait, and the
// summary says why it has no figures.
func TestRemoteSlowServerSummary(t *testing.T) {
	f := newRemoteFixture(t, planText)
	f.doc.set(func(d *fakeDocServer) { d.delay = 5 * time.Second })
	start := time.Now()
	sum := f.svc.Summarize(context.Background(), "p")
	if d := time.Since(start); d > remoteSummaryWait+2*time.Second {
		t.Fatalf("a summary waited %v for a slow server", d)
	}
	if !strings.Contains(sum.Error, "did not answer within 1s") || !strings.Contains(sum.Error, "127.0.0.1") || sum.Revision != 0 {
		t.Fatalf("summary of a plan on a slow server: %+v", sum)
	}
	f.doc.set(func(d *fakeDocServer) { d.delay = 0 })
	if sum := f.svc.Summarize(context.Background(), "p"); sum.Error != "" || sum.Revision == 0 {
		t.Fatalf("summary once the server answers: %+v", sum)
	}
}

// The server applied the write, but its answer was lost: the agent's retry with the same
// request_id repeats the PATCH with the same (clientId, seq) and gets the answer recorded
// then; the document changed once.
func TestRemoteLostAnswerRetried(t *testing.T) {
	f := newRemoteFixture(t, planText)
	ctx := context.Background()
	base := f.read(t).Base
	f.doc.set(func(d *fakeDocServer) { d.dropNext = 1 })
	_, err := f.svc.Write(ctx, "p", setDone(base, "auth", "l1"))
	var re *RemoteError
	if !errors.As(err, &re) || !re.MaybeApplied || !strings.Contains(err.Error(), "same request_id") {
		t.Fatalf("want a maybe-applied error, got %v", err)
	}
	if op, _ := f.svc.Operation(ctx, "p", "local", "l1"); op.State != StateApplied || op.Revision != 2 {
		// Operation settles the pending entry by repeating the PATCH.
		t.Fatalf("operation = %+v", op)
	}
	res, err := f.svc.Write(ctx, "p", setDone(base, "auth", "l1"))
	if err != nil || !res.Replayed || res.Revision != 2 {
		t.Fatalf("retry = %+v, %v", res, err)
	}
	if p, a := f.doc.counts(); a != 1 || p != 2 {
		t.Fatalf("patches %d, applied %d; want 2, 1", p, a)
	}
	if content, v := f.doc.current(); v != 2 || strings.Count(content, "[x] #auth") != 1 {
		t.Fatalf("v%d:\n%s", v, content)
	}
}

// After a crash (a new process on the same state database) the pending entry is settled
// by its own (clientId, seq), and the new process never reuses a seq.
func TestRemotePendingSettledAfterRestart(t *testing.T) {
	f := newRemoteFixture(t, planText)
	ctx := context.Background()
	base := f.read(t).Base
	f.doc.set(func(d *fakeDocServer) { d.dropNext = 1 })
	if _, err := f.svc.Write(ctx, "p", setDone(base, "auth", "k1")); err == nil {
		t.Fatal("lost answer not reported")
	}
	_, seqs, _ := f.doc.seen()
	firstClient, firstSeq := f.svc.agentClientID, seqs[0]
	f.svc.Close()
	f.svc = f.open(t)
	if f.svc.agentClientID == firstClient {
		t.Fatal("a new process kept the clientId")
	}
	res, err := f.svc.Write(ctx, "p", setDone(base, "auth", "k1"))
	if err != nil || !res.Replayed || res.Revision != 2 {
		t.Fatalf("retry after restart = %+v, %v", res, err)
	}
	if _, a := f.doc.counts(); a != 1 {
		t.Fatalf("applied %d times", a)
	}
	if _, err := f.svc.Write(ctx, "p", setDone(res.Base, "docs", "k2")); err != nil {
		t.Fatal(err)
	}
	if _, seqs, _ := f.doc.seen(); len(seqs) != 2 || seqs[1] <= firstSeq {
		t.Fatalf("seqs %v: the restarted process reused a seq", seqs)
	}
}

func TestRemoteGuardRefusesBeforePatch(t *testing.T) {
	f := newRemoteFixture(t, planText)
	req := setDone(f.read(t).Base, "auth", "g1")
	req.Verb = werkbaum.SetStatus{ID: "auth", Status: "^"}
	_, err := f.svc.Write(context.Background(), "p", req)
	var refused *RefusedError
	if !errors.As(err, &refused) || refused.Refusal.Switch != "allowProd" {
		t.Fatalf("want allowProd refusal, got %v", err)
	}
	// Bad input is refused before any PATCH as well.
	req = setDone(f.read(t).Base, "nope", "g2")
	if _, err := f.svc.Write(context.Background(), "p", req); !errors.Is(err, werkbaum.ErrBadInput) {
		t.Fatalf("unknown id: %v", err)
	}
	if p, _ := f.doc.counts(); p != 0 {
		t.Fatalf("%d PATCHes sent for refused writes", p)
	}
	if op, _ := f.svc.Operation(context.Background(), "p", "local", "g1"); op.State != StateRejected {
		t.Fatalf("operation = %+v", op)
	}
}

func TestRemoteRefusalsNameTheServer(t *testing.T) {
	f := newRemoteFixture(t, planText, func(f *remoteFixture) {
		f.p.URL = f.doc.srv.URL + "/api/v1/documents/00000000-0000-4000-8000-000000000000"
	})
	_, err := f.svc.Read(context.Background(), "p")
	var re *RemoteError
	if !errors.As(err, &re) || re.Status != 404 || !strings.Contains(err.Error(), "does not exist") {
		t.Fatalf("unknown document: %v", err)
	}
}
