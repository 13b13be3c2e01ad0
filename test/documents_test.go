package test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"
)

// The document doors at the process boundary: a real talkd serving its plans as live
// documents (shared/werkbaum/DOCUMENTS.md) over real HTTP, checked against the plan file
// on disk and the MCP tools' view of the same plan.

const docPlanText = "[ ] #root: Wurzel (L)\n  - [ ] #a: Alpha (S) @jörg\n  - [ ] #b: Beta (S) @Müller\n  - [ ] #c: Gamma (XS)\n"

// TestDocumentProtocolEdges: the protocol's answers one by one — the URL in plans_list and
// talk plans, GET, a PATCH on the current base, a stale checksum (422), malformed ops
// (400), a repeated (clientId, seq) (the same answer, nothing changed), a stale base
// rebased (200 with opsSinceBase), real overlap (409 with currentVersion and
// opsSinceBase), an unknown id (404), the title, the methods a file-backed plan does not
// offer (405 saying why), /info.
func TestDocumentProtocolEdges(t *testing.T) {
	t.Parallel()
	d, paths := startPlanDaemon(t, planFile{Key: "p", Text: docPlanText})
	mcp := newMCPClient(d)
	path := docPathOf(t, d, mcp, "p")
	c := newDocHTTP(d, nil)

	// talk plans shows the same URL.
	_, talk := binaries(t)
	cmd := exec.Command(talk, "plans")
	cmd.Env = append(os.Environ(), "TALK_URL="+d.URL)
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), d.URL+path) || !strings.Contains(string(out), "DOCUMENT") {
		t.Errorf("talk plans (%v) does not show %s:\n%s", err, d.URL+path, out)
	}

	var doc docDocument
	c.must(t, http.MethodGet, path, nil).decode(t, &doc)
	read := mcp.read(t, "p")
	if doc.Content != docPlanText || doc.Version != read.Base.Revision || doc.Title != "p" || "/api/v1/documents/"+doc.ID != path {
		t.Fatalf("GET %s = %+v; the plan's revision is %d", path, doc, read.Base.Revision)
	}
	// Any case of the id names the document.
	if a := c.must(t, http.MethodGet, "/api/v1/documents/"+strings.ToUpper(doc.ID), nil); a.Status != http.StatusOK {
		t.Errorf("upper-case id: %s", a)
	}

	ed := newDocEditor(c, path, "editor-1", "Jörg im Editor")
	ctx := context.Background()
	if err := ed.load(ctx); err != nil {
		t.Fatal(err)
	}
	// A PATCH on the current base: 200, opsSinceBase [], the file changed, the agents'
	// revision is the document's version.
	ins := []docOp{{Op: "insert", Index: 4, Lines: []string{"  - [ ] #d: Delta (M) @Müller"}}}
	a, err := ed.patch(ctx, ins, true)
	if err != nil || a.Status != http.StatusOK {
		t.Fatalf("PATCH: %v %s", err, a)
	}
	if ops, ok := a.Map["opsSinceBase"].([]any); !ok || len(ops) != 0 || a.Map["version"] != float64(doc.Version+1) {
		t.Fatalf("PATCH on the current base: %s", a)
	}
	want := docPlanText + "  - [ ] #d: Delta (M) @Müller\n"
	if got := string(readFile(t, paths["p"])); got != want {
		t.Fatalf("the file after the PATCH:\n%s", got)
	}
	if r := mcp.read(t, "p"); r.Base.Revision != doc.Version+1 || r.Text != want {
		t.Errorf("werkbaum_read after the PATCH: revision %d (want %d)", r.Base.Revision, doc.Version+1)
	}
	first := a

	// The same (clientId, seq) again: the same answer, nothing applied twice.
	ed.seq.Add(-1)
	again, err := ed.patch(ctx, ins, true)
	if err != nil || again.Status != http.StatusOK || string(again.Raw) != string(first.Raw) {
		t.Errorf("repeated (clientId, seq): %v %s, first answer %s", err, again, first)
	}
	if got := string(readFile(t, paths["p"])); got != want {
		t.Errorf("a repeated PATCH changed the file:\n%s", got)
	}
	if err := ed.load(ctx); err != nil {
		t.Fatal(err)
	}

	// A stale checksum: 422, nothing changed.
	bad := docPatch{BaseVersion: ed.version, Checksum: docChecksum(ed.shadow + "x"), ClientID: "editor-1", Seq: ed.seq.Add(1),
		Ops: []docOp{{Op: "delete", Index: 0, Count: 1}}}
	c.must(t, http.MethodPatch, path+"/content", bad).problem(t, http.StatusUnprocessableEntity, "checksum")
	// An index past the end: 422.
	bad = docPatch{BaseVersion: ed.version, Checksum: docChecksum(ed.shadow), ClientID: "editor-1", Seq: ed.seq.Add(1),
		Ops: []docOp{{Op: "delete", Index: 40, Count: 1}}}
	c.must(t, http.MethodPatch, path+"/content", bad).problem(t, http.StatusUnprocessableEntity, "")

	// Malformed bodies: 400 naming the problem.
	base := fmt.Sprintf(`{"baseVersion":%d,"checksum":%q,"clientId":"editor-1","seq":%%d,"ops":%%s}`, ed.version, docChecksum(ed.shadow))
	for _, tc := range []struct{ ops, detail string }{
		{`[{"op":"insert","index":3,"lines":["x"]},{"op":"insert","index":1,"lines":["y"]}]`, "ops[1]"},        // unsorted
		{`[{"op":"replace","index":1,"count":3,"lines":["x"]},{"op":"delete","index":2,"count":1}]`, "ops[1]"}, // overlapping
		{`[{"op":"delete","index":1}]`, `"ops[0].count" is required`},                                          // count missing
		{`[{"op":"replace","index":-1,"count":1,"lines":["x"]}]`, "≥ 0"},                                       // negative
		{`[{"op":"swap","index":1,"count":1}]`, "swap"},                                                        // unknown op
		{`[{"op":"insert","index":1,"lines":["two\nlines"]}]`, "line break"},                                   // a line that is two
	} {
		a := c.must(t, http.MethodPatch, path+"/content", fmt.Sprintf(base, ed.seq.Add(1), tc.ops))
		a.problem(t, http.StatusBadRequest, tc.detail)
	}
	if got := string(readFile(t, paths["p"])); got != want {
		t.Fatalf("a refused PATCH changed the file:\n%s", got)
	}

	// A stale base that does not overlap: the agent sets #c's status (line 4), the editor
	// then appends to its old shadow; the server rebases and answers the agent's ops.
	agentBase := mcp.read(t, "p").Base
	mcp.ok(t, "werkbaum_set_status", writeArgs("p", agentBase, "doc-edge-1", map[string]any{"id": "c", "status": "done"}), nil)
	a, err = ed.patch(ctx, []docOp{{Op: "insert", Index: 5, Lines: []string{"  - [ ] #e: Epsilon (XS)"}}}, false)
	if err != nil || a.Status != http.StatusOK {
		t.Fatalf("PATCH on a stale base: %v %s", err, a)
	}
	since, _ := a.Map["opsSinceBase"].([]any)
	if len(since) != 1 || !strings.Contains(fmt.Sprint(since[0]), "[x] #c: Gamma") {
		t.Errorf("opsSinceBase of the rebased PATCH: %s", a)
	}
	want = strings.Replace(want, "[ ] #c: Gamma", "[x] #c: Gamma", 1) + "  - [ ] #e: Epsilon (XS)\n"
	if got := string(readFile(t, paths["p"])); got != want {
		t.Fatalf("after the rebased PATCH the file is\n%s\nwant\n%s", got, want)
	}

	// Real overlap: the editor replaces #c's line on the old base: 409 with currentVersion
	// and the ops since its base; nothing applied.
	cur := mcp.read(t, "p").Base.Revision
	a, err = ed.patch(ctx, []docOp{{Op: "replace", Index: 3, Count: 1, Lines: []string{"  - [~] #c: Gamma (XS)"}}}, false)
	if err != nil {
		t.Fatal(err)
	}
	a.problem(t, http.StatusConflict, "")
	if ops, _ := a.Map["opsSinceBase"].([]any); a.Map["currentVersion"] != float64(cur) || len(ops) == 0 {
		t.Errorf("409 members: %s (current %d)", a, cur)
	}
	if got := string(readFile(t, paths["p"])); got != want {
		t.Fatalf("a 409 changed the file:\n%s", got)
	}

	// Title: a new version; a stale expectedVersion is a 409.
	cur = mcp.read(t, "p").Base.Revision
	a = c.must(t, http.MethodPatch, path+"/title", map[string]any{"title": "Plan für @jörg", "expectedVersion": cur})
	if a.Status != http.StatusOK || a.Map["title"] != "Plan für @jörg" {
		t.Errorf("PATCH title: %s", a)
	}
	c.must(t, http.MethodPatch, path+"/title", map[string]any{"title": "Zu spät", "expectedVersion": cur}).problem(t, http.StatusConflict, "")
	c.must(t, http.MethodPatch, path+"/title", map[string]any{"title": "", "expectedVersion": cur}).problem(t, http.StatusBadRequest, "title")

	// Unknown ids and paths: 404.
	c.must(t, http.MethodGet, "/api/v1/documents/00000000-0000-4000-8000-000000000000", nil).problem(t, http.StatusNotFound, "no document")
	c.must(t, http.MethodGet, "/api/v1/documents/00000000-0000-4000-8000-000000000000/changes?since=0&wait=0", nil).problem(t, http.StatusNotFound, "")
	c.must(t, http.MethodGet, "/api/v1/documents/nope", nil).problem(t, http.StatusNotFound, "")
	// What a file-backed plan does not offer: 405 saying why.
	c.must(t, http.MethodPost, "/api/v1/documents", map[string]any{"title": "x", "content": ""}).problem(t, http.StatusForbidden, "create = true")
	c.must(t, http.MethodGet, "/api/v1/documents", nil).problem(t, http.StatusMethodNotAllowed, "plans_list")
	c.must(t, http.MethodPut, path, map[string]any{"title": "x", "content": ""}).problem(t, http.StatusMethodNotAllowed, "PATCH")
	c.must(t, http.MethodDelete, path, nil).problem(t, http.StatusMethodNotAllowed, "folder")
	c.must(t, http.MethodPost, path+"/restore", map[string]any{}).problem(t, http.StatusConflict, "name the version")
	if got := string(readFile(t, paths["p"])); got != want {
		t.Fatalf("a refused method changed the file:\n%s", got)
	}
	if !strings.Contains(d.logs(), `msg="request refused" door=/api/v1/documents status=405`) {
		t.Errorf("no log line for a refused document request:\n%s", d.logs())
	}
	a = c.must(t, http.MethodGet, "/api/v1/info", nil)
	if a.Status != http.StatusOK || a.Map["name"] != "talkd" || a.Map["version"] == "" {
		t.Errorf("/api/v1/info: %s", a)
	}
}

