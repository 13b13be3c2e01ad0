package test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"talkd/internal/werkbaum/gen"
)

// BenchmarkFirstInspect10k: the first werkbaum_inspect of a 10,000-node plan (gen.Plan(10000,
// 1), what `werkbaum-gen 10000` prints) over a daemon that has just started (issue 33). One
// op starts talkd on a [[plans]] config with the plan in a fresh HOME, sends the inspect as
// soon as the daemon listens, and stops the daemon; then starts it again in the same HOME,
// whose analysis cache now holds the plan's analysis, and does the same. The inspects:
//
//   - compact: the default reading, made from the whole plan's view (3.5 MB of JSON),
//     which the start-up warm-up computes too: the inspect joins it;
//   - path: include ["path"], detail "full": a small answer (42 KB), its own analysis.
//
// Reported per op:
//
//   - cold-ms, persisted-ms: the inspect's round trip without and with the persisted
//     analysis;
//   - hit-ms: the same inspect sent again to the restarted daemon (its memory caches
//     hold the answer): the floor of a round trip of this answer;
//   - cold-cpu-ms, persisted-cpu-ms: the daemon's CPU time (user + system) from its start
//     to the answer (Linux: /proc; 10 ms ticks), start-up included.
//
// Compare with the same JS under Node in the same run:
// node internal/werkbaum/testdata/bench/node-bench.js /tmp/p10000.werkbaum.
func BenchmarkFirstInspect10k(b *testing.B) {
	text := gen.Plan(10000, 1)
	for _, c := range []struct{ name, args string }{
		{"compact", `{"plan":"big"}`},
		{"path", `{"plan":"big","include":["path"],"detail":"full"}`},
	} {
		b.Run(c.name, func(b *testing.B) {
			var cold, persisted, coldCPU, persistedCPU, hit []float64
			for b.Loop() {
				dir := b.TempDir()
				path := filepath.Join(dir, "big.werkbaum")
				if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
					b.Fatal(err)
				}
				cfg := plansConfig(map[string]string{"big": path})
				d := startDaemon(b, daemonOptions{Config: cfg})
				ms, cpu := firstInspect(b, d, c.args)
				cold, coldCPU = append(cold, ms), append(coldCPU, cpu)
				// The whole view too (the warm-up's analysis), so the stop below, which
				// writes what waits, finds it done: a restart then has what a daemon
				// that ran a while has.
				firstInspect(b, d, `{"plan":"big"}`)
				if code := d.terminate(b); code != 0 {
					b.Fatalf("talkd exited %d", code)
				}
				d2 := startDaemon(b, daemonOptions{Config: cfg, Home: d.Home})
				ms, cpu = firstInspect(b, d2, c.args)
				persisted, persistedCPU = append(persisted, ms), append(persistedCPU, cpu)
				ms, _ = firstInspect(b, d2, c.args)
				hit = append(hit, ms)
				_, st := d2.getJSON(b, "/status")
				if ac, _ := st["analysis_cache"].(map[string]any); ac["from_disk"] == 0.0 || ac["misses"] != 0.0 {
					b.Fatalf("the restarted daemon did not answer from disk: %v", ac)
				}
				d2.terminate(b)
			}
			b.Logf("cold %v ms (cpu %v); persisted %v ms (cpu %v); hit %v ms", cold, coldCPU, persisted, persistedCPU, hit)
			b.ReportMetric(meanOf(cold), "cold-ms")
			b.ReportMetric(meanOf(persisted), "persisted-ms")
			b.ReportMetric(meanOf(hit), "hit-ms")
			b.ReportMetric(meanOf(coldCPU), "cold-cpu-ms")
			b.ReportMetric(meanOf(persistedCPU), "persisted-cpu-ms")
			b.ReportMetric(0, "ns/op")
		})
	}
}

// firstInspect sends werkbaum_inspect with these arguments and returns its round trip
// and the daemon's CPU time so far, both in ms.
func firstInspect(b *testing.B, d *daemon, args string) (ms, cpuMS float64) {
	b.Helper()
	start := time.Now()
	r := rpcPost(b, d, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"werkbaum_inspect","arguments":`+args+`}}`, nil)
	ms = float64(time.Since(start).Microseconds()) / 1000
	if r.status != 200 || !strings.Contains(r.raw, `"structuredContent"`) || strings.Contains(r.raw, `"isError":true`) {
		b.Fatalf("inspect: %d %.300s", r.status, r.raw)
	}
	return ms, float64(cpuTime(d.cmd.Process.Pid).Microseconds()) / 1000
}

func meanOf(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}
