package test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestVoiceMCPSpeakFields: the MCP speak tool takes voice, rate, pitch, volume and any
// language like /speak (same admission), cuts long texts and says so, names a field out
// of range, and warns when nothing can be heard.
func TestVoiceMCPSpeakFields(t *testing.T) {
	t.Parallel()
	bin, seen := t.TempDir(), t.TempDir()
	voiceScript(t, filepath.Join(bin, "saytool"), `echo "$@" >> "`+seen+`/args"`)
	cfg := `version = 1
[voice]
provider = "saytool"
[voice.agents]
"@jörg" = "jorg-voice"
[rules.rate_limit]
normal = "0s"
[[voice.commands]]
name = "saytool"
argv = ["saytool", "{lang}", "{voice}", "{rate}", "{pitch}", "{volume}"]
stdin = true
`
	d := startDaemon(t, daemonOptions{Config: cfg, Env: map[string]string{"TALK_PROVIDER": "", "PATH": bin}})
	c := newMCPClient(d)
	c.headers = map[string]string{"X-Talk-Agent": "@jörg"}

	a := c.must(t, "speak", map[string]any{"text": "Olá", "lang": "pt-BR", "rate": 120, "pitch": 60, "volume": 80})
	if a.IsError || a.Map["status"] != "queued" {
		t.Fatalf("speak with prosody: %+v", a)
	}
	voiceHistoryEntry(t, d, a.Map["id"].(string))
	long := strings.Repeat("Das ist ein Satz. ", 60)
	a = c.must(t, "speak", map[string]any{"text": long, "voice": "anna"})
	if a.IsError || a.Map["shortened_from"] != float64(len(strings.TrimSpace(long))) {
		t.Fatalf("long text: %+v", a)
	}
	voiceHistoryEntry(t, d, a.Map["id"].(string))
	raw, _ := os.ReadFile(filepath.Join(seen, "args"))
	if got := string(raw); got != "pt-BR jorg-voice 120 60 80\nen anna 175 50 100\n" {
		t.Fatalf("engine arguments:\n%s", got)
	}
	if a = c.must(t, "speak", map[string]any{"text": "x", "volume": 500}); !a.IsError || !strings.Contains(a.Text, "volume") || !strings.Contains(a.Text, "1 and 200") {
		t.Fatalf("volume out of range: %+v", a)
	}

	silent := startDaemon(t, daemonOptions{Env: map[string]string{"TALK_SINK": "auto", "PATH": t.TempDir()}})
	a = newMCPClient(silent).must(t, "speak", map[string]any{"text": "anyone there?"})
	if a.IsError || !strings.Contains(a.Text, "warning") || !strings.Contains(a.Text, "no audio player") {
		t.Fatalf("speak without a player: %+v", a)
	}
}
