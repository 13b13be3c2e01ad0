package test

import (
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"talkd/internal/queue/voice"
)

// TestVoiceLanguagesAndProsodyEspeak: with the real espeak-ng, any language it has can be
// chosen (fr), one it lacks is refused with close matches, and rate and volume change
// the sound: slower is longer, softer has a lower peak.
func TestVoiceLanguagesAndProsodyEspeak(t *testing.T) {
	if _, err := exec.LookPath("espeak-ng"); err != nil {
		t.Skip("espeak-ng not installed (.ci/run installs it: apt-get install espeak-ng sox)")
	}
	t.Parallel()
	wavs := filepath.Join(t.TempDir(), "wavs")
	d := startDaemon(t, daemonOptions{Env: map[string]string{"TALK_PROVIDER": "espeak", "TALK_SINK": "dir:" + wavs}})

	speak := func(req map[string]any) voice.WAVInfo {
		t.Helper()
		req["now"] = true
		status, body := d.postJSON(t, "/speak", req, nil)
		if status != http.StatusAccepted {
			t.Fatalf("%v: %d %v", req, status, body)
		}
		w, err := voice.InspectWAV(voiceWaitFile(t, d, wavs, body["id"].(string)))
		if err != nil {
			t.Fatal(err)
		}
		return w
	}
	fr := speak(map[string]any{"text": "Bonjour, le déploiement est terminé.", "lang": "fr"})
	if fr.Duration < 500*time.Millisecond || fr.Peak < 0.05 {
		t.Fatalf("French: %+v", fr)
	}
	text := "The nightly build for jörg has finished without errors."
	slow := speak(map[string]any{"text": text, "rate": 90})
	fast := speak(map[string]any{"text": text, "rate": 400})
	if slow.Duration < fast.Duration*2 {
		t.Errorf("rate 90 lasts %v, rate 400 %v: the rate did not reach espeak-ng", slow.Duration, fast.Duration)
	}
	soft := speak(map[string]any{"text": text, "volume": 20})
	loud := speak(map[string]any{"text": text, "volume": 200, "pitch": 80, "voice": "en-us+f3"})
	if soft.Peak*2 > loud.Peak {
		t.Errorf("volume 20 peaks at %.3f, volume 200 at %.3f", soft.Peak, loud.Peak)
	}

	for _, c := range []struct{ body, field, needle string }{
		{`{"text":"x","lang":"qq"}`, "lang", "cannot speak"},
		{`{"text":"x","lang":"fx"}`, "lang", "fr-fr"},
		{`{"text":"x","voice":"nosuchvoice"}`, "voice", "no voice"},
		{`{"text":"x","rate":20}`, "rate", "between 80 and 450"},
		{`{"text":"x","pitch":100}`, "pitch", "between 1 and 99"},
	} {
		status, body := d.postJSON(t, "/speak", c.body, nil)
		e, _ := body["error"].(map[string]any)
		if status != http.StatusBadRequest || e["field"] != c.field || !strings.Contains(e["message"].(string), c.needle) {
			t.Errorf("%s: %d %v, want field %s with %q", c.body, status, body, c.field, c.needle)
		}
	}
	r := talkAt(t, d, "", "say", "-l", "fr", "--rate", "200", "--now", "--wait", "Au revoir")
	r.want(t, 0, "talk say -l fr --wait")
}

// TestVoiceCommandPlaceholdersAndAgents: a command engine gets {voice} {rate} {pitch}
// {volume}; [voice.agents] picks the voice of an agent unless the request names one;
// a command without {out} plays by itself (its exit ends the utterance).
func TestVoiceCommandPlaceholdersAndAgents(t *testing.T) {
	t.Parallel()
	bin, seen := t.TempDir(), t.TempDir()
	voiceScript(t, filepath.Join(bin, "saytool"), `echo "$@" >> "`+seen+`/args"`)
	cfg := `version = 1
[voice]
provider = "saytool"
[voice.agents]
"@Müller" = "karl"
[[voice.commands]]
name = "saytool"
argv = ["saytool", "{lang}", "{voice}", "{rate}", "{pitch}", "{volume}", "{text}"]
`
	d := startDaemon(t, daemonOptions{Config: cfg, Env: map[string]string{"TALK_PROVIDER": "", "TALK_SINK": "null", "PATH": bin}})
	for _, c := range []struct {
		req   map[string]any
		agent string
	}{
		{map[string]any{"text": "one", "now": true}, "@Müller"},
		{map[string]any{"text": "two", "now": true, "voice": "anna", "rate": 300, "pitch": 20, "volume": 150, "lang": "pt-BR"}, "@Müller"},
		{map[string]any{"text": "three", "now": true}, "@jörg"},
	} {
		status, body := d.postJSON(t, "/speak", c.req, map[string]string{"X-Talk-Agent": c.agent})
		if status != http.StatusAccepted {
			t.Fatalf("%v: %d %v", c.req, status, body)
		}
		if e := voiceHistoryEntry(t, d, body["id"].(string)); e["outcome"] != "spoken" {
			t.Fatalf("a command that plays by itself: %v", e)
		}
	}
	raw, _ := os.ReadFile(filepath.Join(seen, "args"))
	want := "en karl 175 50 100 one\npt-BR anna 300 20 150 two\nen en 175 50 100 three\n"
	if string(raw) != want {
		t.Fatalf("command arguments:\n%s\nwant:\n%s", raw, want)
	}
}
