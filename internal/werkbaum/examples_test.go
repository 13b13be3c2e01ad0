package werkbaum

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestExamplesMatchUpstreamEditor runs every plan of ../shared/werkbaum/examples through the
// Go engine and compares the result with the upstream editor's *.expected.json
// (NOTATION.md §28): every warning (type, line and the other fields), every node field
// (effective status and assumed size included), the needed set, the stations in order, the
// cost, the assignee loads and the checksum computed by Go. Any difference fails.
func TestExamplesMatchUpstreamEditor(t *testing.T) {
	dir := filepath.Join(sharedDir(t), "werkbaum", "examples")
	plans, err := filepath.Glob(filepath.Join(dir, "*.werkbaum"))
	if err != nil || len(plans) < 6 {
		t.Fatalf("shared examples in %s: %v (%d plans)", dir, err, len(plans))
	}
	e := caseEngine(t)
	for _, p := range plans {
		name := filepath.Base(p)
		t.Run(name, func(t *testing.T) {
			text, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			wantRaw, err := os.ReadFile(strings.TrimSuffix(p, ".werkbaum") + ".expected.json")
			if err != nil {
				t.Fatal(err)
			}
			raw, err := e.Analyze(context.Background(), string(text), AnalyzeOptions{File: name})
			if err != nil {
				t.Fatal(err)
			}
			var got, want map[string]any
			if err := json.Unmarshal(raw, &got); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(wantRaw, &want); err != nil {
				t.Fatal(err)
			}
			for _, d := range compareAnalysis(got, want) {
				t.Error(d)
			}
		})
	}
}

// withoutText drops the English sentences (the expected files have none).
func withoutText(v any) any {
	list, _ := v.([]any)
	out := make([]any, 0, len(list))
	for _, w := range list {
		m := map[string]any{}
		for k, x := range w.(map[string]any) {
			if k != "text" {
				m[k] = x
			}
		}
		out = append(out, m)
	}
	return out
}

// compareAnalysis lists every difference between an analysis and the expected file.
func compareAnalysis(got, want map[string]any) []string {
	var diffs []string
	same := func(what string, g, w any) {
		if !reflect.DeepEqual(g, w) {
			diffs = append(diffs, fmt.Sprintf("%s: got %v, want %v", what, g, w))
		}
	}
	for _, k := range []string{"file", "checksum", "physicalLines", "view", "initiallyCollapsed", "focusLines"} {
		same(k, got[k], want[k])
	}
	for _, k := range []string{"warnings", "parseWarnings", "mixedGateWarnings"} {
		same(k, withoutText(got[k]), want[k])
	}
	gn, _ := got["nodes"].([]any)
	wn, _ := want["nodes"].([]any)
	if len(gn) != len(wn) {
		return append(diffs, fmt.Sprintf("nodes: got %d, want %d", len(gn), len(wn)))
	}
	for i := range wn {
		w := wn[i].(map[string]any)
		g := gn[i].(map[string]any)
		for k, v := range w {
			same(fmt.Sprintf("node on line %v: %s", w["line"], k), g[k], v)
		}
	}
	gp, _ := got["path"].(map[string]any)
	wp, _ := want["path"].(map[string]any)
	for _, k := range []string{"exact", "needed", "stations", "cost", "unassignedLoad", "assigneeStations", "totalStations", "overloadedAssignee"} {
		same("path."+k, gp[k], wp[k])
	}
	gl, _ := gp["assigneeLoads"].(map[string]any)
	wl, _ := wp["assigneeLoads"].(map[string]any)
	if len(gl) != len(wl) {
		diffs = append(diffs, fmt.Sprintf("path.assigneeLoads: got %v, want %v", gl, wl))
	}
	for k, v := range wl {
		g, ok := gl[k].(float64)
		if !ok || math.Abs(g-v.(float64)) > 1e-9 {
			diffs = append(diffs, fmt.Sprintf("path.assigneeLoads[%s]: got %v, want %v", k, gl[k], v))
		}
	}
	return diffs
}
