//go:build linux

package test

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"testing"
	"time"

	"talkd/internal/werkbaum/gen"
)

// BenchmarkServingMemory is the daemon's memory while it serves plans (issue 33): one
// daemon holds the 231-node example plan, a generated 2,000- and a 10,000-node plan
// (package gen, seed 1); each gets 100 set_status writes going round 20 of its nodes (every
// write a new text), then the daemon idles for 30 s. Reports the peak resident memory
// (VmHWM) over the whole run and the resident memory after 10 s of the idle time (the
// analysis of the plan text written last still kept) and at its end. The
// writes start once the daemon has analysed the three plans at start (plans_list no longer
// says "pending"): before, the first plan's writes shared the two cores with the analyses
// of the others, which the CPU per write of the example plan counted.
// Then, per plan, the first werkbaum_inspect (the default reading) and the first write
// after the idle time (idle-inspect-ms-*, idle-write-ms-*): what the daemon's idle release
// (cmd/talkd idle.go) costs the user.
// Targets: peak ≤ 200 MB, idle ≤ 60 MB. Also reports the median write per plan and the
// daemon's CPU time per write (write-cpu-ms-*, its user and system time over the plan's 100
// writes, collections included): the price of collecting more often, and a steadier
// measure than the wall time on a shared machine. "fixed512MiB" is the earlier setting (GOMEMLIMIT=512MiB, which
// switches off the limit that follows the live heap), run in the same process for the ratio.
//
//	go test ./test -run '^$' -bench ServingMemory -benchtime 1x
func BenchmarkServingMemory(b *testing.B) {
	b.Run("tuned", func(b *testing.B) { benchServingMemory(b, nil) })
	b.Run("fixed512MiB", func(b *testing.B) { benchServingMemory(b, map[string]string{"GOMEMLIMIT": "512MiB"}) })
}

// servingPlans are the plans of issue 33's serving benchmarks: the 231-node example plan
// (from ../shared; the benchmark skips without it) and generated 2,000- and 10,000-node
// plans.
func servingPlans(b *testing.B) []planFile {
	example, err := os.ReadFile(filepath.Join(sharedDir(b), "werkbaum", "examples", "werkbaum.werkbaum"))
	if err != nil {
		b.Skipf("example plan not found (%v); set TALK_SHARED_DIR", err)
	}
	return []planFile{
		{Key: "example", Text: string(example)},
		{Key: "p2000", Text: gen.Plan(2000, 1)},
		{Key: "p10000", Text: gen.Plan(10000, 1)},
	}
}

func benchServingMemory(b *testing.B, env map[string]string) {
	plans := servingPlans(b)
	idPatterns := map[string]*regexp.Regexp{
		"example": regexp.MustCompile(`(?m)^\s*(?:[-+|=] )?(?:\[.\] )?#([a-zA-Z][a-zA-Z0-9_.-]*):`),
		"p2000":   regexp.MustCompile(`#((?:area|t)\d+)\b`),
		"p10000":  regexp.MustCompile(`#((?:area|t)\d+)\b`),
	}
	var peak, paused, idle float64
	medians, cpus := map[string]float64{}, map[string]float64{}
	firstInspects, firstWrites := map[string]float64{}, map[string]float64{}
	for range b.N {
		d, _ := startPlanDaemonEnv(b, env, plans...)
		c := newMCPClient(d)
		waitAnalysed(b, c, len(plans))
		togglers := map[string]*toggler{}
		for _, p := range plans {
			var nodes []string
			seen := map[string]bool{}
			for _, m := range idPatterns[p.Key].FindAllStringSubmatch(p.Text, -1) {
				if len(nodes) < 20 && !seen[m[1]] {
					seen[m[1]] = true
					nodes = append(nodes, m[1])
				}
			}
			if len(nodes) < 20 {
				b.Fatalf("plan %s: %d nodes with an id found, want 20", p.Key, len(nodes))
			}
			tg := newToggler(b, c, p.Key, "")
			tg.perLap = len(nodes)
			tg.statuses = [2]string{"highrisk", "progress"}
			togglers[p.Key] = tg
			took := make([]time.Duration, 100)
			cpu := cpuTime(d.cmd.Process.Pid)
			for i := range took {
				tg.node = nodes[tg.n%len(nodes)]
				start := time.Now()
				tg.write(b)
				took[i] = time.Since(start)
			}
			cpus[p.Key] += float64((cpuTime(d.cmd.Process.Pid) - cpu).Microseconds()) / 1000 / float64(len(took))
			slices.Sort(took)
			medians[p.Key] += float64(took[len(took)/2].Microseconds()) / 1000
		}
		// 10 s: within the time the idle daemon keeps the analysis of the plan text it
		// worked on last for an agent's pause (cmd/talkd modelKeep, 20 s); 30 s: after.
		time.Sleep(10 * time.Second)
		rss, _, _ := smapsRollupKB(b, d.cmd.Process.Pid)
		paused += float64(rss) / 1024
		time.Sleep(20 * time.Second)
		peak += float64(peakRSS(b, d.cmd.Process.Pid)) / 1024
		rss, _, _ = smapsRollupKB(b, d.cmd.Process.Pid)
		idle += float64(rss) / 1024
		// What the idle spell costs the user: the first inspect (the default reading) and
		// the first write of each plan after it.
		for _, p := range plans {
			start := time.Now()
			benchCall(b, c, "werkbaum_inspect", map[string]any{"plan": p.Key}, nil)
			firstInspects[p.Key] += float64(time.Since(start).Microseconds()) / 1000
			tg := togglers[p.Key]
			start = time.Now()
			tg.write(b)
			firstWrites[p.Key] += float64(time.Since(start).Microseconds()) / 1000
		}
		d.terminate(b)
	}
	b.ReportMetric(peak/float64(b.N), "peak-MB")
	b.ReportMetric(paused/float64(b.N), "idle10s-MB")
	b.ReportMetric(idle/float64(b.N), "idle30s-MB")
	for key, ms := range medians {
		b.ReportMetric(ms/float64(b.N), "write-p50-ms-"+key)
	}
	for key, ms := range cpus {
		b.ReportMetric(ms/float64(b.N), "write-cpu-ms-"+key)
	}
	for key, ms := range firstInspects {
		b.ReportMetric(ms/float64(b.N), "idle-inspect-ms-"+key)
	}
	for key, ms := range firstWrites {
		b.ReportMetric(ms/float64(b.N), "idle-write-ms-"+key)
	}
	reportTimeouts(b)
}

