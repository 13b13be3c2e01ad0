package test

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestVoiceSpeechDispatcher: with a (fake) spd-say on the PATH, the speechd provider
// speaks through it with -w, so its exit ends the utterance; a text starting with "-" is
// never an option; stop kills it at once; talk voices lists its voices.
func TestVoiceSpeechDispatcher(t *testing.T) {
	t.Parallel()
	bin, seen := t.TempDir(), t.TempDir()
	voiceScript(t, filepath.Join(bin, "spd-say"), `if [ "$1" = "-L" ]; then printf 'NAME LANGUAGE VARIANT\nfrench fr none\ngerman de none\nenglish en none\n'; exit 0; fi
for a; do printf '%s|' "$a"; done >> "`+seen+`/args"; echo >> "`+seen+`/args"
case "$*" in *long*) while :; do :; done;; esac`)
	d := startDaemon(t, daemonOptions{Env: map[string]string{"TALK_PROVIDER": "speechd", "TALK_SINK": "auto", "PATH": bin}})
	_, st := d.getJSON(t, "/status")
	if v := st["voice"].(map[string]any); v["provider"] != "speechd" || v["audible"] != true {
		t.Fatalf("status voice %v", v)
	}
	r := talkAt(t, d, "", "say", "--wait", "--now", "-l", "fr", "--rate", "350", "--", "-5 degrés à Paris")
	r.want(t, 0, "say through spd-say")
	raw, _ := os.ReadFile(filepath.Join(seen, "args"))
	if got := strings.TrimSpace(string(raw)); got != "-w|-N|talkd|-l|fr|-r|100|--|-5 degrés à Paris|" {
		t.Fatalf("spd-say arguments: %q", got)
	}

	_, body := d.postJSON(t, "/speak", map[string]any{"text": "a long one", "now": true}, nil)
	id := body["id"].(string)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		_, st := d.getJSON(t, "/status")
		if sp, _ := st["queue"].(map[string]any)["speaking"].(map[string]any); sp != nil && sp["id"] == id {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the long utterance never started")
		}
	}
	start := time.Now()
	if status, _ := d.postJSON(t, "/stop", "", nil); status != http.StatusOK {
		t.Fatalf("stop: %d", status)
	}
	if e := voiceHistoryEntry(t, d, id); e["outcome"] != "stopped" || time.Since(start) > 5*time.Second {
		t.Fatalf("after stop (%v): %v", time.Since(start), e)
	}

	r = talkAt(t, d, "", "voices")
	r.want(t, 0, "talk voices")
	if !strings.Contains(r.stdout, "french") || !strings.Contains(r.stdout, "german") {
		t.Errorf("talk voices: %s", r.stdout)
	}
	status, body := d.postJSON(t, "/speak", map[string]any{"text": "x", "lang": "it"}, nil)
	if e, _ := body["error"].(map[string]any); status != http.StatusBadRequest || !strings.Contains(e["message"].(string), "de, en, fr") {
		t.Errorf("a language spd-say lacks: %d %v", status, body)
	}
}

// TestVoiceSilentPerProvider: the speak answer's warning that nothing will be heard is
// about the engine the request uses: none for speechd, which plays by itself, even when
// the default engine has no player; one for a command writing a file when only espeak-ng's
// own output can play.
func TestVoiceSilentPerProvider(t *testing.T) {
	t.Parallel()
	bin := t.TempDir()
	voiceScript(t, filepath.Join(bin, "spd-say"), `if [ "$1" = "-L" ]; then printf 'NAME LANGUAGE VARIANT\nenglish en none\n'; fi; exit 0`)
	voiceScript(t, filepath.Join(bin, "filetool"), `for a; do f="$a"; done; echo "ID3 not a wav" > "$f"`)
	voiceScript(t, filepath.Join(bin, "espeak-ng"), `case "$1" in --version) echo "eSpeak NG text-to-speech: 1.51"; exit 0;; esac
/bin/cat > /dev/null; exit 0`)
	cmd := "[[voice.commands]]\nname = \"filetool\"\nargv = [\"filetool\", \"{text}\", \"{out}\"]\n"
	for _, c := range []struct {
		defProvider, provider string
		warned                bool
		outcome               string
	}{
		{"filetool", "", true, "synthesized"},
		{"filetool", "speechd", false, "spoken"},
		{"espeak", "", false, "spoken"},
		{"espeak", "filetool", true, "synthesized"},
	} {
		d := startDaemon(t, daemonOptions{Config: "version = 1\n[voice]\nprovider = \"" + c.defProvider + "\"\n" + cmd,
			Env: map[string]string{"TALK_PROVIDER": "", "TALK_SINK": "auto", "PATH": bin}})
		req := map[string]any{"text": "can you hear me", "now": true}
		if c.provider != "" {
			req["provider"] = c.provider
		}
		status, body := d.postJSON(t, "/speak", req, nil)
		if status != http.StatusAccepted {
			t.Fatalf("default %s, provider %q: %d %v", c.defProvider, c.provider, status, body)
		}
		if w, _ := body["warning"].(string); (w != "") != c.warned {
			t.Errorf("default %s, provider %q: warning %q, want one: %v", c.defProvider, c.provider, w, c.warned)
		}
		if e := voiceHistoryEntry(t, d, body["id"].(string)); e["outcome"] != c.outcome {
			t.Errorf("default %s, provider %q: %v, want %s", c.defProvider, c.provider, e, c.outcome)
		}
	}
}
