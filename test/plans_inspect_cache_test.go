package test

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// inspectCachePlan has non-ASCII people and characters encoding/json escapes in strings
// (<, >, &, quotes), so the escaped text copy differs from the structured content.
const inspectCachePlan = `%% inspect cache plan
- [ ] #root: Root & <Wurzel>
  - [ ] #a: Alpha "quoted" (S) @jörg
  - [ ] #b: Beta (M) @Müller :#a
  - [ ] #c: Gamma (XS)
`

// inspectRaw posts werkbaum_inspect as a literal JSON-RPC request (always id 1, so two
// answers can be compared byte for byte) and returns the raw answer after checking that
// its text copy is exactly its structured content's JSON.
func inspectRaw(t *testing.T, d *daemon, args string, headers map[string]string, meta string) (string, map[string]any) {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"werkbaum_inspect","arguments":` + args + meta + `}}`
	r := rpcPost(t, d, body, headers)
	if r.status != 200 {
		t.Fatalf("inspect %s: HTTP %d %s", args, r.status, r.raw)
	}
	var env struct {
		Result struct {
			Content []struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"content"`
			Structured json.RawMessage `json:"structuredContent"`
			IsError    bool            `json:"isError"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(r.raw), &env); err != nil {
		t.Fatal(err)
	}
	res := env.Result
	if res.IsError || len(res.Content) != 1 || res.Content[0].Type != "text" || res.Content[0].Text != string(res.Structured) {
		t.Fatalf("inspect %s: the text copy must be the structured content's JSON: %.600s", args, r.raw)
	}
	var view map[string]any
	if err := json.Unmarshal(res.Structured, &view); err != nil {
		t.Fatal(err)
	}
	return r.raw, view
}

// nodeStatus is the status of the node with this id in an inspect view.
func nodeStatus(t *testing.T, view map[string]any, id string) string {
	t.Helper()
	nodes, _ := view["nodes"].([]any)
	for _, n := range nodes {
		if m, _ := n.(map[string]any); m["id"] == id {
			s, _ := m["status"].(string)
			return s
		}
	}
	t.Fatalf("no node %q in %v", id, view)
	return ""
}

// TestInspectCacheHitIsTheFreshAnswer: werkbaum_inspect of an unchanged plan answers, on
// every hit, the same bytes as the first answer and as a fresh daemon's answer on the
// same file; other option sets in between do not mix in; after a write through talkd,
// and after an edit outside it, the answer is the new plan's, never the cached one.
func TestInspectCacheHitIsTheFreshAnswer(t *testing.T) {
	t.Parallel()
	d, paths := startPlanDaemon(t, planFile{Key: "p", Text: inspectCachePlan})
	full := `{"plan":"p","detail":"full"}`

	first, view := inspectRaw(t, d, full, nil, "")
	if base := view["base"].(map[string]any); base["checksum"] != sha([]byte(inspectCachePlan)) {
		t.Fatalf("first inspect base %v", base)
	}
	// Other slots in between: a subtree and one part.
	_, sub := inspectRaw(t, d, `{"plan":"p","id":"#a","detail":"full"}`, nil, "")
	if nodes := sub["nodes"].([]any); len(nodes) != 1 {
		t.Fatalf("subtree of a: %v", sub)
	}
	_, warn := inspectRaw(t, d, `{"plan":"p","include":["warnings"],"detail":"full"}`, nil, "")
	if _, ok := warn["nodes"]; ok {
		t.Fatalf("include [warnings] answered nodes: %v", warn)
	}
	for i := range 3 {
		if hit, _ := inspectRaw(t, d, full, nil, ""); hit != first {
			t.Fatalf("hit %d differs from the first answer:\n%.400s\n%.400s", i, hit, first)
		}
	}
	// The 2026 era splices its fields in front of the same shared result.
	_, view26 := inspectRaw(t, d, full, headers26("tools/call", "werkbaum_inspect"), ","+meta26)
	if view26["base"].(map[string]any)["checksum"] != view["base"].(map[string]any)["checksum"] || len(view26["nodes"].([]any)) != 4 {
		t.Fatalf("2026-era inspect: %v", view26)
	}

	// A fresh daemon (new engine, empty caches) on the same file answers the same bytes.
	fresh := startDaemon(t, daemonOptions{Config: plansConfig(paths)})
	if got, _ := inspectRaw(t, fresh, full, nil, ""); got != first {
		t.Fatalf("a fresh daemon's answer differs from the cached one:\n%.400s\n%.400s", got, first)
	}
	fresh.terminate(t)

	// A write through talkd: the next answer is the new plan's.
	c := newMCPClient(d)
	r := c.read(t, "p")
	var w writeAnswer
	c.ok(t, "werkbaum_set_status", writeArgs("p", r.Base, "cache-1", map[string]any{"id": "a", "status": "done"}), &w)
	afterWrite, view := inspectRaw(t, d, full, nil, "")
	if afterWrite == first || nodeStatus(t, view, "a") != "done" ||
		view["base"].(map[string]any)["checksum"] != w.Base.Checksum {
		t.Fatalf("after the write the answer is not the new plan's: %.600s", afterWrite)
	}
	if hit, _ := inspectRaw(t, d, full, nil, ""); hit != afterWrite {
		t.Fatalf("hit after the write differs:\n%.400s\n%.400s", hit, afterWrite)
	}

	// An edit outside talkd, of the same size: noticed by the file's identity.
	edited := strings.Replace(string(readFile(t, paths["p"])), "[ ] #c:", "[x] #c:", 1)
	if err := os.WriteFile(paths["p"], []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	afterEdit, view := inspectRaw(t, d, full, nil, "")
	if afterEdit == afterWrite || nodeStatus(t, view, "c") != "done" ||
		view["base"].(map[string]any)["checksum"] != sha([]byte(edited)) {
		t.Fatalf("after an outside edit the answer is not the new plan's: %.600s", afterEdit)
	}
}
