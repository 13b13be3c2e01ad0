package api

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"talkd/internal/werkbaum"
	"talkd/internal/werkbaum/gen"
	"talkd/internal/werkbaum/plans"
)

// outlineOfInspection is the outline as the compact model took it before the store's
// outline: every field of every record decoded (werkbaum.Inspection), then the ones the
// compact reading shows kept.
func outlineOfInspection(t testing.TB, view []byte) *plans.Outline {
	t.Helper()
	var v werkbaum.Inspection
	if err := json.Unmarshal(view, &v); err != nil {
		t.Fatal(err)
	}
	o := &plans.Outline{}
	// Empty lists stay empty, not nil, as the decoder leaves them.
	if v.Nodes != nil {
		o.Nodes = []plans.OutlineNode{}
	}
	if v.Warnings != nil {
		o.Warnings = []plans.OutlineWarning{}
	}
	for _, n := range v.Nodes {
		o.Nodes = append(o.Nodes, plans.OutlineNode{Line: n.Line, Depth: n.Depth, ID: n.ID, Label: n.Label, Status: n.Status,
			EffectiveStatus: n.EffectiveStatus, Size: n.Size, People: n.People, Deps: n.Deps})
	}
	for _, w := range v.Warnings {
		o.Warnings = append(o.Warnings, plans.OutlineWarning{Type: w.Type, Line: w.Line, Text: w.Text})
	}
	if p := v.Path; p != nil {
		o.Path = &plans.OutlinePath{Exact: p.Exact, Stations: p.Stations, Cost: p.Cost, AssigneeLoads: p.AssigneeLoads, OverloadedAssignee: p.OverloadedAssignee}
	}
	return o
}

// equalityPlans are the shared example plans (when ../shared is there) and generated ones.
func equalityPlans(t *testing.T) map[string]string {
	t.Helper()
	texts := map[string]string{"gen-1000": gen.Plan(1000, 1), "gen-3000": gen.Plan(3000, 7)}
	dir := filepath.Join("..", "..", "..", "shared", "werkbaum", "examples")
	if env := os.Getenv("TALK_SHARED_DIR"); env != "" {
		dir = filepath.Join(env, "werkbaum", "examples")
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.werkbaum"))
	if len(files) == 0 {
		if os.Getenv("TALK_SHARED_DIR") != "" {
			t.Fatalf("no example plans in %s", dir)
		}
		t.Logf("no example plans in %s (set TALK_SHARED_DIR): generated plans only", dir)
	}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		texts[filepath.Base(f)] = string(raw)
	}
	return texts
}

// TestOutlineEqualsFullDecode: the store's outline (only the fields the compact reading
// shows, decoded once per content) holds exactly what decoding every record gave, and
// every compact answer made from it (whole plan, parts, subtrees, depths, from lines) is
// byte for byte the answer made from the full decode, on the shared examples and on
// generated plans.
func TestOutlineEqualsFullDecode(t *testing.T) {
	eng, err := werkbaum.NewEngine(werkbaum.Options{})
	if err != nil {
		t.Fatal(err)
	}
	base := plans.Base{Revision: 7, Checksum: strings.Repeat("c", 64)}
	for name, text := range equalityPlans(t) {
		view, err := eng.InspectJSON(context.Background(), text, werkbaum.InspectOptions{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		slim, err := werkbaum.DecodeOutline(view)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		full := outlineOfInspection(t, view)
		if len(full.Nodes) == 0 {
			t.Fatalf("%s: no nodes", name)
		}
		if !reflect.DeepEqual(slim, full) {
			for i := range slim.Nodes {
				if !reflect.DeepEqual(slim.Nodes[i], full.Nodes[i]) {
					t.Logf("node %d: %#v\n%#v", i, slim.Nodes[i], full.Nodes[i])
					break
				}
			}
			t.Logf("warnings %v path %v", reflect.DeepEqual(slim.Warnings, full.Warnings), reflect.DeepEqual(slim.Path, full.Path))
			t.Fatalf("%s: the outline differs from the full decode", name)
		}
		a, b := newCompactModel(slim), newCompactModel(full)
		depth1 := 1
		args := []compactArgs{
			{plan: "p", tree: true, warnings: true, path: true},
			{plan: "p", warnings: true},
			{plan: "p", path: true},
			{plan: "p", tree: true, depth: &depth1},
			{plan: "p", tree: true, warnings: true, path: true, from: full.Nodes[len(full.Nodes)/2].Line},
		}
		for _, n := range []int{0, len(full.Nodes) / 3, len(full.Nodes) - 1} {
			if id := full.Nodes[n].ID; id != "" {
				args = append(args, compactArgs{plan: "p", id: id, tree: true, warnings: true, path: true})
			}
		}
		for _, arg := range args {
			ra, ta, erra := a.render(base, arg)
			rb, tb, errb := b.render(base, arg)
			ja, _ := json.Marshal(ra)
			jb, _ := json.Marshal(rb)
			if ta != tb || string(ja) != string(jb) || (erra == nil) != (errb == nil) {
				t.Errorf("%s %+v: the answers differ:\n%s\n---\n%s", name, arg, ta, tb)
			}
		}
	}
}

// BenchmarkCompactModel10k: what the first compact reading of a 10,000-node plan (what
// `werkbaum-gen 10000` prints) costs in Go after the engine's answer (3.5 MB of JSON).
// "outline" is today's path: the store's outline decoded once (the summary's count is its
// length) and the compact model's indexes. "full-decode" is the path before it, in the
// same binary: the compact model decoded every record (werkbaum.Inspection) and the
// summary decoded the view again to count nodes and warnings.
func BenchmarkCompactModel10k(b *testing.B) {
	eng, err := werkbaum.NewEngine(werkbaum.Options{})
	if err != nil {
		b.Fatal(err)
	}
	view, err := eng.InspectJSON(context.Background(), gen.Plan(10000, 1), werkbaum.InspectOptions{})
	if err != nil {
		b.Fatal(err)
	}
	b.Run("outline", func(b *testing.B) {
		b.SetBytes(int64(len(view)))
		for b.Loop() {
			o, err := werkbaum.DecodeOutline(view)
			if err != nil {
				b.Fatal(err)
			}
			newCompactModel(o)
		}
	})
	b.Run("full-decode", func(b *testing.B) {
		b.SetBytes(int64(len(view)))
		for b.Loop() {
			newCompactModel(outlineOfInspection(b, view))
			var counts struct {
				Nodes    []struct{} `json:"nodes"`
				Warnings []struct{} `json:"warnings"`
			}
			if err := json.Unmarshal(view, &counts); err != nil {
				b.Fatal(err)
			}
		}
	})
}
