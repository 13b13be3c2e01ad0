package plans

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"talkd/internal/config"
	"talkd/internal/queue"
	"talkd/internal/werkbaum"
	"talkd/internal/werkbaum/gen"
)

// benchDoc is a store with one generated plan of n nodes on a real bbolt file.
func benchDoc(b *testing.B, n int) (*Service, string, *werkbaum.Engine) {
	b.Helper()
	dir := b.TempDir()
	path := filepath.Join(dir, "plan.werkbaum")
	if err := os.WriteFile(path, []byte(gen.Plan(n, 1)), 0o644); err != nil {
		b.Fatal(err)
	}
	db, eng := stateDB(b, dir), testEngine(b, werkbaum.Options{})
	svc, err := New(Options{Plans: []config.Plan{{Key: "p", Path: path, Lang: "en"}}, Engine: eng, DB: Bolt(db), Lanes: &queue.Lanes{}})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { svc.Close() })
	id, err := svc.DocumentID(context.Background(), "p")
	if err != nil {
		b.Fatal(err)
	}
	return svc, id, eng
}

// BenchmarkPatchOneLine is one editor PATCH replacing one line of a 231-node plan on the
// current base, in process (no HTTP): the journal's pending record and settle (with the
// version record and its text), the engine's apply, the atomic file write with its
// fsyncs. The client keeps its shadow copy as a live client does.
//
//	go test ./internal/werkbaum/plans -run '^$' -bench PatchOneLine -benchtime=200x -count=3
func BenchmarkPatchOneLine(b *testing.B) {
	svc, id, _ := benchDoc(b, 231)
	ctx := context.Background()
	d, err := svc.Document(ctx, id)
	if err != nil {
		b.Fatal(err)
	}
	lines := strings.Split(d.Content, "\n")
	shadow, version := d.Content, d.Version
	times := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		line := 1 + i%(len(lines)-2)
		op := werkbaum.LineOp{Op: "replace", Index: line, Count: 1, Lines: []string{fmt.Sprintf("%s %%%% edit %d", lines[line], i)}}
		p := ContentPatch{BaseVersion: version, Checksum: werkbaum.DocumentChecksum(shadow), ClientID: "bench", Seq: int64(i + 1), Ops: []werkbaum.LineOp{op}}
		start := time.Now()
		res, err := svc.PatchContent(ctx, id, p)
		times = append(times, time.Since(start))
		if err != nil {
			b.Fatal(err)
		}
		// The shadow moves on without the engine, so only the PATCH is timed.
		lines[line] = op.Lines[0]
		shadow, version = strings.Join(lines, "\n"), res.Version
	}
	b.StopTimer()
	b.ReportMetric(ms(pct(times, 50)), "ms-p50")
	b.ReportMetric(ms(pct(times, 90)), "ms-p90")
}

// BenchmarkFeedWake measures how soon a long-polling feed client gets a PATCH: one op is
// a waiter on the current version, then a one-line PATCH. Reported: the PATCH's own time
// (patch-ms p50) and the feed's delivery after the PATCH answered (wake-ms p50/p99,
// counted 0 when the feed was there first: the version is recorded, and its waiters
// woken, before the PATCH returns).
//
//	go test ./internal/werkbaum/plans -run '^$' -bench FeedWake -benchtime=100x -count=1
func BenchmarkFeedWake(b *testing.B) {
	svc, id, eng := benchDoc(b, 231)
	ctx := context.Background()
	d, err := svc.Document(ctx, id)
	if err != nil {
		b.Fatal(err)
	}
	shadow, version := d.Content, d.Version
	patchTimes := make([]time.Duration, 0, b.N)
	wakes := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		delivered := make(chan time.Time, 1)
		ready := make(chan struct{})
		go func(since uint64) {
			close(ready)
			feed, err := svc.Changes(ctx, id, since, 10*time.Second)
			if err != nil || feed == nil {
				panic(fmt.Sprintf("feed: %v %v", feed, err))
			}
			delivered <- time.Now()
		}(version)
		<-ready
		time.Sleep(time.Millisecond) // the waiter is parked on the channel
		p := ContentPatch{BaseVersion: version, Checksum: werkbaum.DocumentChecksum(shadow), ClientID: "bench", Seq: int64(i + 1),
			Ops: []werkbaum.LineOp{{Op: "insert", Index: 1, Lines: []string{fmt.Sprintf("%%%% line %d", i)}}}}
		start := time.Now()
		res, err := svc.PatchContent(ctx, id, p)
		answered := time.Now()
		if err != nil {
			b.Fatal(err)
		}
		at := <-delivered
		patchTimes = append(patchTimes, answered.Sub(start))
		wakes = append(wakes, max(0, at.Sub(answered)))
		shadow, _ = eng.ApplyLines(ctx, shadow, p.Ops)
		version = res.Version
	}
	b.StopTimer()
	b.ReportMetric(ms(pct(patchTimes, 50)), "patch-ms-p50")
	b.ReportMetric(ms(pct(wakes, 50)), "wake-ms-p50")
	b.ReportMetric(ms(pct(wakes, 99)), "wake-ms-p99")
}

// BenchmarkIdleWaiters parks 1,000 long-poll waiters on one document and reports the
// memory they hold (heap and goroutine stacks, after a GC; the goroutines stand for the
// HTTP handlers that wait in a server) and the CPU the process uses while they wait.
//
//	go test ./internal/werkbaum/plans -run '^$' -bench IdleWaiters -benchtime=1x
func BenchmarkIdleWaiters(b *testing.B) {
	svc, id, _ := benchDoc(b, 231)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	d, err := svc.Document(ctx, id)
	if err != nil {
		b.Fatal(err)
	}
	const waiters = 1000
	for i := 0; i < b.N; i++ {
		runtime.GC()
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		var wg sync.WaitGroup
		wctx, stop := context.WithCancel(ctx)
		for range waiters {
			wg.Add(1)
			go func() {
				defer wg.Done()
				svc.Changes(wctx, id, d.Version, time.Minute)
			}()
		}
		time.Sleep(200 * time.Millisecond) // all parked
		runtime.GC()
		var after runtime.MemStats
		runtime.ReadMemStats(&after)
		cpu0 := processCPU()
		time.Sleep(time.Second)
		cpu := processCPU() - cpu0
		stop()
		wg.Wait()
		held := (after.HeapInuse + after.StackInuse) - (before.HeapInuse + before.StackInuse)
		b.ReportMetric(float64(held)/(1<<20), "MB/1000-waiters")
		b.ReportMetric(float64(cpu)/float64(time.Millisecond), "cpu-ms/s-idle")
	}
}

func pct(ds []time.Duration, p int) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[(len(s)-1)*p/100]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
