package werkbaum

import (
	"context"
	"testing"
	"time"

	"talkd/internal/werkbaum/gen"
)

// BenchmarkFirstInspectPersisted10k: the engine's first InspectJSON (the whole view) of the
// 10,000-node plan (gen.Plan(10000, 1)) with empty memory caches, interleaved in one run:
// "cold" analyses it (a warm runtime, no memo: what a fresh daemon does), "persisted"
// reads it back from a disk cache that a previous engine filled. cpu-ms is the process's
// CPU time for the call. The daemon's view of the same: BenchmarkFirstInspect10k in test/.
//
//	go test -run '^$' -bench FirstInspectPersisted10k -benchtime 5x ./internal/werkbaum
func BenchmarkFirstInspectPersisted10k(b *testing.B) {
	ctx := context.Background()
	text := gen.Plan(10000, 1)
	dir := b.TempDir()
	fill, err := OpenPersist(PersistOptions{Dir: dir, MaxBytes: 256 << 20})
	if err != nil {
		b.Fatal(err)
	}
	want, err := newPersistBenchEngine(b, Options{Persist: fill}).InspectJSON(ctx, text, InspectOptions{})
	if err != nil {
		b.Fatal(err)
	}
	if err := fill.Close(ctx); err != nil {
		b.Fatal(err)
	}
	cold := newPersistBenchEngine(b, Options{CacheEntries: -1})
	if _, err := cold.InspectJSON(ctx, text, InspectOptions{}); err != nil { // warm the runtime
		b.Fatal(err)
	}
	var coldWall, coldCPU, diskWall, diskCPU time.Duration
	for b.Loop() {
		start, startCPU := time.Now(), cpuNow()
		if _, err := cold.InspectJSON(ctx, text, InspectOptions{}); err != nil {
			b.Fatal(err)
		}
		coldWall, coldCPU = coldWall+time.Since(start), coldCPU+cpuNow()-startCPU

		b.StopTimer()
		p, err := OpenPersist(PersistOptions{Dir: dir, MaxBytes: 256 << 20})
		if err != nil {
			b.Fatal(err)
		}
		if !p.waitReady(ctx) {
			b.Fatal(p.disabled)
		}
		e := newPersistBenchEngine(b, Options{Persist: p})
		b.StartTimer()
		start, startCPU = time.Now(), cpuNow()
		got, err := e.InspectJSON(ctx, text, InspectOptions{})
		if err != nil {
			b.Fatal(err)
		}
		diskWall, diskCPU = diskWall+time.Since(start), diskCPU+cpuNow()-startCPU
		b.StopTimer()
		if string(got) != string(want) || p.Stats().FromDisk != 1 {
			b.Fatalf("not the persisted answer: %+v", p.Stats())
		}
		p.Close(ctx)
		b.StartTimer()
	}
	n := float64(b.N) * 1e6
	b.ReportMetric(float64(coldWall)/n, "cold-ms")
	b.ReportMetric(float64(coldCPU)/n, "cold-cpu-ms")
	b.ReportMetric(float64(diskWall)/n, "persisted-ms")
	b.ReportMetric(float64(diskCPU)/n, "persisted-cpu-ms")
	b.ReportMetric(float64(len(want))/1e6, "answer-MB")
	b.ReportMetric(0, "ns/op")
}

func newPersistBenchEngine(b *testing.B, opts Options) *Engine {
	opts.Runtimes, opts.Timeout = 1, benchTimeout
	e, err := NewEngine(opts)
	if err != nil {
		b.Fatal(err)
	}
	return e
}
