package test

import (
	"context"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"
)

// BenchmarkDocumentPatchOneLine: an editor's PATCH of one line on a 231-node plan against
// a live talkd over loopback HTTP — the document door (admission, decoding, problem
// rendering), the store (lane, journal, atomic write, version record) and the engine's
// apply. The editor's shadow moves on in the benchmark from its own op, as the editor's
// does; p50-ms is the median round trip (issue 18's target: ≤ 5 ms).
func BenchmarkDocumentPatchOneLine(b *testing.B) {
	d, _ := startPlanDaemon(b, planFile{Key: "p", Text: generatedPlan(10, 22)})
	path := docPathOf(b, d, newMCPClient(d), "p")
	c := newDocHTTP(d, nil)
	ctx := context.Background()
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
		if strings.Contains(line, " [x] ") {
			line = strings.Replace(line, " [x] ", " [~] ", 1)
		} else {
			line = strings.Replace(line, line[strings.Index(line, "["):strings.Index(line, "]")+1], "[x]", 1)
		}
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
	sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
	b.ReportMetric(float64(times[len(times)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(times[len(times)*9/10].Microseconds())/1000, "p90-ms")
}
