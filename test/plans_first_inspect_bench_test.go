package test

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"talkd/internal/werkbaum/gen"
	"talkd/internal/werkbaum/nodebench"
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
//     to the answer (Linux: /proc; 10 ms ticks), start-up included;
//   - node-ms, node-cpu-ms: the same JS under warm Node (node-bench.js --serve, warmed on
//     the plan: W.call('inspect'), the median of three calls), timed right before each
//     op, so that both sides see the same load on a shared machine;
//   - cold-ratio, cold-cpu-ratio: the first inspect's round trip ÷ Node's wall time, and
//     the daemon's CPU since its start ÷ Node's CPU, per op (the means of the ops').
//
// Without node installed the Node figures are left out. The same JS under Node by hand:
// node internal/werkbaum/testdata/bench/node-bench.js /tmp/p10000.werkbaum.
func BenchmarkFirstInspect10k(b *testing.B) {
	text := gen.Plan(10000, 1)
	node := startWarmNode(b, text)
	for _, c := range []struct{ name, args string }{
		{"compact", `{"plan":"big"}`},
		{"path", `{"plan":"big","include":["path"],"detail":"full"}`},
	} {
		b.Run(c.name, func(b *testing.B) {
			var cold, persisted, coldCPU, persistedCPU, hit, nodeMS, nodeCPU, ratio, cpuRatio []float64
			for b.Loop() {
				if node != nil {
					ms, cpu := node.inspect(b, text)
					nodeMS, nodeCPU = append(nodeMS, ms), append(nodeCPU, cpu)
				}
				dir := b.TempDir()
				path := filepath.Join(dir, "big.werkbaum")
				if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
					b.Fatal(err)
				}
				cfg := plansConfig(map[string]string{"big": path})
				d := startDaemon(b, daemonOptions{Config: cfg})
				ms, cpu := firstInspect(b, d, c.args)
				cold, coldCPU = append(cold, ms), append(coldCPU, cpu)
				if node != nil {
					ratio, cpuRatio = append(ratio, ms/nodeMS[len(nodeMS)-1]), append(cpuRatio, cpu/nodeCPU[len(nodeCPU)-1])
				}
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
			b.Logf("cold %v ms (cpu %v); persisted %v ms (cpu %v); hit %v ms; warm Node %v ms (cpu %v)", cold, coldCPU, persisted, persistedCPU, hit, nodeMS, nodeCPU)
			if node != nil {
				b.ReportMetric(meanOf(nodeMS), "node-ms")
				b.ReportMetric(meanOf(nodeCPU), "node-cpu-ms")
				b.ReportMetric(meanOf(ratio), "cold-ratio")
				b.ReportMetric(meanOf(cpuRatio), "cold-cpu-ratio")
			}
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

// warmNode is talkd's JS under Node (node-bench.js --serve, the memo off), warmed on a plan.
type warmNode struct{ *nodebench.Server }

// startWarmNode starts Node on the engine's scripts and runs the inspect of text twenty
// times (its JIT optimises a function only after many calls); nil without node.
func startWarmNode(b *testing.B, text string) *warmNode {
	b.Helper()
	bin, err := exec.LookPath("node")
	if err != nil {
		b.Logf("node is not installed: no Node figures")
		return nil
	}
	n := &warmNode{nodebench.Start(b, bin, filepath.Join(repoRoot(), nodebench.Script))}
	for range 20 {
		n.Call(b, "inspect", text)
	}
	return n
}

// inspect returns the median wall and CPU time of three inspects of text, in ms.
func (n *warmNode) inspect(b *testing.B, text string) (wallMS, cpuMS float64) {
	var walls, cpus []float64
	for range 3 {
		w, c := n.Call(b, "inspect", text)
		walls, cpus = append(walls, float64(w)/1e6), append(cpus, float64(c)/1e6)
	}
	slices.Sort(walls)
	slices.Sort(cpus)
	return walls[1], cpus[1]
}