// TestDocumentCompactedBase: a base older than the store keeps is refused with 422 and the
// feed from it sends the whole content.
func TestDocumentCompactedBase(t *testing.T) {
	t.Parallel()
	d, paths := startPlanDaemon(t, planFile{Key: "p", Text: docPlanText})
	path := docPathOf(t, d, newMCPClient(d), "p")
	c := newDocHTTP(d, nil)
	ctx := context.Background()
	// The old tab's base is a sync state (a non-milestone PATCH of its own): milestones
	// are kept longer, for the history.
	old := newDocEditor(c, path, "old-tab", "Alter Tab")
	if err := old.load(ctx); err != nil {
		t.Fatal(err)
	}
	if a, err := old.patch(ctx, []docOp{{Op: "insert", Index: 4, Lines: []string{"# Notiz"}}}, false); err != nil || a.Status != http.StatusOK {
		t.Fatalf("old tab's first patch: %v %s", err, a)
	}
	if err := old.load(ctx); err != nil {
		t.Fatal(err)
	}
	ed := newDocEditor(c, path, "typist", "Tippende")
	if err := ed.load(ctx); err != nil {
		t.Fatal(err)
	}
	// 80 versions (the store keeps the texts of the newest 64 sync states for rebasing).
	for i := range 80 {
		a, err := ed.patch(ctx, []docOp{{Op: "insert", Index: 4 + i, Lines: []string{fmt.Sprintf("  - [ ] #n%d: Zeile %d (XS)", i, i)}}}, false)
		if err != nil || a.Status != http.StatusOK {
			t.Fatalf("patch %d: %v %s", i, err, a)
		}
		if err := ed.load(ctx); err != nil {
			t.Fatal(err)
		}
	}
	a, err := old.patch(ctx, []docOp{{Op: "insert", Index: 0, Lines: []string{"# von damals"}}}, false)
	if err != nil {
		t.Fatal(err)
	}
	a.problem(t, http.StatusUnprocessableEntity, "")
	if strings.Contains(string(readFile(t, paths["p"])), "von damals") {
		t.Fatal("a PATCH on a compacted base was applied")
	}
	var feed docFeed
	fa := c.must(t, http.MethodGet, fmt.Sprintf("%s/changes?since=%d&wait=0", path, old.version), nil)
	if fa.Status != http.StatusOK {
		t.Fatalf("feed from a compacted version: %s", fa)
	}
	fa.decode(t, &feed)
	if feed.FromVersion != nil || feed.Content == nil || *feed.Content != ed.shadow || feed.CurrentVersion != ed.version || feed.Ops != nil {
		t.Errorf("feed from a compacted version: %s", fa)
	}
	// From a recent version the feed still sends ops that bring that version forward.
	fa = c.must(t, http.MethodGet, fmt.Sprintf("%s/changes?since=%d&wait=0", path, ed.version-3), nil)
	feed = docFeed{}
	fa.decode(t, &feed)
	if feed.FromVersion == nil || *feed.FromVersion != ed.version-3 || feed.Content != nil || len(feed.Events) != 3 {
		t.Fatalf("feed from a kept version: %s", fa)
	}
	// since 0 is the whole content.
	fa = c.must(t, http.MethodGet, path+"/changes?since=0&wait=0", nil)
	feed = docFeed{}
	fa.decode(t, &feed)
	if feed.FromVersion != nil || feed.Content == nil || *feed.Content != ed.shadow {
		t.Errorf("feed since 0: %s", fa)
	}
}

