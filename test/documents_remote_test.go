package test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestRemoteDocumentWriters is the proof of issue 18 part 2 at the process boundary: talkd
// A serves plan P (a file) as a live document; talkd B has P as a remote plan ([[plans]]
// url = A's document URL). Eight writers at once, each owning the line #c<i> and
// appending " j" to it for each of its logical writes j:
//   - writers 0–2 are MCP agents on A (the file plan: a conflict on any stale base),
//   - writers 3–5 are MCP agents on B (GET from A, verb, PATCH of the line diff to A),
//   - writers 6–7 are plain HTTP clients PATCHing A's document doors (server-side rebase).
//
// Afterwards every line reads " 0 1 … N-1" (a lost write would miss a number, a doubled
// one repeat it), B reads what A's file holds, and a long-polling feed follower saw every
// version exactly once, each attributed to the writer that made it (its displayName and
// clientId): the MCP host's name for agents on A and B, the editors' own.
func TestRemoteDocumentWriters(t *testing.T) {
	const clients = 8
	// 100 writes each: about 20 s of writing (28 s in all) on the busy 2-core machine;
	// -short keeps the proof's shape (every kind of writer racing every other) with 20.
	writes := 100
	if testing.Short() {
		writes = 20
	}
	var b strings.Builder
	b.WriteString("%% shared plan for @jörg and @Müller\n- [~] #top: Shared plan\n")
	for i := range clients {
		fmt.Fprintf(&b, "  - [ ] #c%d: Client %d wrote\n", i, i)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "p.werkbaum")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	a := startDaemon(t, daemonOptions{Config: plansConfig(map[string]string{"p": path})})
	docURL := a.URL + docPathOf(t, a, newMCPClient(a), "p")

	b2 := startDaemon(t, daemonOptions{Config: fmt.Sprintf("version = 1\n[[plans]]\nkey = \"p\"\nurl = %q\nlang = \"en\"\n", docURL)})
	// B reads A's document as its plan.
	cb := newMCPClient(b2)
	if got := cb.read(t, "p"); got.Text != b.String() || got.Base.Revision != 1 || got.Base.Checksum != sha([]byte(b.String())) {
		t.Fatalf("B's read of the remote plan: %+v", got)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 240*time.Second)
	defer cancel()
	follower := startFeedFollower(ctx, docURL)
	started := time.Now()
	results := make([][]writeAttempt, clients)
	errs := make(chan error, clients)
	var wg sync.WaitGroup
	for i := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var err error
			switch {
			case i < 3:
				err = appendWriter(ctx, a, "p", i, writes, &results[i])
			case i < 6:
				err = appendWriter(ctx, b2, "p", i, writes, &results[i])
			default:
				err = appendPatcher(ctx, docURL, i, writes)
			}
			if err != nil {
				errs <- err
				cancel()
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	t.Logf("%d writers × %d writes through A, B and PATCH took %v", clients, writes, time.Since(started).Round(time.Millisecond))

	// Nothing lost, nothing doubled: every line has each of its writes once, in order.
	text := string(readFile(t, path))
	checkAppendedLines(t, text, clients, writes)
	final := uint64(1 + clients*writes)
	if got := cb.read(t, "p"); got.Text != text || got.Base.Revision != final {
		t.Errorf("B reads revision %d (want %d), same text as A's file: %t", got.Base.Revision, final, got.Text == text)
	}
	// The agents on B were told the versions A made.
	for i := 3; i < 6; i++ {
		for _, at := range results[i] {
			if at.state == "applied" && (at.rev < 2 || at.rev > final) {
				t.Errorf("%s: answered revision %d, outside 2…%d", at.rid, at.rev, final)
			}
		}
	}

	// The feed delivered every version exactly once, attributed to its writer.
	events := follower.wait(t, final)
	seen := map[uint64]int{}
	perName := map[string]int{}
	clientOf := map[string]map[string]bool{}
	for _, ev := range events {
		seen[ev.Version]++
		perName[ev.DisplayName]++
		if clientOf[ev.DisplayName] == nil {
			clientOf[ev.DisplayName] = map[string]bool{}
		}
		clientOf[ev.DisplayName][ev.ClientID] = true
	}
	for v := uint64(2); v <= final; v++ {
		if seen[v] != 1 {
			t.Errorf("version %d came %d times in the feed", v, seen[v])
		}
	}
	if len(seen) != int(final-1) {
		t.Errorf("the feed delivered %d versions, want %d", len(seen), final-1)
	}
	agentIDs := map[string]string{} // daemon → its one agent clientId
	for i := range clients {
		name := fmt.Sprintf("writer-%d", i)
		if i >= 6 {
			name = fmt.Sprintf("Editor %d", i)
		}
		if perName[name] != writes {
			t.Errorf("%s: %d versions attributed, want %d (all: %v)", name, perName[name], writes, perName)
		}
		ids := sortedKeys(clientOf[name])
		if len(ids) != 1 {
			t.Errorf("%s wrote under clientIds %v, want one", name, ids)
			continue
		}
		switch {
		case i >= 6:
			if ids[0] != fmt.Sprintf("editor-%d", i) {
				t.Errorf("%s wrote as %q", name, ids[0])
			}
		default:
			daemon := "A"
			if i >= 3 {
				daemon = "B"
			}
			if !strings.HasPrefix(ids[0], "mcp-") {
				t.Errorf("%s (an agent on %s) wrote as %q, want mcp-…", name, daemon, ids[0])
			}
			if prev, ok := agentIDs[daemon]; ok && prev != ids[0] {
				t.Errorf("agents on %s wrote as %q and %q, want one clientId per process", daemon, prev, ids[0])
			}
			agentIDs[daemon] = ids[0]
		}
	}
	if agentIDs["A"] != "" && agentIDs["A"] == agentIDs["B"] {
		t.Errorf("A and B share the clientId %q", agentIDs["A"])
	}

	// The history's entries (the newest milestones) name who made each version.
	status, _, raw := a.request(t, "GET", strings.TrimPrefix(docURL, a.URL)+"/history", "", nil)
	if status != 200 {
		t.Fatalf("history: %d %s", status, raw)
	}
	var hist []struct {
		Version     uint64 `json:"version"`
		ClientID    string `json:"clientId"`
		DisplayName string `json:"displayName"`
		Content     string `json:"content"`
	}
	if err := json.Unmarshal(raw, &hist); err != nil || len(hist) == 0 {
		t.Fatalf("history: %v %s", err, raw)
	}
	byVersion := map[uint64]feedEvent{}
	for _, ev := range events {
		byVersion[ev.Version] = ev
	}
	for _, h := range hist {
		if h.Version == 1 {
			continue
		}
		ev := byVersion[h.Version]
		if h.DisplayName == "" || h.DisplayName != ev.DisplayName || h.ClientID != ev.ClientID {
			t.Errorf("history version %d by %q/%q, the feed said %q/%q", h.Version, h.DisplayName, h.ClientID, ev.DisplayName, ev.ClientID)
		}
	}
	if last := hist[len(hist)-1]; last.Version != final || last.Content != text {
		t.Errorf("the history ends at version %d (want %d), with the file's text: %t", last.Version, final, last.Content == text)
	}
}

// appendPatcher is writer i as a plain HTTP client of the document protocol: GET, then
// PATCH …/content replacing its line with the line plus " j", against the version it read
// (the server rebases it over other writers' lines). A 409 or 422 means: read again.
func appendPatcher(ctx context.Context, docURL string, i, writes int) error {
	hc := &http.Client{Timeout: 30 * time.Second}
	clientID, name := fmt.Sprintf("editor-%d", i), fmt.Sprintf("Editor %d", i)
	prefix := fmt.Sprintf("  - [ ] #c%d: Client %d wrote", i, i)
	seq := int64(0)
	for j := range writes {
		for try := 0; ; try++ {
			if try > 200 {
				return fmt.Errorf("%s write %d: still refused after %d tries", clientID, j, try)
			}
			var doc struct {
				Content string `json:"content"`
				Version uint64 `json:"version"`
			}
			if err := getJSON(ctx, hc, docURL, &doc); err != nil {
				return fmt.Errorf("%s: %w", clientID, err)
			}
			index, line := -1, ""
			for k, l := range strings.Split(doc.Content, "\n") {
				if strings.HasPrefix(l, prefix) {
					index, line = k, l
				}
			}
			if index < 0 {
				return fmt.Errorf("%s: my line is gone:\n%s", clientID, doc.Content)
			}
			seq++
			body, _ := json.Marshal(map[string]any{"baseVersion": doc.Version, "checksum": docChecksum(doc.Content),
				"clientId": clientID, "seq": seq, "displayName": name, "milestone": true,
				"ops": []map[string]any{{"op": "replace", "index": index, "count": 1, "lines": []string{fmt.Sprintf("%s %d", line, j)}}}})
			req, err := http.NewRequestWithContext(ctx, http.MethodPatch, docURL+"/content", bytes.NewReader(body))
			if err != nil {
				return err
			}
			req.Header.Set("Content-Type", "application/json")
			resp, err := hc.Do(req)
			if err != nil {
				return fmt.Errorf("%s: PATCH: %w", clientID, err)
			}
			raw, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
			if resp.StatusCode != http.StatusConflict && resp.StatusCode != http.StatusUnprocessableEntity {
				return fmt.Errorf("%s: PATCH answered %d: %s", clientID, resp.StatusCode, raw)
			}
		}
	}
	return nil
}

func getJSON(ctx context.Context, hc *http.Client, url string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %d %s", url, resp.StatusCode, raw)
	}
	return json.Unmarshal(raw, v)
}

