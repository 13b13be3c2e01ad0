package test

import (
	"regexp"
	"slices"
	"testing"
	"time"
)

// BenchmarkInspectAfterWritePause is an agent's rhythm: write, think for a few seconds,
// read. One daemon holds the 231-node example plan and generated 2,000- and 10,000-node
// plans (package gen, seed 1), analysed at start. Per plan: a set_status write, a pause of
// 4 s (past the engine's memo time, 2 s, and the daemon's idle release, 3 s), the first
// werkbaum_inspect (pause-compact-ms-*: the default reading) and at once a write
// (quick-write-ms-*: it finds the model in the memo only if the reading made it); a pause
// and the first full reading with the base (pause-full-ms-*) and the same again at once
// (hot-full-ms-*: the answer's size, with nothing to compute); a pause and a write
// (pause-write-ms-*: the old text's model is gone either way).
//
//	go test ./test -run '^$' -bench InspectAfterWritePause -benchtime 1x -count 3
func BenchmarkInspectAfterWritePause(b *testing.B) {
	plans := servingPlans(b)
	ids := map[string]*regexp.Regexp{
		"example": regexp.MustCompile(`(?m)^\s*(?:[-+|=] )?(?:\[.\] )?#([a-zA-Z][a-zA-Z0-9_.-]*):`),
		"p2000":   regexp.MustCompile(`#(t\d+)\b`),
		"p10000":  regexp.MustCompile(`#(t\d+)\b`),
	}
	const pause = 4 * time.Second
	metrics := map[string]float64{}
	timed := func(metric string, f func()) {
		start := time.Now()
		f()
		metrics[metric] += float64(time.Since(start).Microseconds()) / 1000
	}
	for range b.N {
		d, _ := startPlanDaemon(b, plans...)
		c := newMCPClient(d)
		waitAnalysed(b, c, len(plans))
		for _, p := range plans {
			tg := newToggler(b, c, p.Key, ids[p.Key].FindStringSubmatch(p.Text)[1])
			tg.statuses = [2]string{"highrisk", "progress"}
			compact := map[string]any{"plan": p.Key}
			full := map[string]any{"plan": p.Key, "detail": "full"}
			tg.write(b)
			time.Sleep(pause)
			timed("pause-compact-ms-"+p.Key, func() { benchCall(b, c, "werkbaum_inspect", compact, nil) })
			timed("quick-write-ms-"+p.Key, func() { tg.write(b) })
			time.Sleep(pause)
			timed("pause-full-ms-"+p.Key, func() { benchCall(b, c, "werkbaum_inspect", full, nil) })
			timed("hot-full-ms-"+p.Key, func() { benchCall(b, c, "werkbaum_inspect", full, nil) })
			time.Sleep(pause)
			timed("pause-write-ms-"+p.Key, func() { tg.write(b) })
		}
		d.terminate(b)
	}
	for metric, ms := range metrics {
		b.ReportMetric(ms/float64(b.N), metric)
	}
	reportTimeouts(b)
}

// BenchmarkWriteInRhythm is the write of an agent that thinks between writes: eight
// set_status writes per plan, each 4 s after the daemon's last request (past the engine's
// memo trim and the daemon's idle release, inside its 20 s keep). "one-plan" writes the
// example plan of ../shared (231 nodes) alone; "two-plans" has it and a generated
// 2,000-node plan take turns, as two agents on two plans do. Reports the median and the
// slowest write per plan (ms).
//
//	go test ./test -run '^$' -bench WriteInRhythm -benchtime 1x -count 3
func BenchmarkWriteInRhythm(b *testing.B) {
	all := servingPlans(b)
	b.Run("one-plan", func(b *testing.B) { benchWriteInRhythm(b, all[:1]) })
	b.Run("two-plans", func(b *testing.B) { benchWriteInRhythm(b, all[:2]) })
}

func benchWriteInRhythm(b *testing.B, plans []planFile) {
	const (
		pause  = 4 * time.Second
		writes = 8
	)
	ids := map[string]*regexp.Regexp{
		"example": regexp.MustCompile(`(?m)^\s*(?:[-+|=] )?(?:\[.\] )?#([a-zA-Z][a-zA-Z0-9_.-]*):`),
		"p2000":   regexp.MustCompile(`#(t\d+)\b`),
	}
	took := map[string][]float64{}
	for range b.N {
		d, _ := startPlanDaemon(b, plans...)
		c := newMCPClient(d)
		waitAnalysed(b, c, len(plans))
		togglers := map[string]*toggler{}
		for _, p := range plans {
			tg := newToggler(b, c, p.Key, ids[p.Key].FindStringSubmatch(p.Text)[1])
			tg.statuses = [2]string{"highrisk", "progress"}
			tg.write(b) // the first write makes the text the later ones start from
			togglers[p.Key] = tg
		}
		for range writes {
			for _, p := range plans {
				time.Sleep(pause)
				start := time.Now()
				togglers[p.Key].write(b)
				took[p.Key] = append(took[p.Key], float64(time.Since(start).Microseconds())/1000)
			}
		}
		d.terminate(b)
	}
	for key, ms := range took {
		slices.Sort(ms)
		b.ReportMetric(ms[len(ms)/2], "p50-ms-"+key)
		b.ReportMetric(ms[len(ms)-1], "max-ms-"+key)
	}
	reportTimeouts(b)
}