// TestDocumentFeedWaitClamped: a long poll's wait is clamped to 30 s and the held request
// is answered 204 then — not cut by the server's timeouts, not held for the 100 s asked
// for; wait=0 answers at once; a write wakes a held poll.
func TestDocumentFeedWaitClamped(t *testing.T) {
	if testing.Short() {
		t.Skip("holds a request for 30 s; skipped with -short")
	}
	t.Parallel()
	d, _ := startPlanDaemon(t, planFile{Key: "p", Text: docPlanText})
	mcp := newMCPClient(d)
	path := docPathOf(t, d, mcp, "p")
	c := newDocHTTP(d, nil)
	cur := mcp.read(t, "p").Base.Revision

	start := time.Now()
	a := c.must(t, http.MethodGet, fmt.Sprintf("%s/changes?since=%d&wait=0", path, cur), nil)
	if a.Status != http.StatusNoContent || time.Since(start) > 5*time.Second {
		t.Errorf("wait=0: %s after %v", a, time.Since(start))
	}

	var wg sync.WaitGroup
	var woken docAnswer
	var wokenAfter time.Duration
	wg.Add(1)
	go func() {
		defer wg.Done()
		s := time.Now()
		woken, _ = c.do(context.Background(), http.MethodGet, fmt.Sprintf("%s/changes?since=%d&wait=20", path, cur), nil)
		wokenAfter = time.Since(s)
	}()
	start = time.Now()
	a = c.must(t, http.MethodGet, fmt.Sprintf("%s/changes?since=%d&wait=100", path, cur), nil)
	held := time.Since(start)
	if a.Status != http.StatusNoContent {
		t.Fatalf("a held poll: %s after %v", a, held)
	}
	if held < 29*time.Second || held > 45*time.Second {
		t.Errorf("wait=100 was held %v; the clamp is 30 s", held)
	}
	wg.Wait()
	// The second poll (wait 20 s) was woken by nobody: 204 after about 20 s.
	if woken.Status != http.StatusNoContent || wokenAfter < 19*time.Second {
		t.Errorf("wait=20: %s after %v", woken, wokenAfter)
	}

	// A write wakes a held poll well before its wait ends.
	done := c.parkedPoll(path, cur)
	start = time.Now()
	mcp.ok(t, "werkbaum_set_status", writeArgs("p", mcp.read(t, "p").Base, "wake-1", map[string]any{"id": "a", "status": "done"}), nil)
	select {
	case a := <-done:
		var feed docFeed
		a.decode(t, &feed)
		if a.Status != http.StatusOK || feed.CurrentVersion != cur+1 || len(feed.Events) != 1 || feed.FromVersion == nil {
			t.Errorf("the woken poll: %s", a)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("a write did not wake the held poll")
	}
	if el := time.Since(start); el > 10*time.Second {
		t.Errorf("the poll was woken %v after the write", el)
	}
}

// TestDocumentEditorsAndAgentsRace: 4 editors PATCHing the document and 4 MCP agents
// setting statuses on one plan at once (8 writers) lose nothing and double nothing: every
// editor line is there once, every agent's last status holds, and the version count is
// exactly the number of accepted writes. A long-polling feed client sees every version
// exactly once, attributed to its writer, and its shadow copy — built only from the
// feed's ops and content — ends equal to the file; the history attributes every entry.
func TestDocumentEditorsAndAgentsRace(t *testing.T) {
	t.Parallel()
	const writers, writes = 4, 12
	var text strings.Builder
	text.WriteString("[ ] #root: Wurzel (L)\n")
	for i := range writers {
		fmt.Fprintf(&text, "  - [ ] #g%d: Agent %d (S) @jörg\n", i, i)
	}
	d, paths := startPlanDaemon(t, planFile{Key: "p", Text: text.String()})
	setup := newMCPClient(d)
	path := docPathOf(t, d, setup, "p")
	c := newDocHTTP(d, nil)
	start := setup.read(t, "p").Base.Revision

	// The feed client: long polls from the start version until told to stop and caught up.
	type seen struct {
		event docEvent
		count int
	}
	feedSeen := map[uint64]*seen{}
	var feedErr error
	feedShadow, feedVersion := text.String(), start
	stop := make(chan uint64, 1)
	feedDone := make(chan struct{})
	go func() {
		defer close(feedDone)
		final := uint64(0)
		for {
			select {
			case final = <-stop:
			default:
			}
			if final != 0 && feedVersion >= final {
				return
			}
			a, err := c.do(context.Background(), http.MethodGet, fmt.Sprintf("%s/changes?since=%d&wait=5", path, feedVersion), nil)
			if err != nil {
				feedErr = err
				return
			}
			if a.Status == http.StatusNoContent {
				continue
			}
			var f docFeed
			if a.Status != http.StatusOK || json2(a, &f) != nil {
				feedErr = fmt.Errorf("feed: %s", a)
				return
			}
			if f.CurrentVersion <= feedVersion {
				continue // not newer: skip, as the protocol says
			}
			switch {
			case f.FromVersion != nil && *f.FromVersion == feedVersion:
				next, ok := docApply(feedShadow, f.Ops)
				if !ok {
					feedErr = fmt.Errorf("feed ops do not apply to version %d: %s", feedVersion, a)
					return
				}
				feedShadow = next
			case f.FromVersion == nil && f.Content != nil:
				feedShadow = *f.Content
			default:
				feedErr = fmt.Errorf("feed from %d answered %s", feedVersion, a)
				return
			}
			for _, e := range f.Events {
				if feedSeen[e.Version] == nil {
					feedSeen[e.Version] = &seen{event: e}
				}
				feedSeen[e.Version].count++
			}
			feedVersion = f.CurrentVersion
		}
	}()

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var wg sync.WaitGroup
	var mu sync.Mutex
	accepted, rebased := 0, 0
	errs := make(chan error, 2*writers)
	lastStatus := make([]string, writers)
	for i := range writers {
		// Editor i appends its lines at the end: inserts at one point never conflict, so
		// every stale base is rebased.
		wg.Add(2)
		go func() {
			defer wg.Done()
			ed := newDocEditor(c, path, fmt.Sprintf("editor-%d", i), fmt.Sprintf("Editorin %d", i))
			for k := 0; k < writes; k++ {
				if err := ed.load(ctx); err != nil {
					errs <- err
					return
				}
				lines := strings.Split(ed.shadow, "\n")
				line := fmt.Sprintf("  - [ ] #e%d_%d: Zeile %d.%d von Müller (XS)", i, k, i, k)
				a, err := ed.patch(ctx, []docOp{{Op: "insert", Index: len(lines) - 1, Lines: []string{line}}}, k%3 == 0)
				switch {
				case err != nil:
					errs <- err
					return
				case a.Status == http.StatusOK:
					mu.Lock()
					accepted++
					if ops, _ := a.Map["opsSinceBase"].([]any); len(ops) > 0 {
						rebased++
					}
					mu.Unlock()
				case a.Status == http.StatusUnprocessableEntity:
					k-- // the base was compacted meanwhile: reload and redo
				default:
					errs <- fmt.Errorf("editor %d write %d: %s", i, k, a)
					return
				}
			}
		}()
		// Agent i flips its own node between progress and done; a conflict (another writer
		// got in between) is redone on a fresh read.
		go func() {
			defer wg.Done()
			agent := newMCPClient(d)
			agent.headers = map[string]string{"X-Talk-Agent": fmt.Sprintf("Agent Jörg %d", i)}
			statuses := []string{"progress", "done"}
			attempt := 0
			for k := 0; k < writes; k++ {
				attempt++ // a redo on a new base is a new request
				var base planBase
				var r readAnswer
				ra, err := agent.call(ctx, "werkbaum_read", map[string]any{"plan": "p"})
				if err == nil {
					err = ra.decode(&r)
				}
				if err != nil {
					errs <- err
					return
				}
				base = r.Base
				a, err := agent.call(ctx, "werkbaum_set_status", writeArgs("p", base, fmt.Sprintf("race-%d-%d", i, attempt),
					map[string]any{"id": fmt.Sprintf("g%d", i), "status": statuses[k%2]}))
				if err != nil {
					errs <- err
					return
				}
				if a.IsError {
					if strings.Contains(string(a.Structured), `"conflict"`) {
						k--
						continue
					}
					errs <- fmt.Errorf("agent %d write %d: %s %s", i, k, a.Text, a.Structured)
					return
				}
				var w writeAnswer
				if err := a.decode(&w); err != nil || !w.Changed {
					errs <- fmt.Errorf("agent %d write %d changed nothing: %v %s", i, k, err, a.Structured)
					return
				}
				mu.Lock()
				accepted++
				lastStatus[i] = statuses[k%2]
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if t.Failed() {
		stop <- 1
		<-feedDone
		return
	}
	final := setup.read(t, "p")
	stop <- final.Base.Revision
	select {
	case <-feedDone:
	case <-time.After(30 * time.Second):
		t.Fatal("the feed client did not catch up")
	}
	if feedErr != nil {
		t.Fatal(feedErr)
	}

	t.Logf("%d writes accepted, %d editor PATCHes rebased over foreign ops", accepted, rebased)
	// Nothing lost, nothing doubled.
	if got := final.Base.Revision - start; got != uint64(accepted) {
		t.Errorf("%d writes were accepted but the version went from %d to %d", accepted, start, final.Base.Revision)
	}
	file := string(readFile(t, paths["p"]))
	for i := range writers {
		for k := range writes {
			if n := strings.Count(file, fmt.Sprintf("#e%d_%d:", i, k)); n != 1 {
				t.Errorf("editor %d's line %d is in the file %d times", i, k, n)
			}
		}
		box := map[string]string{"progress": "[~]", "done": "[x]"}[lastStatus[i]]
		if !strings.Contains(file, fmt.Sprintf("  - %s #g%d: Agent %d", box, i, i)) {
			t.Errorf("agent %d's last status %s is lost", i, lastStatus[i])
		}
	}

	// The feed: every version exactly once, attributed; its shadow is the file.
	if feedShadow != file {
		t.Errorf("the feed client's shadow copy differs from the file:\n%s\n---\n%s", feedShadow, file)
	}
	for v := start + 1; v <= final.Base.Revision; v++ {
		s := feedSeen[v]
		switch {
		case s == nil:
			t.Errorf("the feed never delivered version %d", v)
		case s.count != 1:
			t.Errorf("the feed delivered version %d %d times", v, s.count)
		case strings.HasPrefix(s.event.ClientID, "editor-"):
			if s.event.DisplayName != "Editorin "+strings.TrimPrefix(s.event.ClientID, "editor-") {
				t.Errorf("version %d: %+v", v, s.event)
			}
		case strings.HasPrefix(s.event.ClientID, "mcp-"):
			if !strings.HasPrefix(s.event.DisplayName, "Agent Jörg ") {
				t.Errorf("version %d by an agent without its name: %+v", v, s.event)
			}
		default:
			t.Errorf("version %d is not attributed to a writer: %+v", v, s.event)
		}
	}
	if len(feedSeen) != int(final.Base.Revision-start) {
		t.Errorf("the feed delivered %d versions, %d were made", len(feedSeen), final.Base.Revision-start)
	}

	// The history: every entry attributed, oldest first, the newest state last.
	var hist []struct {
		Version     uint64 `json:"version"`
		Content     string `json:"content"`
		ChangeType  string `json:"changeType"`
		ClientID    string `json:"clientId"`
		DisplayName string `json:"displayName"`
	}
	c.must(t, http.MethodGet, path+"/history", nil).decode(t, &hist)
	if len(hist) == 0 || hist[len(hist)-1].Version != final.Base.Revision || hist[len(hist)-1].Content != final.Text {
		t.Fatalf("history does not end with the newest state: %d entries", len(hist))
	}
	agents := 0
	for i, h := range hist {
		if i > 0 && h.Version <= hist[i-1].Version {
			t.Errorf("history not oldest first at %d: %d after %d", i, h.Version, hist[i-1].Version)
		}
		if h.Version > start && (h.ClientID == "" || h.DisplayName == "") {
			t.Errorf("history entry %d is not attributed: %+v", h.Version, h)
		}
		if strings.HasPrefix(h.DisplayName, "Agent Jörg") {
			agents++
		}
	}
	if agents == 0 {
		t.Errorf("no agent write in the history: %+v", hist)
	}
}

func json2(a docAnswer, v any) error {
	if a.Status != http.StatusOK {
		return fmt.Errorf("HTTP %d", a.Status)
	}
	return json.Unmarshal(a.Raw, v)
}

// TestDocumentSharedModeGrants: in shared mode the document doors need a token; reading
// needs the plan's read grant (a document the client may not read does not exist for it),
// PATCH the write grant; every refusal is logged.
func TestDocumentSharedModeGrants(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	planPath := dir + "/p.werkbaum"
	if err := os.WriteFile(planPath, []byte(sharedPlan), 0o644); err != nil {
		t.Fatal(err)
	}
	d := startDaemon(t, daemonOptions{Config: sharedConfig(planPath), Env: sharedEnv()})
	writer := newMCPClient(d)
	writer.headers = map[string]string{"Authorization": "Bearer " + sharedTokens["writer"]}
	path := docPathOf(t, d, writer, "p")
	bearer := func(who string) map[string]string {
		return map[string]string{"Authorization": "Bearer " + sharedTokens[who]}
	}
	anon := newDocHTTP(d, nil)
	anon.must(t, http.MethodGet, path, nil).problem(t, http.StatusUnauthorized, "Bearer")
	anon.must(t, http.MethodGet, "/api/v1/info", nil).problem(t, http.StatusUnauthorized, "")

	reader := newDocHTTP(d, bearer("reader"))
	var doc docDocument
	a := reader.must(t, http.MethodGet, path, nil)
	if a.Status != http.StatusOK {
		t.Fatalf("reader GET: %s", a)
	}
	a.decode(t, &doc)
	for _, p := range []string{path + "/history", path + "/changes?since=0&wait=0", "/api/v1/info"} {
		if a := reader.must(t, http.MethodGet, p, nil); a.Status != http.StatusOK {
			t.Errorf("reader GET %s: %s", p, a)
		}
	}
	body := docPatch{BaseVersion: doc.Version, Checksum: docChecksum(doc.Content), ClientID: "r", Seq: 1,
		Ops: []docOp{{Op: "insert", Index: 0, Lines: []string{"# reader"}}}}
	reader.must(t, http.MethodPatch, path+"/content", body).problem(t, http.StatusForbidden, "no write grant")
	reader.must(t, http.MethodPatch, path+"/title", map[string]any{"title": "x", "expectedVersion": doc.Version}).problem(t, http.StatusForbidden, "no write grant")
	reader.must(t, http.MethodPost, path+"/restore", map[string]any{"version": doc.Version}).problem(t, http.StatusForbidden, "no write grant")

	// The speaker has no grant on the plan: its document does not exist for it.
	speaker := newDocHTTP(d, bearer("speaker"))
	speaker.must(t, http.MethodGet, path, nil).problem(t, http.StatusNotFound, "no document")
	speaker.must(t, http.MethodPatch, path+"/content", body).problem(t, http.StatusNotFound, "no document")

	w := newDocHTTP(d, bearer("writer"))
	body.ClientID = "w"
	if a := w.must(t, http.MethodPatch, path+"/content", body); a.Status != http.StatusOK {
		t.Fatalf("writer PATCH: %s", a)
	}
	if got := string(readFile(t, planPath)); got != "# reader\n"+sharedPlan {
		t.Errorf("after the writer's PATCH the file is\n%s", got)
	}
	for _, tok := range sharedTokens {
		if strings.Contains(d.logs(), tok) {
			t.Fatal("a token reached the log")
		}
	}
	if n := strings.Count(d.logs(), `msg="request refused" door=/api/v1/documents/`); n < 5 {
		t.Errorf("%d refusals of the document doors logged, want at least 5:\n%s", n, d.logs())
	}
}

// TestDocumentCORS: the editor's origin (listed in allowed_origins) gets a preflight that
// allows PATCH with Content-Type and Authorization and CORS headers on answers and
// refusals; an unlisted origin gets neither and its requests are refused.
func TestDocumentCORS(t *testing.T) {
	t.Parallel()
	const editor = "https://editor.werkbaum.example"
	dir := t.TempDir()
	p := dir + "/p.werkbaum"
	if err := os.WriteFile(p, []byte(docPlanText), 0o644); err != nil {
		t.Fatal(err)
	}
	d := startDaemon(t, daemonOptions{Config: plansConfig(map[string]string{"p": p}), Env: map[string]string{"TALK_ALLOWED_ORIGINS": editor}})
	path := docPathOf(t, d, newMCPClient(d), "p")

	pre := newDocHTTP(d, map[string]string{"Origin": editor, "Access-Control-Request-Method": "PATCH",
		"Access-Control-Request-Headers": "content-type,authorization"})
	a := pre.must(t, http.MethodOptions, path+"/content", nil)
	h := a.Header
	if a.Status != http.StatusNoContent || h.Get("Access-Control-Allow-Origin") != editor ||
		!strings.Contains(h.Get("Access-Control-Allow-Methods"), "PATCH") || !strings.Contains(h.Get("Access-Control-Allow-Methods"), "GET") ||
		!strings.Contains(h.Get("Access-Control-Allow-Headers"), "Content-Type") || !strings.Contains(h.Get("Access-Control-Allow-Headers"), "Authorization") {
		t.Errorf("preflight from the editor: %s %v", a, h)
	}
	from := newDocHTTP(d, map[string]string{"Origin": editor})
	a = from.must(t, http.MethodGet, path, nil)
	if a.Status != http.StatusOK || a.Header.Get("Access-Control-Allow-Origin") != editor || !strings.Contains(a.Header.Get("Vary"), "Origin") {
		t.Errorf("GET from the editor: %s %v", a, a.Header)
	}
	a = from.must(t, http.MethodPatch, path+"/content", `{"ops":[]}`)
	if a.Status != http.StatusBadRequest || a.Header.Get("Access-Control-Allow-Origin") != editor {
		t.Errorf("a refusal for the editor must carry CORS headers (the page reads the problem): %s %v", a, a.Header)
	}

	const evil = "https://evil.example"
	a = newDocHTTP(d, map[string]string{"Origin": evil, "Access-Control-Request-Method": "PATCH"}).must(t, http.MethodOptions, path+"/content", nil)
	if a.Header.Get("Access-Control-Allow-Origin") != "" || a.Header.Get("Access-Control-Allow-Methods") != "" {
		t.Errorf("preflight from an unlisted origin: %v", a.Header)
	}
	a = newDocHTTP(d, map[string]string{"Origin": evil}).must(t, http.MethodGet, path, nil)
	a.problem(t, http.StatusForbidden, "allowed_origins")
	if a.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("a refused foreign origin got CORS headers: %v", a.Header)
	}
}

// TestDocumentWholePlanPatch: a PATCH that replaces a whole plan of nearly the engine's
// 2 MiB input limit fits the door's body limit and is applied; a PATCH whose result
// would pass that limit is a 422, a body beyond the door's limit a 413 — nothing written.
func TestDocumentWholePlanPatch(t *testing.T) {
	t.Parallel()
	d, paths := startPlanDaemon(t, planFile{Key: "p", Text: docPlanText})
	path := docPathOf(t, d, newMCPClient(d), "p")
	c := newDocHTTP(d, nil)
	ctx := context.Background()
	ed := newDocEditor(c, path, "bulk", "Bulk")
	if err := ed.load(ctx); err != nil {
		t.Fatal(err)
	}
	lines := func(total int) []string {
		var out []string
		out = append(out, "[ ] #root: Wurzel (L)")
		for i, n := 0, 22; n < total; i++ {
			l := fmt.Sprintf("  - [ ] #n%d: Knoten %d für @jörg und @Müller \"\\ (XS)", i, i)
			out = append(out, l)
			n += len(l) + 1
		}
		return out
	}
	big := lines(2<<20 - 64<<10) // just under 2 MiB of text
	a, err := ed.patch(ctx, []docOp{{Op: "replace", Index: 0, Count: 4, Lines: big}}, true)
	if err != nil || a.Status != http.StatusOK {
		t.Fatalf("PATCH of a whole %d-line plan: %v %s", len(big), err, truncateForLog(a.String()))
	}
	want := strings.Join(big, "\n") + "\n"
	if got := readFile(t, paths["p"]); string(got) != want {
		t.Fatalf("the file after the whole-plan PATCH has %d bytes, want %d", len(got), len(want))
	}
	if err := ed.load(ctx); err != nil {
		t.Fatal(err)
	}

	// A result beyond the plan limit (the engine's 2 MiB): refused naming the limit,
	// nothing written — the plan would be unreadable afterwards.
	more := lines(256 << 10)
	a, err = ed.patch(ctx, []docOp{{Op: "insert", Index: len(big), Lines: more[1:]}}, true)
	if err != nil {
		t.Fatal(err)
	}
	a.problem(t, http.StatusUnprocessableEntity, "plan limit")
	if got := readFile(t, paths["p"]); string(got) != want {
		t.Fatalf("a PATCH beyond the plan limit was written (%d bytes)", len(got))
	}
	// Beyond the door's limit: 413 before anything is decoded.
	huge := `{"ops":[{"op":"insert","index":0,"lines":["` + strings.Repeat("x", 13<<20) + `"]}]}`
	c.must(t, http.MethodPatch, path+"/content", huge).problem(t, http.StatusRequestEntityTooLarge, "limit")
	if got := readFile(t, paths["p"]); string(got) != want {
		t.Fatal("a refused PATCH changed the file")
	}
}

func truncateForLog(s string) string {
	if len(s) > 600 {
		return s[:600] + "…"
	}
	return s
}

// TestDocumentFeedEndsAtShutdown: held long polls do not hold up a graceful stop: at
// SIGTERM they are answered 204 (nothing new; the editor polls again) and talkd exits
// cleanly at once instead of after the polls' 30 s.
func TestDocumentFeedEndsAtShutdown(t *testing.T) {
	t.Parallel()
	d, _ := startPlanDaemon(t, planFile{Key: "p", Text: docPlanText})
	mcp := newMCPClient(d)
	path := docPathOf(t, d, mcp, "p")
	cur := mcp.read(t, "p").Base.Revision
	c := newDocHTTP(d, nil)
	answers := make(chan docAnswer, 3)
	for range 3 {
		go func() {
			a, err := c.do(context.Background(), http.MethodGet, fmt.Sprintf("%s/changes?since=%d&wait=30", path, cur), nil)
			if err != nil {
				a.Status = -1
			}
			answers <- a
		}()
	}
	time.Sleep(time.Second)
	start := time.Now()
	if code := d.terminate(t); code != 0 {
		t.Errorf("talkd exited %d", code)
	}
	if el := time.Since(start); el > 10*time.Second {
		t.Errorf("the stop took %v with polls held", el)
	}
	for range 3 {
		if a := <-answers; a.Status != http.StatusNoContent {
			t.Errorf("a poll held at shutdown: %s", a)
		}
	}
}

// TestDocumentDeletedFile: a plan file deleted in its folder makes its document deleted,
// as the protocol has it: a parked long poll gets the DELETED event, GET and PATCH answer
// 404 (code "deleted"), the feed and the history still answer, an agent's read names the
// missing file; the file's return is a RESTORED version that the feed brings as a diff,
// and an agent's write on its old base is a conflict.
func TestDocumentDeletedFile(t *testing.T) {
	t.Parallel()
	d, paths := startPlanDaemon(t, planFile{Key: "p", Text: docPlanText})
	mcp := newMCPClient(d)
	path := docPathOf(t, d, mcp, "p")
	c := newDocHTTP(d, nil)
	base := mcp.read(t, "p").Base
	cur := base.Revision

	polled := c.parkedPoll(path, cur)
	if err := os.Remove(paths["p"]); err != nil {
		t.Fatal(err)
	}
	c.must(t, http.MethodGet, path, nil).problem(t, http.StatusNotFound, "the document is deleted")
	var feed docFeed
	select {
	case a := <-polled:
		if a.Status != http.StatusOK {
			t.Fatalf("the parked poll after the deletion: %s", a)
		}
		a.decode(t, &feed)
	case <-time.After(10 * time.Second):
		t.Fatal("the parked poll was not woken by the deletion")
	}
	if feed.CurrentVersion != cur+1 || len(feed.Events) != 1 || feed.Events[0].ChangeType != "DELETED" || len(feed.Ops) != 0 {
		t.Fatalf("feed of the deletion: %+v", feed)
	}
	patch := map[string]any{"baseVersion": cur, "checksum": "sha256:" + strings.Repeat("0", 64), "clientId": "ed-1", "seq": 1,
		"ops": []map[string]any{{"op": "replace", "index": 1, "count": 1, "lines": []string{"  - [x] #a: Alpha (S) @jörg"}}}}
	a := c.must(t, http.MethodPatch, path+"/content", patch)
	a.problem(t, http.StatusNotFound, "the document is deleted")
	if a.Map["code"] != "deleted" {
		t.Errorf("problem code of a deleted document: %v", a.Map["code"])
	}
	if a := c.must(t, http.MethodGet, fmt.Sprintf("%s/changes?since=%d&wait=0", path, cur+1), nil); a.Status != http.StatusNoContent {
		t.Errorf("the feed after the deletion, nothing new: %s", a)
	}
	var hist []map[string]any
	c.must(t, http.MethodGet, path+"/history", nil).decode(t, &hist)
	if len(hist) == 0 || hist[len(hist)-1]["changeType"] != "DELETED" || hist[len(hist)-1]["content"] != docPlanText {
		t.Fatalf("history of the deleted document: %v", hist)
	}
	if r := mcp.must(t, "werkbaum_read", map[string]any{"plan": "p"}); !r.IsError || !strings.Contains(r.Text, "missing") {
		t.Errorf("an agent's read of the deleted plan: %+v", r)
	}
	if logs := d.logs(); !strings.Contains(logs, "reads as deleted") {
		t.Errorf("no log line of the deletion:\n%s", logs)
	}

	back := strings.Replace(docPlanText, "[ ] #c", "[x] #c", 1)
	if err := os.WriteFile(paths["p"], []byte(back), 0o644); err != nil {
		t.Fatal(err)
	}
	c.must(t, http.MethodGet, fmt.Sprintf("%s/changes?since=%d&wait=0", path, cur+1), nil).decode(t, &feed)
	if feed.CurrentVersion != cur+2 || len(feed.Events) != 1 || feed.Events[0].ChangeType != "RESTORED" ||
		feed.FromVersion == nil || *feed.FromVersion != cur+1 || len(feed.Ops) != 1 || feed.Ops[0].Lines[0] != "  - [x] #c: Gamma (XS)" {
		t.Fatalf("feed of the file's return: %+v", feed)
	}
	w := mcp.must(t, "werkbaum_set_status", writeArgs("p", base, "after-restore", map[string]any{"id": "a", "status": "done"}))
	if !w.IsError || !strings.Contains(string(w.Structured), `"error":"conflict"`) {
		t.Errorf("a write on the base before the deletion: %+v", w)
	}
}
