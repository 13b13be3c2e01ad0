package test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"talkd/internal/werkbaum/gen"
)

// What the model sees (issue 30, ../shared/mcp/HOSTS.md): a host hands its model either
// the text copy or the structured content of an answer, and caps its size. These tests
// hold the answers of the plan tools to the sizes a model can use, on the example plan and
// on a generated plan at the 2 MiB input limit, and log the size table of
// docs/bench-model.md (go test ./test/ -run TestModelAnswerSizes -v -count=1).

// Targets of issue 30.
const (
	maxToolsListBytes    = 16000
	maxInspectExample    = 16000
	maxAnswerLargestPlan = 40000
	maxConflictOneLine   = 8000
)

// largestPlan is a generated plan just under the engine's 2 MiB input limit.
func largestPlan(t testing.TB) string {
	t.Helper()
	const limit = 2 << 20
	n := 44000
	for {
		text := gen.Plan(n, 1)
		if len(text) <= limit {
			return text
		}
		n -= n / 50
	}
}

// chars counts what a model is handed: characters, not bytes.
func chars(s string) int { return utf8.RuneCountInString(s) }

// sizeRow is one line of the size table.
type sizeRow struct {
	plan, answer  string
	text, struc   int
	target, notes string
}

func logSizeTable(t *testing.T, rows []sizeRow) {
	var b strings.Builder
	b.WriteString("\n| plan | answer | content text (chars) | structuredContent (chars) | ≈ tokens (larger / 4) |\n|---|---|---|---|---|\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s | %s | %d | %d | %d |\n", r.plan, r.answer, r.text, r.struc, max(r.text, r.struc)/4)
	}
	t.Log(b.String())
}

// modelPlans starts a daemon serving the example plan (key "example") and a generated plan
// at the 2 MiB input limit (key "big"), and returns the example's text.
func modelPlans(t *testing.T) (*daemon, *mcpClient, string) {
	t.Helper()
	example, err := os.ReadFile(filepath.Join(sharedDir(t), "werkbaum", "examples", "werkbaum.werkbaum"))
	if err != nil {
		t.Fatalf("the example plan: %v", err)
	}
	d, _ := startPlanDaemon(t, planFile{Key: "example", Text: string(example)}, planFile{Key: "big", Text: largestPlan(t)})
	return d, newMCPClient(d), string(example)
}

