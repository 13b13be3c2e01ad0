package test

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// alsaFailure is what aplay prints on a machine without a sound card (Debian, 1.2).
const alsaFailure = `echo "ALSA lib confmisc.c:855:(parse_card) cannot find card '0'" >&2
echo "ALSA lib conf.c:5204:(_snd_config_evaluate) function snd_func_card_inum returned error: No such file or directory" >&2
echo "ALSA lib pcm.c:2666:(snd_pcm_open_noupdate) Unknown PCM default" >&2
echo "aplay: main:831: audio open error: No such file or directory" >&2
exit 1`

// noSoundCardPath is a PATH with real espeak-ng, a paplay that finds no sound server and
// an aplay that finds no sound card until the file card appears in dir (then it keeps
// what it plays as played.wav).
func noSoundCardPath(t *testing.T) (bin, dir string) {
	t.Helper()
	bin, dir = t.TempDir(), t.TempDir()
	voiceLink(t, bin, "espeak-ng")
	voiceScript(t, filepath.Join(bin, "paplay"), `echo "Connection failure: Connection refused" >&2; echo "pa_context_connect() failed: Connection refused" >&2; exit 1`)
	voiceScript(t, filepath.Join(bin, "aplay"), `if [ -e "`+dir+`/card" ]; then for a; do f="$a"; done; /bin/cp "$f" "`+dir+`/played.wav"; exit 0; fi
`+alsaFailure)
	return bin, dir
}

// TestVoiceNoSoundCard: on a machine without a sound card every player fails; the
// announcement ends failed with a short reason a person understands (the raw ALSA output
// only in the debug log), /status turns "audible": false from that first failure on,
// talk say and talk status warn; once a player works again (a card appears) the next
// announcement is spoken by the next player in line and /status is audible again.
func TestVoiceNoSoundCard(t *testing.T) {
	t.Parallel()
	bin, dir := noSoundCardPath(t)
	d := startDaemon(t, daemonOptions{Env: map[string]string{"TALK_PROVIDER": "espeak", "TALK_SINK": "auto", "PATH": bin, "TALK_LOG_LEVEL": "debug"}})
	_, st := d.getJSON(t, "/status")
	if v := st["voice"].(map[string]any); v["audible"] != true || v["sink"] != "paplay" || !strings.Contains(v["sink_reason"].(string), "when it fails: aplay") {
		t.Fatalf("status voice before any play: %v", v)
	}

	status, body := d.postJSON(t, "/speak", map[string]any{"text": "is anyone there", "now": true}, nil)
	if status != http.StatusAccepted {
		t.Fatalf("speak: %d %v", status, body)
	}
	const want = "no audio device: paplay could not reach the sound server; aplay could not open a sound card"
	e := voiceHistoryEntry(t, d, body["id"].(string))
	if e["outcome"] != "failed" || e["reason"] != want {
		t.Fatalf("history: %v, want failed with %q", e, want)
	}
	_, st = d.getJSON(t, "/status")
	if v := st["voice"].(map[string]any); v["audible"] != false || v["silent"] != want {
		t.Fatalf("status voice after the failure: %v", v)
	}
	if logs := d.logs(); !strings.Contains(logs, "Unknown PCM default") || !strings.Contains(logs, "level=DEBUG") {
		t.Errorf("the raw ALSA output is not in the debug log:\n%s", logs)
	}
	wantTalkWarnsSilence(t, d, "no audio device")
	r := talkAt(t, d, "", "say", "--now", "--wait", "still no card")
	r.want(t, 10, "talk say --wait without a sound card")
	if !strings.Contains(r.stderr, "failed (no audio device: ") {
		t.Errorf("talk say --wait stderr: %q", r.stderr)
	}

	if err := os.WriteFile(filepath.Join(dir, "card"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	r = talkAt(t, d, "", "say", "--now", "--wait", "now you hear me")
	r.want(t, 0, "talk say --wait once aplay works")
	if _, err := os.Stat(filepath.Join(dir, "played.wav")); err != nil {
		t.Fatalf("aplay, the next player after paplay, did not play: %v", err)
	}
	_, st = d.getJSON(t, "/status")
	if v := st["voice"].(map[string]any); v["audible"] != true || v["silent"] != nil {
		t.Fatalf("status voice after a successful play: %v", v)
	}
	if !strings.Contains(d.logs(), "audio device reachable again") {
		t.Errorf("no log line for the device coming back:\n%s", d.logs())
	}
	r = talkAt(t, d, "", "status")
	if strings.Contains(r.stdout, "WARNING") {
		t.Errorf("talk status still warns:\n%s", r.stdout)
	}
}

// TestVoiceEngineFailureIsShort: an engine that fails with pages of diagnostics leaves a
// one-line reason in the history, and the whole output in the debug log.
func TestVoiceEngineFailureIsShort(t *testing.T) {
	t.Parallel()
	bin := t.TempDir()
	voiceScript(t, filepath.Join(bin, "noisy"), `i=0; while [ $i -lt 40 ]; do echo "onnxruntime: cannot load model de_DE-thorsten für @jörg, line $i" >&2; i=$((i+1)); done; exit 1`)
	cfg := "version = 1\n[[voice.commands]]\nname = \"noisy\"\nargv = [\"noisy\", \"{text}\", \"{out}\"]\n[[voice.commands]]\nname = \"noisyself\"\nargv = [\"noisy\", \"{text}\"]\n"
	d := startDaemon(t, daemonOptions{Config: cfg, Env: map[string]string{"PATH": bin + ":" + os.Getenv("PATH"), "TALK_LOG_LEVEL": "debug"}})
	for _, provider := range []string{"noisy", "noisyself"} {
		_, body := d.postJSON(t, "/speak", map[string]any{"text": "hallo", "provider": provider, "now": true}, nil)
		e := voiceHistoryEntry(t, d, body["id"].(string))
		reason, _ := e["reason"].(string)
		if e["outcome"] != "failed" || len([]rune(reason)) > 230 || !strings.Contains(reason, "exit status 1") || strings.Contains(reason, "line 3") {
			t.Errorf("%s: %d characters of reason: %v", provider, len([]rune(reason)), e)
		}
	}
	if !strings.Contains(d.logs(), "level=DEBUG") || !strings.Contains(d.logs(), "line 3") {
		t.Errorf("the engine's whole output is not in the debug log:\n%s", d.logs())
	}
}
