package test

import (
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"talkd/internal/queue/voice"
)

// voiceWaitFile waits until dir holds a complete file (final name, not a .part) for the
// utterance id and returns its path.
func voiceWaitFile(t testing.TB, d *daemon, dir, id string) string {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		if m, _ := filepath.Glob(filepath.Join(dir, "[0-9]*-"+id+".*")); len(m) == 1 {
			return m[0]
		}
		if time.Now().After(deadline) {
			entries, _ := os.ReadDir(dir)
			t.Fatalf("no file for utterance %s in %s (have %v); log:\n%s", id, dir, entries, d.logs())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// voiceHistoryEntry waits until the history has a final outcome for id.
func voiceHistoryEntry(t testing.TB, d *daemon, id string) map[string]any {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		_, body := d.getJSON(t, "/history?limit=100")
		entries, _ := body["entries"].([]any)
		for _, e := range entries {
			m, _ := e.(map[string]any)
			if m["id"] == id {
				switch m["outcome"] {
				case "queued", "speaking":
				default:
					return m
				}
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no final history entry for %s: %v", id, entries)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestVoiceEspeakDirSink speaks German and English through the real espeak-ng into a
// dir: sink and checks each WAV is valid, longer than 0.3 s and not silent.
func TestVoiceEspeakDirSink(t *testing.T) {
	if _, err := exec.LookPath("espeak-ng"); err != nil {
		t.Skip("espeak-ng not installed (.ci/run installs it: apt-get install espeak-ng sox)")
	}
	t.Parallel()
	wavs := filepath.Join(t.TempDir(), "wavs")
	d := startDaemon(t, daemonOptions{Env: map[string]string{"TALK_PROVIDER": "espeak", "TALK_SINK": "dir:" + wavs}})

	_, st := d.getJSON(t, "/status")
	v, _ := st["voice"].(map[string]any)
	if v["provider"] != "espeak" || v["sink"] != "dir:"+wavs {
		t.Fatalf("status voice %v", v)
	}

	texts := map[string]string{
		"de": "Guten Morgen. Der Build ist fertig, und alle Tests sind grün.",
		"en": "Good morning. The build has finished, and every test passed.",
	}
	ids := map[string]string{}
	for _, lang := range []string{"de", "en"} {
		status, body := d.postJSON(t, "/speak", map[string]any{"text": texts[lang], "lang": lang, "priority": "high"}, nil)
		if status != http.StatusAccepted {
			t.Fatalf("%s: %d %v", lang, status, body)
		}
		ids[lang] = body["id"].(string)
	}
	var sizes []int64
	for _, lang := range []string{"de", "en"} {
		f := voiceWaitFile(t, d, wavs, ids[lang])
		if !strings.HasSuffix(f, ".wav") {
			t.Fatalf("%s: not a .wav name: %s", lang, f)
		}
		w, err := voice.InspectWAV(f)
		if err != nil {
			t.Fatalf("%s: %v", lang, err)
		}
		if w.Duration <= 300*time.Millisecond || w.Peak < 0.05 || w.RMS < 0.005 {
			t.Errorf("%s: %s is %v long, peak %.3f, rms %.4f: too short or silent", lang, f, w.Duration, w.Peak, w.RMS)
		}
		sizes = append(sizes, w.DataBytes)
		if sox, err := exec.LookPath("sox"); err == nil {
			out, err := exec.Command(sox, "--i", "-D", f).Output()
			secs, perr := strconv.ParseFloat(strings.TrimSpace(string(out)), 64)
			if err != nil || perr != nil || secs <= 0.3 {
				t.Errorf("%s: sox --i -D says %q (%v %v)", lang, out, err, perr)
			}
		}
		if e := voiceHistoryEntry(t, d, ids[lang]); e["outcome"] != "spoken" || e["provider"] != nil && e["provider"] != "espeak" {
			t.Errorf("%s: history %v", lang, e)
		}
	}
	if sizes[0] == sizes[1] {
		t.Errorf("German and English WAVs have the same size %d", sizes[0])
	}
}
