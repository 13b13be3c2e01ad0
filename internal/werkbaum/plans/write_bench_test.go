package plans

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"talkd/internal/config"
	"talkd/internal/queue"
	"talkd/internal/werkbaum"
	"talkd/internal/werkbaum/gen"
)

// BenchmarkWriteNewText is one agent write through the service, without HTTP: a
// werkbaum_set_status on the base the last write answered, going round 20 nodes and
// setting the other of highrisk and progress on each lap, so that no text comes back
// within 40 writes and every write analyses a text the engine has not seen (issue 33's
// measure of a write's latency; the daemon's is BenchmarkServingMemory in test/). The
// engine, the journal with its fsyncs, the atomic file save and the settle are all real.
// Reports the CPU time of the process per write beside the wall time (the machine is
// shared); -cpuprofile and -memprofile take a write apart.
//
//	go test ./internal/werkbaum/plans -run '^$' -bench WriteNewText -benchtime 100x -benchmem
func BenchmarkWriteNewText(b *testing.B) {
	example, err := os.ReadFile(filepath.Join(sharedDirOf(b), "werkbaum", "examples", "werkbaum.werkbaum"))
	if err != nil {
		b.Skipf("example plan not found (%v); set TALK_SHARED_DIR", err)
	}
	for _, c := range []struct {
		name, text string
		ids        *regexp.Regexp
	}{
		{"example", string(example), regexp.MustCompile(`(?m)^\s*(?:[-+|=] )?(?:\[.\] )?#([a-zA-Z][a-zA-Z0-9_.-]*):`)},
		{"p10000", gen.Plan(10000, 1), regexp.MustCompile(`#((?:area|t)\d+)\b`)},
	} {
		b.Run(c.name, func(b *testing.B) { benchWriteNewText(b, c.text, c.ids) })
	}
}

func benchWriteNewText(b *testing.B, text string, ids *regexp.Regexp) {
	var nodes []string
	seen := map[string]bool{}
	for _, m := range ids.FindAllStringSubmatch(text, -1) {
		if len(nodes) < 20 && !seen[m[1]] {
			seen[m[1]] = true
			nodes = append(nodes, m[1])
		}
	}
	if len(nodes) < 20 {
		b.Fatalf("%d nodes with an id found, want 20", len(nodes))
	}
	dir := b.TempDir()
	path := filepath.Join(dir, "plan.werkbaum")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		b.Fatal(err)
	}
	eng := testEngine(b, werkbaum.Options{})
	svc, err := New(Options{Plans: []config.Plan{{Key: "plan", Path: path, Lang: "en"}}, Engine: eng,
		DB: Bolt(stateDB(b, dir)), Lanes: &queue.Lanes{}})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { svc.Close() })
	ctx := context.Background()
	snap, err := svc.Read(ctx, "plan")
	if err != nil {
		b.Fatal(err)
	}
	// The agent has read the plan: its analysis is what a read leaves behind.
	if _, err := svc.Inspect(ctx, "plan", werkbaum.InspectOptions{}); err != nil {
		b.Fatal(err)
	}
	base := snap.Base
	statuses := [2]string{"highrisk", "progress"}
	nonce := time.Now().UnixNano()
	cpu0 := processCPU()
	k := 0
	for b.Loop() {
		res, err := svc.Write(ctx, "plan", WriteRequest{Tool: "werkbaum_set_status", RequestID: fmt.Sprintf("w-%d-%d", nonce, k),
			ArgsHash: "h", Base: base, Verb: werkbaum.SetStatus{ID: nodes[k%len(nodes)], Status: statuses[(k/len(nodes))%2]},
			Author: Author{Client: "local", Agent: "bench"}})
		if err != nil {
			b.Fatal(err)
		}
		if !res.Changed {
			b.Fatalf("write %d changed nothing", k)
		}
		base = res.Base
		k++
	}
	b.ReportMetric(float64((processCPU()-cpu0).Microseconds())/1000/float64(b.N), "cpu-ms/op")
}

// sharedDirOf is the folder of the upstream contracts: $TALK_SHARED_DIR, else ../shared
// beside the module root.
func sharedDirOf(tb testing.TB) string {
	if dir := os.Getenv("TALK_SHARED_DIR"); dir != "" {
		return dir
	}
	wd, err := os.Getwd()
	if err != nil {
		tb.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(wd, "go.mod")); err == nil {
			return filepath.Join(filepath.Dir(wd), "shared")
		}
		parent := filepath.Dir(wd)
		if parent == wd {
			tb.Fatal("go.mod not found above the test")
		}
		wd = parent
	}
}