// TestModelInspectCompact: the default inspect names every node id of the example plan
// within 16,000 characters in each half (text and structured content); on the 2 MiB plan
// it stays within 40,000 and says how to get the rest, and following its hints (from,
// depth, id) gets the rest.
func TestModelInspectCompact(t *testing.T) {
	t.Parallel()
	_, c, _ := modelPlans(t)

	ins := c.ok(t, "werkbaum_inspect", map[string]any{"plan": "example"}, nil)
	if chars(ins.Text) > maxInspectExample || chars(string(ins.Structured)) > maxInspectExample {
		t.Errorf("example: default inspect is %d chars of text and %d of structured content, over %d", chars(ins.Text), chars(string(ins.Structured)), maxInspectExample)
	}
	var full struct {
		Base  planBase `json:"base"`
		Nodes []struct {
			Line int     `json:"line"`
			ID   *string `json:"id"`
		} `json:"nodes"`
	}
	c.ok(t, "werkbaum_inspect", map[string]any{"plan": "example", "detail": "full", "include": []string{"tree"}}, &full)
	if len(full.Nodes) < 200 {
		t.Fatalf("the example plan's full inspect has %d nodes", len(full.Nodes))
	}
	for _, n := range full.Nodes {
		if n.ID != nil && (!strings.Contains(ins.Text, "#"+*n.ID+" ") || !strings.Contains(string(ins.Structured), "#"+*n.ID+" ")) {
			t.Errorf("default inspect of the example does not name #%s", *n.ID)
		}
	}
	if first := firstLines(ins.Text, 1); !strings.Contains(first, full.Base.Checksum) {
		t.Errorf("the inspect text does not name the base first: %q", first)
	}

	big := c.ok(t, "werkbaum_inspect", map[string]any{"plan": "big"}, nil)
	if chars(big.Text) > maxAnswerLargestPlan || chars(string(big.Structured)) > maxAnswerLargestPlan {
		t.Errorf("big: default inspect is %d chars of text and %d of structured content, over %d", chars(big.Text), chars(string(big.Structured)), maxAnswerLargestPlan)
	}
	var reading struct {
		Compact struct {
			Nodes int      `json:"nodes"`
			Depth *int     `json:"depth"`
			Tree  []string `json:"tree"`
			More  []string `json:"more"`
		} `json:"compact"`
	}
	if err := big.decode(&reading); err != nil {
		t.Fatal(err)
	}
	r := reading.Compact
	if r.Nodes < 20000 || len(r.Tree) == 0 || len(r.More) == 0 || !strings.Contains(big.Text, "more: ") {
		t.Fatalf("big: the compact reading shows %d of %d nodes and says %q", len(r.Tree), r.Nodes, r.More)
	}
	// The hints work: from goes on after the cut, an id opens a hidden subtree.
	from := regexp.MustCompile(`call with from (\d+)`).FindStringSubmatch(strings.Join(r.More, "\n"))
	if from == nil {
		t.Fatalf("big: no from hint in %q", r.More)
	}
	next := c.ok(t, "werkbaum_inspect", map[string]any{"plan": "big", "from": atoi(t, from[1]), "include": []string{"tree"}}, nil)
	if !strings.Contains(next.Text, "\n"+from[1]+" ") {
		t.Errorf("big: from %s does not start at that line:\n%.300s", from[1], next.Text)
	}
	hidden := regexp.MustCompile(`^\d+ #(\S+) .*\(\+(\d+) below\)$`)
	for _, line := range r.Tree {
		m := hidden.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		sub := c.ok(t, "werkbaum_inspect", map[string]any{"plan": "big", "id": m[1]}, nil)
		if !strings.Contains(sub.Text, "subtree #"+m[1]+": "+strconv.Itoa(atoi(t, m[2])+1)+" nodes") {
			t.Errorf("big: the subtree of #%s (%s below) reads:\n%.300s", m[1], m[2], sub.Text)
		}
		break
	}
	if a := c.must(t, "werkbaum_inspect", map[string]any{"plan": "big", "id": "no-such-node"}); !a.IsError || !strings.Contains(a.Text, "no-such-node") {
		t.Errorf("an unknown id: %v %q", a.IsError, a.Text)
	}
}