// feedEvent is one ChangeEvent of the feed.
type feedEvent struct {
	Version     uint64 `json:"version"`
	ChangeType  string `json:"changeType"`
	ClientID    string `json:"clientId"`
	DisplayName string `json:"displayName"`
}

// feedFollower long-polls GET …/changes from version 1 on, as the editor does, and keeps
// every event it is given.
type feedFollower struct {
	mu      sync.Mutex
	events  []feedEvent
	current uint64
	err     error
	done    chan struct{}
}

func startFeedFollower(ctx context.Context, docURL string) *feedFollower {
	f := &feedFollower{current: 1, done: make(chan struct{})}
	go func() {
		defer close(f.done)
		hc := &http.Client{Timeout: 60 * time.Second}
		for ctx.Err() == nil {
			f.mu.Lock()
			since := f.current
			f.mu.Unlock()
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("%s/changes?since=%d&wait=5", docURL, since), nil)
			if err != nil {
				f.fail(err)
				return
			}
			resp, err := hc.Do(req)
			if err != nil {
				if ctx.Err() == nil {
					f.fail(err)
				}
				return
			}
			raw, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusNoContent {
				continue
			}
			var feed struct {
				FromVersion    *uint64     `json:"fromVersion"`
				CurrentVersion uint64      `json:"currentVersion"`
				Events         []feedEvent `json:"events"`
			}
			if resp.StatusCode != http.StatusOK || json.Unmarshal(raw, &feed) != nil {
				f.fail(fmt.Errorf("feed since %d: %d %s", since, resp.StatusCode, raw))
				return
			}
			if feed.CurrentVersion <= since {
				continue // not newer than what we have: skip (DOCUMENTS.md)
			}
			f.mu.Lock()
			f.events = append(f.events, feed.Events...)
			f.current = feed.CurrentVersion
			f.mu.Unlock()
		}
	}()
	return f
}

