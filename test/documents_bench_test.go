package test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// BenchmarkDocumentPatchOneLine: an editor's PATCH of one line on a 231-node plan against
// a live talkd over loopback HTTP — the document door (admission, decoding, problem
// rendering), the store (lane, journal, atomic write, version record) and the line
// rules — and, on the same daemon in the same run for the ratio, an agent's
// werkbaum_set_status of one node (the MCP path with the engine's guards). The editor's
// shadow moves on in the benchmark from its own op, as the editor's does; p50-ms is the
// median round trip (issue 18's target for the PATCH: ≤ 5 ms).
//
//	go test ./test -run '^$' -bench DocumentPatchOneLine -benchtime=300x
func BenchmarkDocumentPatchOneLine(b *testing.B) {
	d, _ := startPlanDaemon(b, planFile{Key: "p", Text: generatedPlan(10, 22)})
	mcp := newMCPClient(d)
	path := docPathOf(b, d, mcp, "p")
	c := newDocHTTP(d, nil)
	ctx := context.Background()
	report := func(b *testing.B, times []time.Duration) {
		sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
		b.ReportMetric(float64(times[len(times)/2].Microseconds())/1000, "p50-ms")
		b.ReportMetric(float64(times[len(times)*9/10].Microseconds())/1000, "p90-ms")
	}
	b.Run("patch", func(b *testing.B) {
		ed := newDocEditor(c, path, "bench", "Bench")
		if err := ed.load(ctx); err != nil {
			b.Fatal(err)
		}
		lines := strings.Split(ed.shadow, "\n")
		if n := strings.Count(ed.shadow, "#e"); n < 220 {
			b.Fatalf("the plan has %d nodes", n+1)
		}
		var times []time.Duration
		i := 0
		for b.Loop() {
			i++
			idx := 3 + i%200
			line := lines[idx]
			open, end := strings.Index(line, "["), strings.Index(line, "]")
			box := "[x]"
			if line[open:end+1] == "[x]" {
				box = "[~]"
			}
			line = line[:open] + box + line[end+1:]
			start := time.Now()
			a, err := ed.patch(ctx, []docOp{{Op: "replace", Index: idx, Count: 1, Lines: []string{line}}}, false)
			times = append(times, time.Since(start))
			if err != nil || a.Status != http.StatusOK {
				b.Fatalf("PATCH %d: %v %s", i, err, a)
			}
			lines[idx] = line
			ed.shadow = strings.Join(lines, "\n")
			ed.version = uint64(a.Map["version"].(float64))
		}
		report(b, times)
	})
	b.Run("set_status", func(b *testing.B) {
		// Start from done, so every measured call is a change (progress, done, …).
		var w0 writeAnswer
		mcp.ok(b, "werkbaum_set_status", writeArgs("p", mcp.read(b, "p").Base, "bench-0", map[string]any{"id": "e1.t1", "status": "done"}), &w0)
		base := w0.Base
		var times []time.Duration
		i := 0
		for b.Loop() {
			i++
			status := []string{"done", "progress"}[i%2] // every call a change
			start := time.Now()
			var w writeAnswer
			mcp.ok(b, "werkbaum_set_status", writeArgs("p", base, fmt.Sprintf("bench-%d", i),
				map[string]any{"id": "e1.t1", "status": status}), &w)
			times = append(times, time.Since(start))
			if !w.Changed {
				b.Fatalf("set_status %d changed nothing", i)
			}
			base = w.Base
		}
		report(b, times)
	})
}

// BenchmarkDocumentIdleWaiters: 1,000 editors long-polling one document's feed against a
// live talkd: the daemon's extra resident memory 4 s after they connected (held-MB: the
// polls plus the garbage their connecting left, not yet collected) and after 5 s more of
// nothing happening (held-idle-MB, when the idle release has run: what the waiting polls
// themselves hold), its CPU time in the 5 s after that (idle waiters must cost none), and
// how long one agent write takes to answer all of them (issue 18's targets: ≤ 20 MB, no
// CPU). One run is one measurement:
//
//	go test ./test -run '^$' -bench DocumentIdleWaiters -benchtime=1x
func BenchmarkDocumentIdleWaiters(b *testing.B) {
	const waiters = 1000
	for b.Loop() {
		d, _ := startPlanDaemon(b, planFile{Key: "p", Text: generatedPlan(10, 22)})
		mcp := newMCPClient(d)
		path := docPathOf(b, d, mcp, "p")
		cur := mcp.read(b, "p").Base.Revision
		pid := d.cmd.Process.Pid
		tr := &http.Transport{MaxIdleConnsPerHost: waiters}
		client := &http.Client{Transport: tr, Timeout: 60 * time.Second}
		defer tr.CloseIdleConnections()
		time.Sleep(500 * time.Millisecond)
		rss0 := faultRSS(b, pid)

		answered := make(chan int, waiters)
		var woken sync.WaitGroup
		for range waiters {
			woken.Add(1)
			go func() {
				defer woken.Done()
				resp, err := client.Get(fmt.Sprintf("%s%s/changes?since=%d&wait=30", d.URL, path, cur))
				if err != nil {
					answered <- 0
					return
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				answered <- resp.StatusCode
			}()
		}
		time.Sleep(4 * time.Second) // all connected and held
		if len(answered) > 0 {
			b.Fatalf("%d polls answered before any write", len(answered))
		}
		rss1 := faultRSS(b, pid)
		time.Sleep(5 * time.Second)
		rss2 := faultRSS(b, pid) // after the idle release of memory (cmd/talkd/idle.go)
		// The CPU of the waiting itself, after the release (which costs a few ms once).
		cpu0 := cpuTime(pid)
		time.Sleep(5 * time.Second)
		cpu1 := cpuTime(pid)

		start := time.Now()
		mcp.ok(b, "werkbaum_set_status", writeArgs("p", mcp.read(b, "p").Base, "wake-all", map[string]any{"id": "e1", "status": "done"}), nil)
		woken.Wait()
		all := time.Since(start)
		close(answered)
		ok := 0
		for st := range answered {
			if st == http.StatusOK {
				ok++
			}
		}
		if ok != waiters {
			b.Fatalf("%d of %d polls were answered 200 after the write", ok, waiters)
		}
		b.ReportMetric(float64(rss1-rss0)/1024, "held-MB")
		b.ReportMetric(float64(rss2-rss0)/1024, "held-idle-MB")
		b.ReportMetric(float64(cpu1-cpu0)/float64(time.Millisecond)/5, "idle-cpu-ms/s")
		b.ReportMetric(float64(all.Milliseconds()), "wake-all-ms")
	}
}
