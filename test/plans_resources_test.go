package test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// TestResourcesListNamesThePlans: resources/list names, beside the guide, every plan the
// caller may read as werkbaum://plan/{key}, in pages of 50 with a cursor to the next (a
// root may hold thousands of plans, and a host hands its model the whole list); each
// listed plan reads as werkbaum_read's first page; a cursor talkd did not give is refused.
func TestResourcesListNamesThePlans(t *testing.T) {
	var files []planFile
	for i := range 60 {
		files = append(files, planFile{Key: fmt.Sprintf("p%02d", i), Text: fmt.Sprintf("[ ] Plan %d #root%d @jörg (S)\n", i, i)})
	}
	d, _ := startPlanDaemon(t, files...)
	h := map[string]string{"MCP-Protocol-Version": "2025-11-25"}
	list := func(cursor any) (resources []map[string]any, next string, raw string) {
		t.Helper()
		params := map[string]any{}
		if cursor != nil {
			params["cursor"] = cursor
		}
		body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "resources/list", "params": params})
		_, _, out := d.request(t, "POST", "/mcp", string(body), h)
		var r struct {
			Result struct {
				Resources  []map[string]any `json:"resources"`
				NextCursor string           `json:"nextCursor"`
			} `json:"result"`
		}
		json.Unmarshal(out, &r)
		return r.Result.Resources, r.Result.NextCursor, string(out)
	}
	first, next, raw := list(nil)
	if len(first) != 50 || next == "" {
		t.Fatalf("the first page names %d resources, next cursor %q: %.300s", len(first), next, raw)
	}
	second, after, raw := list(next)
	if len(second) != 11 || after != "" {
		t.Fatalf("the second page names %d resources, next cursor %q: %.300s", len(second), after, raw)
	}
	uris := map[string]bool{}
	for _, r := range append(first, second...) {
		uris[r["uri"].(string)] = true
	}
	if !uris["werkbaum://guide"] || len(uris) != 61 {
		t.Fatalf("the pages name %d distinct resources, want the guide and 60 plans: %v", len(uris), uris)
	}
	for _, f := range files {
		uri := "werkbaum://plan/" + f.Key
		if !uris[uri] {
			t.Fatalf("%s is not listed", uri)
		}
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 2, "method": "resources/read", "params": map[string]any{"uri": "werkbaum://plan/p07"}})
	_, _, out := d.request(t, "POST", "/mcp", string(body), h)
	if !strings.Contains(string(out), `base {\"revision\":1`) || !strings.Contains(string(out), "@jörg") {
		t.Errorf("a listed plan does not read as werkbaum_read's page: %.400s", out)
	}
	if _, _, raw := list("resources:abc"); !strings.Contains(raw, `"error"`) || !strings.Contains(raw, "cursor") {
		t.Errorf("a cursor talkd did not give: %.300s", raw)
	}
}
