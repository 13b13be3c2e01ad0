package test

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"talkd/internal/werkbaum/gen"
)

// saveLikeAnEditor replaces the file the way most editors save: a new file renamed over
// the old one.
func saveLikeAnEditor(t testing.TB, path, text string) {
	t.Helper()
	tmp := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".swp")
	if err := os.WriteFile(tmp, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// TestOutsideEditWakesTheFeed: an editor's save outside talkd reaches a parked long poll of
// the plan's document without any other request (the follower reads the changed file), as
// an UPDATED version with no client, within seconds rather than at the end of the wait.
func TestOutsideEditWakesTheFeed(t *testing.T) {
	t.Parallel()
	d, paths := startPlanDaemon(t, planFile{Key: "p", Text: docPlanText})
	mcp := newMCPClient(d)
	path := docPathOf(t, d, mcp, "p")
	c := newDocHTTP(d, nil)
	cur := mcp.read(t, "p").Base.Revision

	polled := c.parkedPoll(path, cur)
	edited := strings.Replace(docPlanText, "[ ] #b", "[x] #b", 1)
	saveLikeAnEditor(t, paths["p"], edited)
	start := time.Now()
	var a docAnswer
	select {
	case a = <-polled:
	case <-time.After(15 * time.Second):
		t.Fatal("the parked poll was not woken by the outside edit")
	}
	el := time.Since(start)
	if el > 10*time.Second {
		t.Errorf("the poll was woken %v after the save", el)
	}
	t.Logf("the parked poll was woken %v after the save", el) // docs/bench-werkbaum.md, eleventh round
	var feed docFeed
	a.decode(t, &feed)
	if a.Status != http.StatusOK || feed.CurrentVersion != cur+1 || len(feed.Events) != 1 ||
		feed.Events[0].ChangeType != "UPDATED" || feed.Events[0].ClientID != "" ||
		len(feed.Ops) != 1 || feed.Ops[0].Lines[0] != "  - [x] #b: Beta (S) @Müller" {
		t.Fatalf("the woken poll: %s", a)
	}
	if logs := d.logs(); !strings.Contains(logs, "a change made outside talkd is a new version") {
		t.Errorf("no log line of the outside change:\n%s", logs)
	}
	if got := mcp.read(t, "p"); got.Base.Revision != cur+1 {
		t.Errorf("an agent's read after the edit: revision %d, want %d", got.Base.Revision, cur+1)
	}
}

// BenchmarkPlanInspect10kAfterOutsideEdit: the first werkbaum_inspect of the generated
// 10,000-node plan after a save outside talkd, over loopback HTTP (the answer read, not
// decoded). "asked-at-once" asks right after the save, so the call analyses the new text
// itself; "four-agents-at-once" has four clients ask at the same moment right after the
// save (one op: until all four have their answer), which share one analysis;
// "asked-after-2s" asks after a pause of 2 s (a person switching from the editor to the
// agent), by which time the follower has read and analysed the new text. Only the calls
// are timed; daemon-cpu-ms/op is the daemon's CPU during them (clock ticks of 10 ms).
func BenchmarkPlanInspect10kAfterOutsideEdit(b *testing.B) {
	text := gen.Plan(10000, 1)
	d, paths := startPlanDaemon(b, planFile{Key: "big", Text: text})
	inspect := func() error {
		_, err := postInspect(d.URL+"/mcp", "big", nil)
		return err
	}
	if err := inspect(); err != nil {
		b.Fatal(err)
	}
	round := 0
	for _, c := range []struct {
		name    string
		pause   time.Duration
		clients int
	}{{"asked-at-once", 0, 1}, {"four-agents-at-once", 0, 4}, {"asked-after-2s", 2 * time.Second, 1}} {
		b.Run(c.name, func(b *testing.B) {
			var cpu time.Duration
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				round++
				saveLikeAnEditor(b, paths["big"], text+fmt.Sprintf("%%%% edit %d\n", round))
				time.Sleep(c.pause)
				b.StartTimer()
				cpu0 := cpuTime(d.cmd.Process.Pid)
				errs := make(chan error, c.clients)
				var wg sync.WaitGroup
				for range c.clients {
					wg.Go(func() { errs <- inspect() })
				}
				wg.Wait()
				cpu += cpuTime(d.cmd.Process.Pid) - cpu0
				close(errs)
				for err := range errs {
					if err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "daemon-cpu-ms/op")
		})
	}
}
