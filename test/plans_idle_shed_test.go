package test

import (
	"context"
	"regexp"
	"strconv"
	"sync"
	"testing"

	"talkd/internal/werkbaum/gen"
)

// shedLine is the daemon's debug line after its idle release dropped the engine's cached
// answers its disk holds, the plans' outlines beside the views that stay, its runtimes
// beyond one, and the MCP door's encoded readings (cmd/talkd idle.go shedIdle).
var shedLine = regexp.MustCompile(`idle: dropped what is cheap to rebuild" outlines=(\d+) answers=(\d+) runtimes=(\d+) results=(\d+)`)

// decodedLine is the engine's debug line for each outline it decoded from a view (one it
// read back from disk, or whose outline an idle shed dropped).
var decodedLine = regexp.MustCompile(`"werkbaum: outline decoded from the view"`)

// TestIdleShedKeepsTheAnswers: once the daemon has been idle long enough to hand memory
// back, it drops the cached answers its analysis cache holds on disk, the plans' outlines
// (the engine's only: the plan store asks it for them) and the engine's idle runtimes
// beyond one. Every reading after that equals the one before: answers read back from the
// disk, the compact reading made from an outline decoded again from the view, once per
// plan, and calls that run at once with their runtimes built again.
func TestIdleShedKeepsTheAnswers(t *testing.T) {
	plans := []planFile{
		{Key: "big", Text: gen.Plan(2000, 1)},
		{Key: "small", Text: "Plan #root\n  [x] Cart #cart @jörg (S)\n  [~] Checkout #co @Müller (M) needs #cart\n"},
	}
	d, _ := startPlanDaemonEnv(t, map[string]string{"TALK_LOG_LEVEL": "debug"}, plans...)
	c := newMCPClient(d)
	ctx := context.Background()
	type reading struct {
		tool string
		args map[string]any
	}
	var readings []reading
	for _, p := range plans {
		readings = append(readings,
			reading{"werkbaum_inspect", map[string]any{"plan": p.Key}},
			reading{"werkbaum_inspect", map[string]any{"plan": p.Key, "detail": "full"}},
			reading{"werkbaum_inspect", map[string]any{"plan": p.Key, "include": []string{"path"}}},
			reading{"werkbaum_read", map[string]any{"plan": p.Key}})
	}
	readings = append(readings, reading{"plans_list", map[string]any{}})
	// Subtree readings asked two at a time: each a miss of the result cache, so the two
	// calls hold a runtime each and the engine has two to drop one of.
	pairs := [][2]reading{
		{{"werkbaum_inspect", map[string]any{"plan": "big", "id": "area138", "detail": "full"}}, {"werkbaum_inspect", map[string]any{"plan": "big", "id": "area263", "detail": "full"}}},
		{{"werkbaum_inspect", map[string]any{"plan": "big", "id": "area398", "detail": "full"}}, {"werkbaum_inspect", map[string]any{"plan": "big", "id": "area551", "detail": "full"}}},
	}
	read := func(r reading) string {
		t.Helper()
		a, err := c.call(ctx, r.tool, r.args)
		if err != nil {
			t.Fatal(err)
		}
		if a.IsError {
			t.Fatalf("%s %v failed: %s", r.tool, r.args, a.Text)
		}
		return string(a.Structured)
	}
	readPair := func(pair [2]reading) [2]string {
		t.Helper()
		var out [2]string
		var wg sync.WaitGroup
		for i := range pair {
			wg.Go(func() {
				a, err := c.call(ctx, pair[i].tool, pair[i].args)
				if err == nil && !a.IsError {
					out[i] = string(a.Structured)
				}
			})
		}
		wg.Wait()
		if out[0] == "" || out[1] == "" {
			t.Fatalf("a concurrent reading failed: %v", pair)
		}
		return out
	}

	// The summaries (analysed at start, or at the listing) make the outlines.
	waitAnalysed(t, c, len(plans))
	sheds := len(shedLine.FindAllString(d.logs(), -1))
	before := make([]string, len(readings))
	for i, r := range readings {
		before[i] = read(r)
	}
	pairsBefore := make([][2]string, len(pairs))
	for i, p := range pairs {
		pairsBefore[i] = readPair(p)
	}
	shed := waitLogged(t, d, "idle shed", shedLine, sheds)
	// The engine drops the whole-plan views its disk cache holds (written once the engine
	// has handed in no answer for a second), else their outlines.
	outlines, _ := strconv.Atoi(shed[1])
	answers, _ := strconv.Atoi(shed[2])
	if outlines+answers == 0 {
		t.Errorf("the engine's cache dropped neither outline nor answer: %s", shed[0])
	}
	// The full readings' encodings went with the answers they were made from.
	if results, _ := strconv.Atoi(shed[4]); results == 0 {
		t.Errorf("the MCP door kept its encoded readings through the idle shed: %s", shed[0])
	}
	// Whether the pairs above overlapped (and so left two runtimes) depends on timing;
	// the engine's tests hold the runtimes' drop deterministically (TestShedIdle...).
	t.Logf("idle shed: %s", shed[0])
	mark := len(d.logs())
	for i, r := range readings {
		if got := read(r); got != before[i] {
			t.Errorf("%s %v after the idle shed differs:\nbefore %.400s\nafter  %.400s", r.tool, r.args, before[i], got)
		}
	}
	for i, p := range pairs {
		if got := readPair(p); got != pairsBefore[i] {
			t.Errorf("%v at once after the idle shed differ:\nbefore %.300s\nafter  %.300s", p, pairsBefore[i], got)
		}
	}
	// The outlines were dropped, not kept elsewhere: the compact readings decoded each
	// plan's again, once (the full readings and the summaries need none).
	if n := len(decodedLine.FindAllString(d.logs()[mark:], -1)); n != len(plans) {
		t.Errorf("%d outlines decoded after the idle shed, want %d (one per plan)", n, len(plans))
	}
	// A second idle spell drops what the readings above rebuilt, and the answers hold.
	waitLogged(t, d, "idle shed", shedLine, sheds+1)
	for i, r := range readings {
		if got := read(r); got != before[i] {
			t.Errorf("%s %v after the second idle shed differs:\nbefore %.400s\nafter  %.400s", r.tool, r.args, before[i], got)
		}
	}
}
