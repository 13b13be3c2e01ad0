package test

import (
	"bytes"
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"
)

// roundTripPlan is the plan every verb of TestPlanVerbRoundTrips starts from, in turn.
const roundTripPlan = `%% round trip plan
- [ ] #root: Root
  - [ ] #a: Alpha (S) @anna
  - [ ] #b: Beta (M) :#a
    " short description of beta
  - [ ] #c: Gamma (XS)
- [ ] #other: Other (S)
`

// TestPlanVerbRoundTrips runs read → write → read for every write tool on one plan file:
// the file on disk is exactly the expected text (untouched lines byte-identical, mode
// kept), the write answers the next revision and the checksum of the file, and the next
// read returns that file and that base.
func TestPlanVerbRoundTrips(t *testing.T) {
	t.Parallel()
	d, paths := startPlanDaemon(t, planFile{Key: "rt", Text: roundTripPlan, Mode: 0o640})
	c := newMCPClient(d)
	path := paths["rt"]

	steps := []struct {
		name, tool string
		args       map[string]any
		want       string
	}{
		{"set_status by key", "werkbaum_set_status", map[string]any{"id": "a", "status": "done"}, `%% round trip plan
- [ ] #root: Root
  - [x] #a: Alpha (S) @anna
  - [ ] #b: Beta (M) :#a
    " short description of beta
  - [ ] #c: Gamma (XS)
- [ ] #other: Other (S)
`},
		{"set_status by box code", "werkbaum_set_status", map[string]any{"id": "#c", "status": "~"}, `%% round trip plan
- [ ] #root: Root
  - [x] #a: Alpha (S) @anna
  - [ ] #b: Beta (M) :#a
    " short description of beta
  - [~] #c: Gamma (XS)
- [ ] #other: Other (S)
`},
		{"set_size", "werkbaum_set_size", map[string]any{"id": "b", "size": "L"}, `%% round trip plan
- [ ] #root: Root
  - [x] #a: Alpha (S) @anna
  - [ ] #b: Beta (L) :#a
    " short description of beta
  - [~] #c: Gamma (XS)
- [ ] #other: Other (S)
`},
		{"set_size null removes", "werkbaum_set_size", map[string]any{"id": "a", "size": nil}, `%% round trip plan
- [ ] #root: Root
  - [x] #a: Alpha @anna
  - [ ] #b: Beta (L) :#a
    " short description of beta
  - [~] #c: Gamma (XS)
- [ ] #other: Other (S)
`},
		{"add_node after", "werkbaum_add_node", map[string]any{"parent": "root", "line": "- [ ] #d: Delta (S) @ben", "after": "a"}, `%% round trip plan
- [ ] #root: Root
  - [x] #a: Alpha @anna
  - [ ] #d: Delta (S) @ben
  - [ ] #b: Beta (L) :#a
    " short description of beta
  - [~] #c: Gamma (XS)
- [ ] #other: Other (S)
`},
		{"add_node as last child", "werkbaum_add_node", map[string]any{"parent": "other", "line": "- [?] #e: Epsilon"}, `%% round trip plan
- [ ] #root: Root
  - [x] #a: Alpha @anna
  - [ ] #d: Delta (S) @ben
  - [ ] #b: Beta (L) :#a
    " short description of beta
  - [~] #c: Gamma (XS)
- [ ] #other: Other (S)
  - [?] #e: Epsilon
`},
		{"move_node with its description", "werkbaum_move_node", map[string]any{"id": "b", "parent": "other", "after": "e"}, `%% round trip plan
- [ ] #root: Root
  - [x] #a: Alpha @anna
  - [ ] #d: Delta (S) @ben
  - [~] #c: Gamma (XS)
- [ ] #other: Other (S)
  - [?] #e: Epsilon
  - [ ] #b: Beta (L) :#a
    " short description of beta
`},
		{"remove_node discard true", "werkbaum_remove_node", map[string]any{"id": "d", "discard": true}, `%% round trip plan
- [ ] #root: Root
  - [x] #a: Alpha @anna
  - [-] #d: Delta (S) @ben
  - [~] #c: Gamma (XS)
- [ ] #other: Other (S)
  - [?] #e: Epsilon
  - [ ] #b: Beta (L) :#a
    " short description of beta
`},
		{"remove_node discard false", "werkbaum_remove_node", map[string]any{"id": "b", "discard": false}, `%% round trip plan
- [ ] #root: Root
  - [x] #a: Alpha @anna
  - [-] #d: Delta (S) @ben
  - [~] #c: Gamma (XS)
- [ ] #other: Other (S)
  - [?] #e: Epsilon
`},
		{"apply_ops", "werkbaum_apply_ops", map[string]any{"ops": []map[string]any{
			{"op": "replace", "index": 0, "count": 1, "lines": []string{"%% changed by line ops"}},
			{"op": "insert", "index": 5, "lines": []string{"  - [ ] #f: Phi (XS)"}},
		}}, `%% changed by line ops
- [ ] #root: Root
  - [x] #a: Alpha @anna
  - [-] #d: Delta (S) @ben
  - [~] #c: Gamma (XS)
  - [ ] #f: Phi (XS)
- [ ] #other: Other (S)
  - [?] #e: Epsilon
`},
		{"write whole text", "werkbaum_write", map[string]any{"text": "%% rewritten\n- [ ] #new: New root (M)\n  - [ ] #n1: One (S)\n"},
			"%% rewritten\n- [ ] #new: New root (M)\n  - [ ] #n1: One (S)\n"},
	}

	prev := c.read(t, "rt")
	if prev.Text != roundTripPlan || prev.Base.Checksum != sha([]byte(roundTripPlan)) || prev.Lines != 7 {
		t.Fatalf("first read: %+v", prev)
	}
	for i, st := range steps {
		ok := t.Run(st.name, func(t *testing.T) {
			var w writeAnswer
			c.ok(t, st.tool, writeArgs("rt", prev.Base, "rt-"+st.name, st.args), &w)
			disk := readFile(t, path)
			if string(disk) != st.want {
				t.Fatalf("file after %s:\n%s\nwant:\n%s", st.tool, disk, st.want)
			}
			if !w.Changed || w.Replayed || w.Revision != prev.Base.Revision+1 || w.Base.Revision != w.Revision || w.Base.Checksum != sha(disk) {
				t.Fatalf("answer %+v; previous base %+v, file checksum %s", w, prev.Base, sha(disk))
			}
			if w.Added == nil || w.Removed == nil {
				t.Fatalf("answer lacks warnings/added/removed: %+v", w)
			}
			fi, err := os.Stat(path)
			if err != nil || fi.Mode().Perm() != 0o640 {
				t.Fatalf("mode after write: %v %v", fi.Mode(), err)
			}
			next := c.read(t, "rt")
			if next.Text != string(disk) || next.Base != w.Base {
				t.Fatalf("read after write: base %+v, want %+v; text equal %v", next.Base, w.Base, next.Text == string(disk))
			}
			prev = next
		})
		if !ok {
			t.Fatalf("step %d failed; later steps build on it", i)
		}
	}
	// Each write was journalled as applied with its revision and result.
	for i, st := range steps {
		op := c.operation(t, "rt", "rt-"+st.name)
		var res writeAnswer
		if err := json.Unmarshal(op.Result, &res); err != nil {
			t.Fatalf("operation %s result: %v", st.name, err)
		}
		if op.State != "applied" || op.Tool != st.tool || op.Revision != uint64(i+2) || res.Revision != op.Revision || op.Author == nil || op.Author.Client != "local" {
			t.Errorf("operation_get %s: %+v", st.name, op)
		}
	}
	// No temp file is left beside the plan.
	entries, _ := os.ReadDir(strings.TrimSuffix(path, "rt.werkbaum"))
	if len(entries) != 1 {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("plan folder holds %v", names)
	}
}

