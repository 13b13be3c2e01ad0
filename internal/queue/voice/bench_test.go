package voice

import (
	"context"
	"os/exec"
	"slices"
	"strconv"
	"testing"
	"time"

	"talkd/internal/config"
	"talkd/internal/queue"
)

// BenchmarkEspeakTenWords measures synthesis start to complete WAV in a dir: sink for a
// ten-word sentence with the real espeak-ng (Prepare + Play). Target: median < 150 ms.
func BenchmarkEspeakTenWords(b *testing.B) {
	if _, err := exec.LookPath("espeak-ng"); err != nil {
		b.Skip("espeak-ng not installed")
	}
	cfg := config.Voice{Provider: "espeak", Sink: "dir:" + b.TempDir(), Lang: "en", Timeout: config.Duration{Duration: 10 * time.Second}}
	v, err := New(cfg, b.TempDir(), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer v.Close()
	ctx := context.Background()
	const text = "The build on the main branch has finished and all tests passed."
	times := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		u := queue.Utterance{ID: "b" + strconv.Itoa(i), Text: text, Lang: "en"}
		start := time.Now()
		a, err := v.Prepare(ctx, u)
		if err != nil {
			b.Fatal(err)
		}
		if err := v.Play(ctx, u, a); err != nil {
			b.Fatal(err)
		}
		times = append(times, time.Since(start))
		a.Close()
	}
	b.StopTimer()
	slices.Sort(times)
	b.ReportMetric(float64(times[len(times)/2].Microseconds())/1000, "ms-median")
	b.ReportMetric(float64(times[len(times)*9/10].Microseconds())/1000, "ms-p90")
}

// BenchmarkClean measures the text cleanup of a typical agent message.
func BenchmarkClean(b *testing.B) {
	in := "## Deploy finished\n- **api**: green, see https://ci.example.com/runs/4711\n- `web`: 2 flaky tests\n```\nmake deploy\n```\nNext: run the smoke tests on staging and tell me when they pass."
	o := CleanupOptions{URLs: true, Markdown: true, MaxChars: 400}
	for b.Loop() {
		Clean(in, o)
	}
}