func atoi(t testing.TB, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestModelToolsList: tools/list stays within 16,000 bytes (every request of a session
// pays for it), and the plan tools say what a person would search for.
func TestModelToolsList(t *testing.T) {
	t.Parallel()
	d, _ := startPlanDaemon(t, planFile{Key: "p", Text: "- [ ] #a: A (S)\n"})
	status, _, raw := d.request(t, http.MethodPost, "/mcp", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
		map[string]string{"MCP-Protocol-Version": "2025-11-25"})
	var list struct {
		Result struct {
			Tools []struct {
				Name        string `json:"name"`
				Description string `json:"description"`
			} `json:"tools"`
		} `json:"result"`
	}
	if err := json.Unmarshal(raw, &list); status != http.StatusOK || err != nil || len(list.Result.Tools) != 12 {
		t.Fatalf("tools/list: HTTP %d %v %.300s", status, err, raw)
	}
	t.Logf("tools/list: %d bytes", len(raw))
	if len(raw) > maxToolsListBytes {
		t.Errorf("tools/list is %d bytes, over %d", len(raw), maxToolsListBytes)
	}
	for _, tl := range list.Result.Tools {
		if tl.Name == "plans_list" || tl.Name == "werkbaum_inspect" {
			if d := strings.ToLower(tl.Description); !strings.Contains(d, "plan") || (tl.Name == "werkbaum_inspect" && !strings.Contains(d, "status")) {
				t.Errorf("%s: a search for a plan's status would not find %q", tl.Name, tl.Description)
			}
		}
	}
}

// firstLines returns the first n lines of s.
func firstLines(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	return strings.Join(lines[:min(n, len(lines))], "\n")
}

// TestModelReadPages: a read's text names the base in its first line; a read without an
// end is a page of the example plan and of the 2 MiB plan within 40,000 characters in each
// half, and following its "from" hints reassembles the plan byte for byte; a subtree read
// gives the node's lines; an explicit range is not capped.
func TestModelReadPages(t *testing.T) {
	t.Parallel()
	_, c, example := modelPlans(t)

	type page struct {
		Base  planBase `json:"base"`
		Lines int      `json:"lines"`
		From  int      `json:"from"`
		To    int      `json:"to"`
		Text  string   `json:"text"`
		More  string   `json:"more"`
	}
	for _, key := range []string{"example", "big"} {
		var whole strings.Builder
		var first page
		for from, n := 1, 0; ; n++ {
			var p page
			a := c.ok(t, "werkbaum_read", map[string]any{"plan": key, "from": from}, &p)
			if n == 0 {
				first = p
				if !strings.Contains(firstLines(a.Text, 1), p.Base.Checksum) {
					t.Errorf("%s: the read's first line does not name the base: %q", key, firstLines(a.Text, 1))
				}
			}
			if chars(a.Text) > maxAnswerLargestPlan || chars(string(a.Structured)) > maxAnswerLargestPlan {
				t.Fatalf("%s: a read page is %d chars of text and %d of structured content", key, chars(a.Text), chars(string(a.Structured)))
			}
			if !strings.Contains(a.Text, p.Text) || p.From != from {
				t.Fatalf("%s: page from %d: from %d, text copy without the lines", key, from, p.From)
			}
			whole.WriteString(p.Text)
			if p.To == p.Lines {
				break
			}
			if !strings.Contains(a.Text, fmt.Sprintf("call werkbaum_read with from %d", p.To+1)) || n > 200 {
				t.Fatalf("%s: page %d (lines %d-%d of %d) does not say how to go on: %q", key, n, p.From, p.To, p.Lines, p.More)
			}
			from = p.To + 1
		}
		var full page
		c.ok(t, "werkbaum_read", map[string]any{"plan": key, "to": first.Lines}, &full)
		if whole.String() != full.Text || full.Base != first.Base || (key == "example" && full.Text != example) {
			t.Errorf("%s: the pages do not add up to the plan (%d vs %d bytes)", key, whole.Len(), len(full.Text))
		}
	}

	var sub page
	a := c.ok(t, "werkbaum_read", map[string]any{"plan": "example", "id": "ai.mcp"}, &sub)
	if !strings.HasPrefix(strings.TrimSpace(sub.Text), "- [") || !strings.Contains(sub.Text, "#ai.mcp:") ||
		!strings.Contains(sub.Text, "#ai.mcp.kotlin:") || strings.Contains(sub.Text, "---") || !strings.Contains(a.Text, fmt.Sprintf("lines %d to %d of", sub.From, sub.To)) {
		t.Errorf("the subtree of #ai.mcp reads lines %d-%d:\n%s", sub.From, sub.To, sub.Text)
	}
	if e := c.must(t, "werkbaum_read", map[string]any{"plan": "example", "from": 5000}); !e.IsError || !strings.Contains(e.Text, "lines") {
		t.Errorf("a read past the end: %v %q", e.IsError, e.Text)
	}
}

// TestModelConflictCarriesChange: a write on a base one changed line behind gets, within
// 8,000 characters, the new base and that line (number and new content), not the whole
// text; the change can be redone on the base it names. On the 2 MiB plan too.
func TestModelConflictCarriesChange(t *testing.T) {
	t.Parallel()
	_, c, _ := modelPlans(t)
	for _, tc := range []struct{ plan, node, other string }{
		{"example", "not.ticket", "ed.path.worth"},
		{"big", "t3", "t4"},
	} {
		stale := c.read(t, tc.plan).Base
		var first writeAnswer
		w := c.ok(t, "werkbaum_set_status", writeArgs(tc.plan, stale, tc.plan+"-1", map[string]any{"id": tc.node, "status": "done"}), &first)
		// A write answer names the new base and the next step first, and carries the
		// warning delta and count, not the plan's whole warning list.
		if !strings.Contains(firstLines(w.Text, 1), first.Base.Checksum) || !strings.Contains(firstLines(w.Text, 1), "next write") ||
			w.Map["warnings"] != nil || w.Map["warningCount"] == nil || chars(w.Text) > 2000 || len(w.Structured) > 2000 {
			t.Errorf("%s: the write answer: %q %s", tc.plan, w.Text, w.Structured)
		}
		a := c.must(t, "werkbaum_set_status", writeArgs(tc.plan, stale, tc.plan+"-2", map[string]any{"id": tc.other, "status": "done"}))
		var conflict struct {
			Conflict bool     `json:"conflict"`
			Base     planBase `json:"base"`
			Changes  []struct {
				Op    string   `json:"op"`
				Index int      `json:"index"`
				Lines []string `json:"lines"`
			} `json:"changes"`
		}
		if err := a.decode(&conflict); err != nil || !a.IsError || !conflict.Conflict {
			t.Fatalf("%s: not a conflict: %v %s", tc.plan, err, a.Structured)
		}
		whole := string(a.Structured) // the failure's one text block, as a model gets it
		t.Logf("%s: conflict after one changed line: %d characters", tc.plan, chars(whole))
		if chars(whole) > maxConflictOneLine {
			t.Errorf("%s: the conflict is %d characters, over %d", tc.plan, chars(whole), maxConflictOneLine)
		}
		if conflict.Base != first.Base || !strings.Contains(a.Text, first.Base.Checksum) {
			t.Errorf("%s: the conflict names base %+v, the write made %+v: %s", tc.plan, conflict.Base, first.Base, a.Text)
		}
		if len(conflict.Changes) != 1 || conflict.Changes[0].Op != "replace" || len(conflict.Changes[0].Lines) != 1 ||
			!regexp.MustCompile(`#`+regexp.QuoteMeta(tc.node)+`\b`).MatchString(conflict.Changes[0].Lines[0]) ||
			!strings.Contains(a.Text, fmt.Sprintf("line %d is now", conflict.Changes[0].Index+1)) {
			t.Errorf("%s: the conflict does not name the changed line: %+v %s", tc.plan, conflict.Changes, a.Text)
		}
		c.ok(t, "werkbaum_set_status", writeArgs(tc.plan, conflict.Base, tc.plan+"-3", map[string]any{"id": tc.other, "status": "done"}), nil)
	}
}

// TestModelSharedModeHints: in shared mode a refused MCP request keeps its JSON-RPC id, a
// wrong token is named invalid_token in WWW-Authenticate, and the OAuth probes hosts send
// after a 401 are answered with an OAuth error whose description says how to send the
// token (each leaving a log line).
func TestModelSharedModeHints(t *testing.T) {
	t.Parallel()
	token := strings.Repeat("t", 40)
	d := startDaemon(t, daemonOptions{
		Config: "version = 1\n[[clients]]\nid = \"agent\"\ntoken_env = \"TOK_AGENT\"\nspeak = true\n",
		Env:    map[string]string{"TOK_AGENT": token},
	})
	init := `{"jsonrpc":"2.0","id":7,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"h","version":"1"}}}`
	for _, tc := range []struct {
		auth, challenge string
	}{
		{"", `Bearer realm="talkd"`},
		{"Bearer wrong", `Bearer realm="talkd", error="invalid_token", error_description="the bearer token is not valid"`},
	} {
		r := rpcPost(t, d, init, map[string]string{"Authorization": tc.auth})
		if r.status != http.StatusUnauthorized || r.header.Get("WWW-Authenticate") != tc.challenge || !strings.Contains(r.raw, `"id":7`) {
			t.Errorf("auth %q: HTTP %d, WWW-Authenticate %q: %s", tc.auth, r.status, r.header.Get("WWW-Authenticate"), r.raw)
		}
	}
	r := rpcPost(t, d, `{"jsonrpc":"2.0","id":"s-1","method":"ping"}`, map[string]string{"Origin": "http://evil.example"})
	if r.status != http.StatusForbidden || !strings.Contains(r.raw, `"id":"s-1"`) {
		t.Errorf("a foreign origin: HTTP %d %s", r.status, r.raw)
	}
	for _, p := range []struct{ method, path string }{
		{http.MethodGet, "/.well-known/oauth-protected-resource/mcp"},
		{http.MethodGet, "/.well-known/oauth-protected-resource"},
		{http.MethodGet, "/.well-known/oauth-authorization-server"},
		{http.MethodPost, "/register"},
	} {
		status, _, raw := d.request(t, p.method, p.path, `{"redirect_uris":["http://localhost:1/cb"]}`, nil)
		var o struct {
			Error       string `json:"error"`
			Description string `json:"error_description"`
		}
		if err := json.Unmarshal(raw, &o); err != nil || status < 400 || status >= 500 || o.Error == "" ||
			!strings.Contains(o.Description, "Authorization: Bearer") {
			t.Errorf("%s %s: HTTP %d %s", p.method, p.path, status, raw)
		}
	}
	if logs := d.logs(); strings.Count(logs, "an OAuth probe") != 4 {
		t.Errorf("the probes left %d log lines", strings.Count(logs, "an OAuth probe"))
	}
}

// TestModelGuideWithoutPlans: a daemon without any plan serves the guide, so the notation
// can be learnt before a plan is configured.
func TestModelGuideWithoutPlans(t *testing.T) {
	t.Parallel()
	d := startDaemon(t, daemonOptions{})
	r := rpcPost(t, d, `{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"werkbaum://guide"}}`,
		map[string]string{"MCP-Protocol-Version": "2025-11-25"})
	contents, _ := r.result(t)["contents"].([]any)
	if len(contents) != 1 || !strings.Contains(fmt.Sprint(contents[0]), "werkbaum_inspect") {
		t.Fatalf("the guide on a daemon without plans: %s", r.raw)
	}
}

// TestModelAnswerSizes measures what a model is handed per tool with default arguments,
// on the example plan and on the 2 MiB plan, and logs the table of docs/bench-model.md
// (go test ./test/ -run TestModelAnswerSizes -v -count=1). Every answer on either plan
// stays within 40,000 characters in each half. TALK_MEASURE_ONLY=1 only measures (to
// measure an older tree with the same file).
func TestModelAnswerSizes(t *testing.T) {
	d, c, _ := modelPlans(t)
	assert := os.Getenv("TALK_MEASURE_ONLY") == ""
	status, _, list := d.request(t, http.MethodPost, "/mcp", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
		map[string]string{"MCP-Protocol-Version": "2025-11-25"})
	if status != http.StatusOK {
		t.Fatalf("tools/list: HTTP %d", status)
	}
	t.Logf("tools/list: %d bytes (≈ %d tokens)", len(list), len(list)/4)
	var rows []sizeRow
	add := func(plan, answer string, a *toolAnswer) {
		row := sizeRow{plan: plan, answer: answer, text: chars(a.Text), struc: chars(string(a.Structured))}
		if a.IsError { // a failure is one text block (the helper split it into message and JSON)
			row.text, row.struc = chars(string(a.Structured)), 0
		}
		rows = append(rows, row)
		if assert && (chars(a.Text) > maxAnswerLargestPlan || chars(string(a.Structured)) > maxAnswerLargestPlan) {
			t.Errorf("%s %s: %d chars of text, %d of structured content, over %d", plan, answer, chars(a.Text), chars(string(a.Structured)), maxAnswerLargestPlan)
		}
	}
	for _, p := range []struct{ key, node, other string }{{"example", "not.ticket", "ed.path.worth"}, {"big", "t3", "t4"}} {
		add(p.key, "plans_list", c.ok(t, "plans_list", map[string]any{}, nil))
		read := c.ok(t, "werkbaum_read", map[string]any{"plan": p.key}, nil)
		add(p.key, "werkbaum_read", read)
		add(p.key, "werkbaum_inspect", c.ok(t, "werkbaum_inspect", map[string]any{"plan": p.key}, nil))
		var r struct {
			Base planBase `json:"base"`
		}
		if err := read.decode(&r); err != nil {
			t.Fatal(err)
		}
		add(p.key, "werkbaum_set_status (one line)", c.ok(t, "werkbaum_set_status", writeArgs(p.key, r.Base, p.key+"-size-1", map[string]any{"id": p.node, "status": "done"}), nil))
		add(p.key, "conflict after one changed line", c.must(t, "werkbaum_set_status", writeArgs(p.key, r.Base, p.key+"-size-2", map[string]any{"id": p.other, "status": "done"})))
		add(p.key, "operation_get", c.ok(t, "operation_get", map[string]any{"plan": p.key, "request_id": p.key + "-size-1"}, nil))
	}
	logSizeTable(t, rows)
}