// TestPlanLineEndingsKept: a CRLF plan stays CRLF through a node verb, and the lines the
// verb does not own are byte-identical.
func TestPlanLineEndingsKept(t *testing.T) {
	t.Parallel()
	text := strings.ReplaceAll(roundTripPlan, "\n", "\r\n")
	d, paths := startPlanDaemon(t, planFile{Key: "crlf", Text: text})
	c := newMCPClient(d)
	r := c.read(t, "crlf")
	var w writeAnswer
	c.ok(t, "werkbaum_add_node", writeArgs("crlf", r.Base, "crlf-1", map[string]any{"parent": "other", "line": "- [ ] #z: Zeta"}), &w)
	want := text + "  - [ ] #z: Zeta\r\n"
	if got := readFile(t, paths["crlf"]); string(got) != want {
		t.Fatalf("file %q\nwant %q", got, want)
	}
}

// TestPlansListAndInspect: plans_list rows, and werkbaum_inspect's fields, subtree by id
// and include.
func TestPlansListAndInspect(t *testing.T) {
	t.Parallel()
	second := "- [x] #only: Only node (S) @cleo\n"
	d, _ := startPlanDaemon(t, planFile{Key: "alpha", Text: roundTripPlan}, planFile{Key: "beta", Text: second})
	c := newMCPClient(d)

	var list struct {
		Plans []map[string]any `json:"plans"`
	}
	a := c.ok(t, "plans_list", map[string]any{}, &list)
	if len(list.Plans) != 2 {
		t.Fatalf("plans_list: %s", a.Structured)
	}
	wantRows := []struct {
		key   string
		nodes float64
		text  string
	}{{"alpha", 5, roundTripPlan}, {"beta", 1, second}}
	for i, w := range wantRows {
		p := list.Plans[i]
		if p["key"] != w.key || p["access"] != "write" || p["revision"] != float64(1) || p["nodes"] != w.nodes ||
			p["warnings"] == nil || p["checksum"] != sha([]byte(w.text)) {
			t.Errorf("plans_list row %d: %v", i, p)
		}
		if !strings.Contains(a.Text, w.key+" (write): revision 1") {
			t.Errorf("plans_list text %q lacks %s", a.Text, w.key)
		}
	}
	if _, ok := list.Plans[0]["path"]; ok {
		t.Errorf("plans_list leaks the file path: %v", list.Plans[0])
	}

	type inspectAnswer struct {
		Base     planBase         `json:"base"`
		Nodes    []map[string]any `json:"nodes"`
		Warnings []map[string]any `json:"warnings"`
		Path     map[string]any   `json:"path"`
	}
	var full inspectAnswer
	c.ok(t, "werkbaum_inspect", map[string]any{"plan": "alpha", "detail": "full"}, &full)
	if full.Base.Checksum != sha([]byte(roundTripPlan)) || full.Base.Revision != 1 {
		t.Fatalf("inspect base %+v", full.Base)
	}
	var ids []string
	for _, n := range full.Nodes {
		ids = append(ids, n["id"].(string))
	}
	// Document order; the short description line is not a node.
	if !slices.Equal(ids, []string{"root", "a", "b", "c", "other"}) {
		t.Fatalf("inspect ids %v", ids)
	}
	fields := []string{"id", "label", "line", "parentLine", "gate", "optional", "status", "effectiveStatus", "size",
		"assumedSize", "people", "keywords", "deps", "desc", "taigaSlug", "ticketRef", "focus"}
	for _, n := range full.Nodes {
		for _, f := range fields {
			if _, ok := n[f]; !ok {
				t.Errorf("node %v lacks %q", n["id"], f)
			}
		}
	}
	b := full.Nodes[2]
	if b["id"] != "b" || b["label"] != "Beta" || b["line"] != float64(4) || b["parentLine"] != float64(2) || b["size"] != "M" ||
		b["status"] != "planned" || b["desc"] != "short description of beta" || !slices.Equal(anyStrings(b["deps"]), []string{"a"}) {
		t.Errorf("node b: %v", b)
	}
	if a := full.Nodes[1]; !slices.Equal(anyStrings(a["people"]), []string{"anna"}) {
		t.Errorf("node a people: %v", a["people"])
	}
	for _, k := range []string{"exact", "needed", "stations", "cost", "assigneeLoads", "overloadedAssignee"} {
		if _, ok := full.Path[k]; !ok {
			t.Errorf("path lacks %q: %v", k, full.Path)
		}
	}
	if full.Warnings == nil {
		t.Errorf("inspect without include lacks warnings")
	}

	var sub inspectAnswer
	c.ok(t, "werkbaum_inspect", map[string]any{"plan": "alpha", "detail": "full", "id": "#root"}, &sub)
	ids = ids[:0]
	for _, n := range sub.Nodes {
		ids = append(ids, n["id"].(string))
	}
	if !slices.Equal(ids, []string{"root", "a", "b", "c"}) || sub.Base != full.Base {
		t.Fatalf("subtree of root: %v base %+v", ids, sub.Base)
	}

	onlyWarnings := c.ok(t, "werkbaum_inspect", map[string]any{"plan": "alpha", "detail": "full", "include": []string{"warnings"}}, nil)
	if _, ok := onlyWarnings.Map["nodes"]; ok {
		t.Errorf("include [warnings] returned nodes: %s", onlyWarnings.Structured)
	}
	if _, ok := onlyWarnings.Map["path"]; ok {
		t.Errorf("include [warnings] returned the path: %s", onlyWarnings.Structured)
	}
	if _, ok := onlyWarnings.Map["warnings"]; !ok {
		t.Errorf("include [warnings] lacks warnings: %s", onlyWarnings.Structured)
	}
	onlyPath := c.ok(t, "werkbaum_inspect", map[string]any{"plan": "alpha", "detail": "full", "include": []string{"path", "tree"}}, nil)
	if onlyPath.Map["path"] == nil || onlyPath.Map["nodes"] == nil || onlyPath.Map["warnings"] != nil {
		t.Errorf("include [path tree]: %s", onlyPath.Structured)
	}

	for name, args := range map[string]map[string]any{
		"bad include":  {"plan": "alpha", "include": []string{"everything"}},
		"unknown id":   {"plan": "alpha", "id": "nope"},
		"unknown plan": {"plan": "gamma"},
	} {
		if a := c.must(t, "werkbaum_inspect", args); !a.IsError || a.Text == "" {
			t.Errorf("inspect %s: %+v", name, a)
		}
	}
}

