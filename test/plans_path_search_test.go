package test

import (
	"testing"

	"talkd/internal/werkbaum/gen"
)

// TestInspectAnswersTheExactSearchsHardCase: werkbaum_inspect on the issue-33 plan (14
// two-way groups that activate backwards, 16,384 assignments in one component, 606 lines)
// answers with the exact path inside the inspect tool's deadline (the search's equality
// with the literal enumeration is held by the engine's own tests). Before, the search
// enumerated every assignment and the call ran out of time (werkbaum-inspect at 309276a:
// "call exceeded its deadline" after 2.2 s).
func TestInspectAnswersTheExactSearchsHardCase(t *testing.T) {
	t.Parallel()
	text := gen.Coupled(14, 20, 1)
	d, _ := startPlanDaemon(t, planFile{Key: "coupled", Text: text})
	c := newMCPClient(d)
	var got struct {
		Path struct {
			Exact  bool  `json:"exact"`
			Needed []int `json:"needed"`
			Cost   *int  `json:"cost"`
		} `json:"path"`
	}
	c.ok(t, "werkbaum_inspect", map[string]any{"plan": "coupled", "include": []string{"path"}, "detail": "full"}, &got)
	if !got.Path.Exact {
		t.Fatalf("path of 16,384 assignments not exact: %+v", got.Path)
	}
	// The root, Base and the shared #db are needed under every assignment, and the last
	// group's parent (pulled in by the root's dependency) with one of its options.
	if len(got.Path.Needed) < 5 || got.Path.Needed[0] != 1 || got.Path.Needed[1] != 2 {
		t.Fatalf("needed lines %v, want the root and Base first and a chosen option", got.Path.Needed)
	}
	if got.Path.Cost == nil || *got.Path.Cost <= 0 {
		t.Fatalf("path cost %v, want a positive cost", got.Path.Cost)
	}
}
