package test

import (
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// BenchmarkVoiceSpeakToWAV measures, at the process boundary, the time from POST /speak
// to the complete WAV of a ten-word sentence in the dir: sink, with the real espeak-ng.
// Target: median < 150 ms. Reported as ms-median and ms-p90 besides ns/op.
func BenchmarkVoiceSpeakToWAV(b *testing.B) {
	if _, err := exec.LookPath("espeak-ng"); err != nil {
		b.Skip("espeak-ng not installed")
	}
	wavs := filepath.Join(b.TempDir(), "wavs")
	d := startDaemon(b, daemonOptions{Env: map[string]string{"TALK_PROVIDER": "espeak", "TALK_SINK": "dir:" + wavs}})
	body := map[string]any{"text": "The build on the main branch has finished and all tests passed.", "lang": "en", "priority": "high"}
	var times []time.Duration
	for b.Loop() {
		start := time.Now()
		status, resp := d.postJSON(b, "/speak", body, nil)
		if status != http.StatusAccepted {
			b.Fatalf("speak: %d %v", status, resp)
		}
		id := resp["id"].(string)
		for {
			if m, _ := filepath.Glob(filepath.Join(wavs, "[0-9]*-"+id+".wav")); len(m) == 1 {
				break
			}
			if time.Since(start) > 20*time.Second {
				entries, _ := os.ReadDir(wavs)
				b.Fatalf("no WAV for %s: %v", id, entries)
			}
			time.Sleep(time.Millisecond)
		}
		times = append(times, time.Since(start))
	}
	slices.Sort(times)
	b.ReportMetric(float64(times[len(times)/2].Microseconds())/1000, "ms-median")
	b.ReportMetric(float64(times[len(times)*9/10].Microseconds())/1000, "ms-p90")
}
