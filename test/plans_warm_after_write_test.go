package test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"talkd/internal/werkbaum/gen"
)

// warmLine is the plan store's debug line once the agents' writes paused and the view of
// the plan written last was made (internal/werkbaum/plans warm.go).
var warmLine = regexp.MustCompile(`"plan view made after the writes paused" plan=(\S+) revision=\d+ checksum=([0-9a-f]{64})`)

// computedLine is the engine's debug line for each answer its scripts computed (not read
// from a cache).
var computedLine = regexp.MustCompile(`"werkbaum: answer computed" method=(\S+) options=\S* text_sha256=([0-9a-f]{64})`)

// TestFirstInspectAfterWritesIsWarm: an agent writes a plan and pauses; the daemon makes
// the view of the new text once the writes paused, while the engine still holds the
// write's model, so the readings that come after the engine's memo was emptied (2 s) and
// after an idle release dropped what the disk holds (3 s) compute nothing: the default
// (compact) reading, the full one with the base and plans_list. Each equals the reading a
// fresh daemon gives of the same text. The small plan names people with non-ASCII letters.
func TestFirstInspectAfterWritesIsWarm(t *testing.T) {
	plans, node, d, paths := rhythmDaemon(t)
	c := newMCPClient(d)
	ctx := context.Background()

	call := func(c *mcpClient, tool string, args map[string]any) *toolAnswer {
		t.Helper()
		a, err := c.call(ctx, tool, args)
		if err != nil {
			t.Fatal(err)
		}
		if a.IsError {
			t.Fatalf("%s %v failed: %s", tool, args, a.Text)
		}
		return a
	}
	// withoutBase is a structured answer without its base (a fresh daemon's revision of
	// the same text differs).
	withoutBase := func(raw json.RawMessage) string {
		t.Helper()
		var m map[string]json.RawMessage
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatal(err)
		}
		delete(m, "base")
		out, _ := json.Marshal(m)
		return string(out)
	}
	for _, p := range plans {
		var r readAnswer
		if err := call(c, "werkbaum_read", map[string]any{"plan": p.Key}).decode(&r); err != nil {
			t.Fatal(err)
		}
		sheds := len(shedLine.FindAllString(d.logs(), -1))
		var w writeAnswer
		if err := call(c, "werkbaum_set_status", writeArgs(p.Key, r.Base, "warm-"+p.Key,
			map[string]any{"id": node[p.Key], "status": "done"})).decode(&w); err != nil {
			t.Fatal(err)
		}
		if !w.Changed {
			t.Fatalf("%s: the write changed nothing", p.Key)
		}
		sum := w.Base.Checksum
		// The agent thinks: past the engine's memo time and the daemon's idle release,
		// which drops the cached answers the disk holds and every outline.
		waitLogged(t, d, "idle shed", shedLine, sheds)
		logs := d.logs()
		warmed := false
		for _, m := range warmLine.FindAllStringSubmatch(logs, -1) {
			warmed = warmed || (m[1] == p.Key && m[2] == sum)
		}
		if !warmed {
			t.Errorf("%s: no view was made after the write (checksum %s)", p.Key, sum)
		}
		mark := len(logs)

		compact := call(c, "werkbaum_inspect", map[string]any{"plan": p.Key})
		full := call(c, "werkbaum_inspect", map[string]any{"plan": p.Key, "detail": "full"})
		list := call(c, "plans_list", map[string]any{})

		for _, m := range computedLine.FindAllStringSubmatch(d.logs()[mark:], -1) {
			if m[2] == sum {
				t.Errorf("%s: a reading after the pause computed the %s answer of the written text; the view made after the write was not found", p.Key, m[1])
			}
		}
		var got struct {
			Base planBase `json:"base"`
		}
		if err := json.Unmarshal(compact.Structured, &got); err != nil || got.Base != w.Base {
			t.Errorf("%s: the reading's base %+v, want the write's %+v (%v)", p.Key, got.Base, w.Base, err)
		}

		// A fresh daemon's readings of the written text.
		now, err := os.ReadFile(paths[p.Key])
		if err != nil {
			t.Fatal(err)
		}
		fresh, _ := startPlanDaemon(t, planFile{Key: p.Key, Text: string(now)})
		fc := newMCPClient(fresh)
		if want := withoutBase(call(fc, "werkbaum_inspect", map[string]any{"plan": p.Key}).Structured); withoutBase(compact.Structured) != want {
			t.Errorf("%s: the compact reading after the pause differs from a fresh daemon's:\n got %.400s\nwant %.400s", p.Key, withoutBase(compact.Structured), want)
		}
		if want := withoutBase(call(fc, "werkbaum_inspect", map[string]any{"plan": p.Key, "detail": "full"}).Structured); withoutBase(full.Structured) != want {
			t.Errorf("%s: the full reading after the pause differs from a fresh daemon's:\n got %.400s\nwant %.400s", p.Key, withoutBase(full.Structured), want)
		}
		waitAnalysed(t, fc, 1)
		wantRow := fmt.Sprintf("%s (", p.Key)
		var gotLine, wantLine string
		for _, l := range strings.Split(list.Text, "\n") {
			if strings.HasPrefix(l, wantRow) {
				gotLine = l[strings.Index(l, "revision"):]
			}
		}
		for _, l := range strings.Split(call(fc, "plans_list", map[string]any{}).Text, "\n") {
			if strings.HasPrefix(l, wantRow) {
				wantLine = l[strings.Index(l, "revision"):]
			}
		}
		// "revision N, X nodes, Y warnings": the counts must agree, the revisions differ.
		if cut := func(s string) string { _, rest, _ := strings.Cut(s, ", "); return rest }; gotLine == "" || cut(gotLine) != cut(wantLine) {
			t.Errorf("%s: plans_list after the pause %q, a fresh daemon's %q", p.Key, gotLine, wantLine)
		}
		fresh.terminate(t)
	}
}

// rhythmDaemon starts a daemon logging at debug level with the plans of the agent's-rhythm
// tests: a generated 2,000-node plan and a small one naming people with non-ASCII letters,
// both analysed; node is a node id per plan to set the status of.
func rhythmDaemon(t *testing.T) (plans []planFile, node map[string]string, d *daemon, paths map[string]string) {
	t.Helper()
	plans = []planFile{
		{Key: "big", Text: gen.Plan(2000, 1)},
		{Key: "small", Text: "Plan #root\n  [ ] Cart #cart @jörg (S)\n  [~] Checkout #co @Müller (M) needs #cart\n"},
	}
	node = map[string]string{"big": regexp.MustCompile(`#(t\d+)\b`).FindStringSubmatch(plans[0].Text)[1], "small": "cart"}
	d, paths = startPlanDaemonEnv(t, map[string]string{"TALK_LOG_LEVEL": "debug"}, plans...)
	waitAnalysed(t, newMCPClient(d), len(plans))
	return plans, node, d, paths
}