func (f *feedFollower) fail(err error) {
	f.mu.Lock()
	f.err = err
	f.mu.Unlock()
}

// wait returns the events once the follower has reached version final.
func (f *feedFollower) wait(t *testing.T, final uint64) []feedEvent {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		f.mu.Lock()
		cur, err, events := f.current, f.err, append([]feedEvent(nil), f.events...)
		f.mu.Unlock()
		if err != nil {
			t.Fatalf("feed follower: %v", err)
		}
		if cur >= final {
			return events
		}
		if time.Now().After(deadline) {
			t.Fatalf("the feed follower reached version %d, want %d", cur, final)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// TestRemotePlanTokenAndFailures: a remote plan's token (token_env) reaches the document
// server, display_name names talkd's writes there, talkd -check-config lists the plan and
// refuses a missing token variable by name, and a wrong token or a server that is gone
// give the agent a remote_failed tool error naming the server and the status (and a log
// line), never a hang.
func TestRemotePlanTokenAndFailures(t *testing.T) {
	t.Parallel()
	talkd, _ := binaries(t)
	const text = "%% remote plan of @jörg\n- [~] #top: Release\n  - [ ] #a: Login @Müller (S)\n"
	dir := t.TempDir()
	path := filepath.Join(dir, "p.werkbaum")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	token := "b-" + strings.Repeat("7", 40)
	a := startDaemon(t, daemonOptions{Env: map[string]string{"TOK_B": token}, Config: fmt.Sprintf(
		"version = 1\n[[plans]]\nkey = \"p\"\npath = %q\nlang = \"en\"\n[[clients]]\nid = \"talkd-b\"\ntoken_env = \"TOK_B\"\nwrite = [\"p\"]\n", path)})
	ca := newMCPClient(a)
	ca.headers = map[string]string{"Authorization": "Bearer " + token}
	docURL := a.URL + docPathOf(t, a, ca, "p")
	cfgB := fmt.Sprintf("version = 1\n[[plans]]\nkey = \"p\"\nurl = %q\ntoken_env = \"A_TOKEN\"\ndisplay_name = \"talkd B\"\n", docURL)

	// -check-config lists the remote plan, and refuses a token variable that is not set.
	checkConfig := func(env map[string]string) (string, int) {
		home := t.TempDir()
		cdir := filepath.Join(home, ".config", "talk")
		os.MkdirAll(cdir, 0o700)
		os.WriteFile(filepath.Join(cdir, "config.toml"), []byte(cfgB), 0o600)
		cmd := exec.Command(talkd, "--check-config")
		cmd.Env = daemonEnv(home, env)
		out, _ := cmd.CombinedOutput()
		return string(out), cmd.ProcessState.ExitCode()
	}
	if out, code := checkConfig(map[string]string{"A_TOKEN": token}); code != 0 || !strings.Contains(out, "plan p: document "+docURL) ||
		!strings.Contains(out, "$A_TOKEN") || !strings.Contains(out, `"talkd B"`) || strings.Contains(out, token) {
		t.Errorf("--check-config: %d %q", code, out)
	}
	if out, code := checkConfig(nil); code != 1 || !strings.Contains(out, "plans[0].token_env") || !strings.Contains(out, "A_TOKEN") {
		t.Errorf("--check-config without A_TOKEN: %d %q", code, out)
	}

	// With the token, B reads and writes A's document; A records the write as "talkd B".
	b := startDaemon(t, daemonOptions{Config: cfgB, Env: map[string]string{"A_TOKEN": token}})
	cb := newMCPClient(b)
	cb.headers = map[string]string{"X-Talk-Agent": "Claude Code"}
	r := cb.read(t, "p")
	if r.Text != text {
		t.Fatalf("B's read: %+v", r)
	}
	// B's plans_list names the remote document as the plan's document (B does not serve it).
	var list struct {
		Plans []struct {
			Key      string `json:"key"`
			Revision uint64 `json:"revision"`
			Document string `json:"document"`
		} `json:"plans"`
	}
	cb.ok(t, "plans_list", map[string]any{}, &list)
	if len(list.Plans) != 1 || list.Plans[0].Document != docURL || list.Plans[0].Revision != 1 {
		t.Errorf("B's plans_list: %+v", list)
	}
	if status, _, raw := b.request(t, "GET", strings.TrimPrefix(docURL, a.URL), "", nil); status != 404 {
		t.Errorf("B serves the remote document itself: %d %s", status, raw)
	}
	var w writeAnswer
	cb.ok(t, "werkbaum_set_status", writeArgs("p", r.Base, "b-1", map[string]any{"id": "a", "status": "done"}), &w)
	want := strings.Replace(text, "[ ] #a", "[x] #a", 1)
	if got := string(readFile(t, path)); got != want || !w.Changed || w.Revision != 2 || w.Base.Checksum != sha([]byte(want)) {
		t.Fatalf("B's write: %+v; A's file:\n%s", w, got)
	}
	status, _, raw := a.request(t, "GET", strings.TrimPrefix(docURL, a.URL)+"/history", "", map[string]string{"Authorization": "Bearer " + token})
	if status != 200 || !strings.Contains(string(raw), `"displayName":"talkd B"`) {
		t.Errorf("A's history: %d %s", status, raw)
	}

	// A wrong token: 401 from A, named in B's tool error and log.
	bad := startDaemon(t, daemonOptions{Config: cfgB, Env: map[string]string{"A_TOKEN": "wrong-" + strings.Repeat("x", 40)}})
	fail := newMCPClient(bad).must(t, "werkbaum_read", map[string]any{"plan": "p"})
	if !fail.IsError || fail.Map["error"] != "remote_failed" || !strings.Contains(fail.Text, "401") || !strings.Contains(fail.Text, "$A_TOKEN") || !strings.Contains(fail.Text, a.Addr) {
		t.Errorf("read with a wrong token: %s %s", fail.Text, fail.Structured)
	}
	if !strings.Contains(bad.logs(), "document plan unreadable") {
		t.Errorf("no log line for the refused read:\n%s", bad.logs())
	}

	// A is gone: B's read and write say so at once, and nothing is written anywhere.
	a.terminate(t)
	start := time.Now()
	fail = cb.must(t, "werkbaum_read", map[string]any{"plan": "p"})
	if !fail.IsError || fail.Map["error"] != "remote_failed" || !strings.Contains(fail.Text, "unreachable") || !strings.Contains(fail.Text, a.Addr) {
		t.Errorf("read of a server that is gone: %s %s", fail.Text, fail.Structured)
	}
	fail = cb.must(t, "werkbaum_set_status", writeArgs("p", w.Base, "b-2", map[string]any{"id": "top", "status": "done"}))
	if !fail.IsError || fail.Map["error"] != "remote_failed" || !strings.Contains(fail.Text, "nothing was changed") {
		t.Errorf("write to a server that is gone: %s %s", fail.Text, fail.Structured)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("the failures took %v", d)
	}
	if got := string(readFile(t, path)); got != want {
		t.Errorf("A's file changed after A stopped:\n%s", got)
	}
}