// TestPlanOperationGet: operation_get for an applied, a rejected, a conflicting and an
// unknown request id, with author and recorded result.
func TestPlanOperationGet(t *testing.T) {
	t.Parallel()
	d, paths := startPlanDaemon(t, planFile{Key: "ops", Text: roundTripPlan})
	c := newMCPClient(d)
	c.headers = map[string]string{"X-Talk-Agent": "header-agent"}
	r := c.read(t, "ops")

	var w writeAnswer
	c.ok(t, "werkbaum_set_status", writeArgs("ops", r.Base, "op-applied", map[string]any{"id": "a", "status": "done", "agent": "ops-bot"}), &w)
	// A guard refusal is rejected.
	if a := c.must(t, "werkbaum_set_status", writeArgs("ops", w.Base, "op-rejected", map[string]any{"id": "b", "status": "^"})); !a.IsError || a.Map["refused"] != true {
		t.Fatalf("[^] without allowProd: %+v", a)
	}
	// A verb the text does not allow (unknown id) is rejected too.
	if a := c.must(t, "werkbaum_set_status", writeArgs("ops", w.Base, "op-bad-id", map[string]any{"id": "nope", "status": "done"})); !a.IsError {
		t.Fatalf("unknown node id: %+v", a)
	}
	// The first base is stale now.
	if a := c.must(t, "werkbaum_set_status", writeArgs("ops", r.Base, "op-conflict", map[string]any{"id": "c", "status": "done"})); !a.IsError || a.Map["conflict"] != true {
		t.Fatalf("stale base: %+v", a)
	}
	before := readFile(t, paths["ops"])

	applied := c.operation(t, "ops", "op-applied")
	var res writeAnswer
	if err := json.Unmarshal(applied.Result, &res); err != nil || res.Base != w.Base {
		t.Fatalf("applied result %s: %v", applied.Result, err)
	}
	if applied.State != "applied" || applied.Revision != 2 || applied.Tool != "werkbaum_set_status" || applied.Author == nil ||
		applied.Author.Client != "local" || applied.Author.Agent != "ops-bot" {
		t.Errorf("applied: %+v", applied)
	}
	rejected := c.operation(t, "ops", "op-rejected")
	if rejected.State != "rejected" || !strings.Contains(rejected.Error, "allowProd") || rejected.Author == nil || rejected.Author.Agent != "header-agent" {
		t.Errorf("rejected: %+v", rejected)
	}
	if badID := c.operation(t, "ops", "op-bad-id"); badID.State != "rejected" || badID.Error == "" {
		t.Errorf("rejected (unknown id): %+v", badID)
	}
	if conflict := c.operation(t, "ops", "op-conflict"); conflict.State != "conflict" {
		t.Errorf("conflict: %+v", conflict)
	}
	unknown := c.operation(t, "ops", "never-sent")
	if unknown.State != "unknown" || unknown.RequestID != "never-sent" || unknown.Result != nil {
		t.Errorf("unknown: %+v", unknown)
	}
	if a := c.must(t, "operation_get", map[string]any{"plan": "ops"}); !a.IsError || !strings.Contains(a.Text, "request_id") {
		t.Errorf("operation_get without request_id: %+v", a)
	}
	if after := readFile(t, paths["ops"]); !bytes.Equal(before, after) {
		t.Fatal("operation_get changed the file")
	}
}

func anyStrings(v any) []string {
	list, _ := v.([]any)
	out := []string{}
	for _, x := range list {
		s, _ := x.(string)
		out = append(out, s)
	}
	return out
}