// waitAnalysed waits until plans_list shows n plans, none of them with its analysis
// pending (the daemon analyses its plans in the background at start), for at most a minute.
func waitAnalysed(b testing.TB, c *mcpClient, n int) {
	b.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		var list struct {
			Plans []map[string]any `json:"plans"`
		}
		a, err := c.call(context.Background(), "plans_list", map[string]any{})
		if err == nil {
			err = a.decode(&list)
		}
		if err != nil {
			b.Fatal(err)
		}
		pending := len(list.Plans) != n
		for _, row := range list.Plans {
			if row["analysis"] == "pending" {
				pending = true
			}
		}
		if !pending {
			return
		}
		if time.Now().After(deadline) {
			b.Fatalf("the plans' analyses are still pending after a minute: %v", list.Plans)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// BenchmarkIdleFirstInspect is what the daemon's idle release costs the first reading of a
// plan whose analysis was in memory before the idle spell (the price side of
// ServingMemory's idle figure): a daemon with the example plan, a generated 2,000- and a
// 10,000-node plan analyses them at start (plans_list, the summaries), then idles 10 s
// (the release comes after 3 s) and is asked for each plan's default reading
// (idle-summarised-ms-*: the whole view was cached by the engine, not yet read by anyone);
// then, after another 10 s idle, for the same again (idle-inspected-ms-*: the reading was
// answered before, so the plan store has its answer). warm-ms-* is the same reading with
// no idle spell before it, right after the second.
//
//	go test ./test -run '^$' -bench IdleFirstInspect -benchtime 1x -count 3
func BenchmarkIdleFirstInspect(b *testing.B) {
	plans := servingPlans(b)
	const idle = 10 * time.Second
	summarised, inspected, warm := map[string]float64{}, map[string]float64{}, map[string]float64{}
	read := func(c *mcpClient, key string) float64 {
		start := time.Now()
		benchCall(b, c, "werkbaum_inspect", map[string]any{"plan": key}, nil)
		return float64(time.Since(start).Microseconds()) / 1000
	}
	for range b.N {
		d, _ := startPlanDaemon(b, plans...)
		c := newMCPClient(d)
		waitAnalysed(b, c, len(plans))
		time.Sleep(idle)
		for _, p := range plans {
			summarised[p.Key] += read(c, p.Key)
		}
		time.Sleep(idle)
		for _, p := range plans {
			inspected[p.Key] += read(c, p.Key)
		}
		for _, p := range plans {
			warm[p.Key] += read(c, p.Key)
		}
		d.terminate(b)
	}
	for key := range summarised {
		b.ReportMetric(summarised[key]/float64(b.N), "idle-summarised-ms-"+key)
		b.ReportMetric(inspected[key]/float64(b.N), "idle-inspected-ms-"+key)
		b.ReportMetric(warm[key]/float64(b.N), "warm-ms-"+key)
	}
	reportTimeouts(b)
}
