package test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"talkd/internal/werkbaum/gen"
)

// BenchmarkCompactFirstInspect10k: the first default (compact) werkbaum_inspect of a
// 10,000-node plan (gen.Plan(10000, 1), what `werkbaum-gen 10000` prints) over a daemon
// that has just started with the plan configured (issue 33). One op starts talkd in a
// fresh HOME, sends the inspect as soon as the daemon listens (the start-up warm-up is
// then analysing the same plan: the inspect joins it), sends it again, and stops the
// daemon. Reported per op:
//
//   - first-ms: the first inspect's round trip (the engine's analysis, the summary's
//     count and the compact model of the 3.5 MB view);
//   - first-cpu-ms: the daemon's CPU time (user + system) from its start to that answer
//     (Linux /proc, 10 ms ticks), start-up included;
//   - again-ms: the same inspect sent again (every cache holds its part).
func BenchmarkCompactFirstInspect10k(b *testing.B) {
	text := gen.Plan(10000, 1)
	const args = `{"plan":"big"}`
	var first, firstCPU, again []float64
	for b.Loop() {
		dir := b.TempDir()
		path := filepath.Join(dir, "big.werkbaum")
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			b.Fatal(err)
		}
		d := startDaemon(b, daemonOptions{Config: plansConfig(map[string]string{"big": path})})
		ms, cpu := compactInspectTimed(b, d, args)
		first, firstCPU = append(first, ms), append(firstCPU, cpu)
		ms, _ = compactInspectTimed(b, d, args)
		again = append(again, ms)
		if code := d.terminate(b); code != 0 {
			b.Fatalf("talkd exited %d", code)
		}
	}
	b.Logf("first %v ms (cpu %v); again %v ms", first, firstCPU, again)
	b.ReportMetric(compactMean(first), "first-ms")
	b.ReportMetric(compactMean(firstCPU), "first-cpu-ms")
	b.ReportMetric(compactMean(again), "again-ms")
	b.ReportMetric(0, "ns/op")
}

// compactInspectTimed sends werkbaum_inspect with these arguments and returns its round
// trip and the daemon's CPU time so far, both in ms.
func compactInspectTimed(b *testing.B, d *daemon, args string) (ms, cpuMS float64) {
	b.Helper()
	start := time.Now()
	r := rpcPost(b, d, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"werkbaum_inspect","arguments":`+args+`}}`, nil)
	ms = float64(time.Since(start).Microseconds()) / 1000
	if r.status != 200 || !strings.Contains(r.raw, `"structuredContent"`) || strings.Contains(r.raw, `"isError":true`) {
		b.Fatalf("inspect: %d %.300s", r.status, r.raw)
	}
	return ms, compactProcessCPUms(d.cmd.Process.Pid)
}

// compactProcessCPUms is a process's user + system time in ms (Linux /proc; 0 elsewhere).
func compactProcessCPUms(pid int) float64 {
	raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	// The fields after the command's closing parenthesis; utime and stime are 14 and 15.
	f := strings.Fields(string(raw[strings.LastIndexByte(string(raw), ')')+2:]))
	ut, _ := strconv.ParseFloat(f[11], 64)
	st, _ := strconv.ParseFloat(f[12], 64)
	return (ut + st) * 10 // USER_HZ is 100 on Linux
}

func compactMean(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}
