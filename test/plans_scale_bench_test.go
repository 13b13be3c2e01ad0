package test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// cpuTime is the CPU time (user + system) a process has used so far, from /proc (0
// where there is none).
func cpuTime(pid int) time.Duration {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// The fields after the command name (which may hold spaces) start after ") ".
	f := strings.Fields(string(raw[strings.LastIndexByte(string(raw), ')')+2:]))
	if len(f) < 13 {
		return 0
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * 10 * time.Millisecond // USER_HZ is 100 on Linux
}

// BenchmarkPlanWritesAcrossPlans measures whether writes on different plans scale: one
// daemon serving four small plans (41 nodes each); first one client writes one plan back
// to back, then four clients write one plan each at the same time, b.N writes per
// client in both phases. Reported: applied writes/s of each phase and their ratio
// (4plans ÷ 1plan, measured in the same run). Writes on one plan are serialised by
// design; writes on different plans share only the journal, whose concurrent records go
// into one transaction (one fsync) through the group commit.
//
//	go test ./test -run '^$' -bench PlanWritesAcrossPlans -benchtime=200x -count=3
func BenchmarkPlanWritesAcrossPlans(b *testing.B) {
	var files []planFile
	for i := range 4 {
		files = append(files, planFile{Key: fmt.Sprintf("p%d", i), Text: crashPlan(fmt.Sprintf("%%%% scale plan %d", i))})
	}
	d, _ := startPlanDaemon(b, files...)
	nonce := time.Now().UnixNano()
	// writeLoop flips node n1 of plan n times, each write on the base the last answered.
	writeLoop := func(phase int, plan string, n int) error {
		c := newMCPClient(d)
		ra, err := c.call(context.Background(), "werkbaum_read", map[string]any{"plan": plan})
		var r readAnswer
		if err == nil {
			err = ra.decode(&r)
		}
		if err != nil {
			return err
		}
		base := r.Base
		for k := range n {
			status := []string{"skeleton", "progress"}[(k+phase*n)%2] // p0 goes on from phase 1
			a, err := c.call(context.Background(), "werkbaum_set_status", writeArgs(plan, base,
				fmt.Sprintf("scale-%d-%d-%s-%d", nonce, phase, plan, k), map[string]any{"id": "n1", "status": status}))
			if err != nil {
				return err
			}
			var w writeAnswer
			if a.IsError || a.decode(&w) != nil || !w.Changed {
				return fmt.Errorf("%s write %d: %s", plan, k, a.Text)
			}
			base = w.Base
		}
		return nil
	}
	pid := d.cmd.Process.Pid
	var cpu [5]time.Duration // daemon CPU per phase
	phase := func(plans int) float64 {
		var wg sync.WaitGroup
		errs := make(chan error, plans)
		cpu0 := cpuTime(pid)
		start := time.Now()
		for i := range plans {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := writeLoop(plans, fmt.Sprintf("p%d", i), b.N); err != nil {
					errs <- err
				}
			}()
		}
		wg.Wait()
		elapsed := time.Since(start)
		cpu[plans] = cpuTime(pid) - cpu0
		close(errs)
		for err := range errs {
			b.Fatal(err)
		}
		return float64(plans*b.N) / elapsed.Seconds()
	}
	b.ResetTimer()
	one := phase(1)
	four := phase(4)
	b.StopTimer()
	b.ReportMetric(one, "1plan-writes/s")
	b.ReportMetric(four, "4plans-writes/s")
	b.ReportMetric(four/one, "ratio")
	// The daemon's CPU per applied write: where it is close to the wall time per write the
	// phase was bound by CPU (the engine's checks), not by the journal's fsyncs.
	b.ReportMetric(float64(cpu[1].Microseconds())/1000/float64(b.N), "1plan-cpu-ms/write")
	b.ReportMetric(float64(cpu[4].Microseconds())/1000/float64(4*b.N), "4plans-cpu-ms/write")
}
