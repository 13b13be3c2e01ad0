package test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"testing"

	"talkd/internal/werkbaum"
)

// statusAnalysisPlan has what the model of a status edit takes from the old analysis
// (dependencies, effective status held by them, an or group and an xor group, an optional
// node, sized parents, a discarded root out of view, non-ASCII people).
const statusAnalysisPlan = `[-] Alt #old
  - A #a
Projekt (L) @jörg
  - [~] Backend #be :#a (M) @Müller
    | [ ] REST #rest (S)
    | [/] GraphQL #gql (M) @jörg
  - [ ] Frontend #fe :#be
    = [x] React #react (S)
    = [ ] Vue #vue (S)
    + [?] Storybook #sb (XS)
  - [!] Rollout #ro (L)
    - [ ] Staging #st (S) :#rest
    - [ ] Prod #prod (M) @Müller
`

// TestStatusWritesAnalysedLikeAFreshRead: after each werkbaum_set_status the daemon's
// werkbaum_inspect of the plan (answered from the analysis the write made, whose model
// starts from the old text's) equals the inspect view a fresh engine, which remembers
// nothing, makes of the file on disk; and the write's warnings are that view's warnings.
// The statuses cover edits the old model serves (a rank, a done node, an xor conflict, a
// held dependency) and those that need the full model (discarded, an optional node
// started).
func TestStatusWritesAnalysedLikeAFreshRead(t *testing.T) {
	d, paths := startPlanDaemon(t, planFile{Key: "p", Text: statusAnalysisPlan})
	c := newMCPClient(d)
	fresh, err := werkbaum.NewEngine(werkbaum.Options{Runtimes: 1, CacheEntries: -1})
	if err != nil {
		t.Fatal(err)
	}
	var r readAnswer
	c.ok(t, "werkbaum_read", map[string]any{"plan": "p"}, &r)
	base := r.Base
	writes := []struct{ id, status string }{
		{"be", "done"}, {"rest", "progress"}, {"vue", "progress"}, {"gql", "discarded"},
		{"sb", "progress"}, {"prod", "done"}, {"ro", "planned"}, {"react", "planned"},
		{"st", "skeleton"}, {"a", "done"}, {"gql", "highrisk"}, {"be", "idea"}, {"fe", "neutral"}, {"rest", "done"},
	}
	for k, w := range writes {
		var wa writeAnswer
		c.ok(t, "werkbaum_set_status", writeArgs("p", base, fmt.Sprintf("analysis-%d", k),
			map[string]any{"id": w.id, "status": w.status}), &wa)
		if !wa.Changed {
			t.Fatalf("write %d (%s → %s) changed nothing", k, w.id, w.status)
		}
		base = wa.Base
		text, err := os.ReadFile(paths["p"])
		if err != nil {
			t.Fatal(err)
		}
		raw, err := fresh.InspectJSON(context.Background(), string(text), werkbaum.InspectOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var want, got map[string]any
		if err := json.Unmarshal(raw, &want); err != nil {
			t.Fatal(err)
		}
		c.ok(t, "werkbaum_inspect", map[string]any{"plan": "p", "detail": "full"}, &got)
		for _, part := range []string{"nodes", "warnings", "path"} {
			if !reflect.DeepEqual(got[part], want[part]) {
				t.Errorf("write %d (%s → %s): the daemon's %s differ from a fresh read's:\n got %v\nwant %v",
					k, w.id, w.status, part, got[part], want[part])
			}
		}
		// The write counts the warnings a fresh read has (it carries only the delta).
		if wantWarnings, _ := want["warnings"].([]any); wa.WarningCount != len(wantWarnings) {
			t.Errorf("write %d (%s → %s): the write counted %d warnings, a fresh read has %d",
				k, w.id, w.status, wa.WarningCount, len(wantWarnings))
		}
	}
}
