package test

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"talkd/internal/queue/voice"
)

// voiceLink puts the real program name into dir (for a PATH that holds nothing else).
func voiceLink(t testing.TB, dir, name string) {
	t.Helper()
	path, err := exec.LookPath(name)
	if err != nil {
		t.Skipf("%s not installed (.ci/run installs it: apt-get install espeak-ng sox)", name)
	}
	if err := os.Symlink(path, filepath.Join(dir, name)); err != nil {
		t.Fatal(err)
	}
}

// TestVoiceNoPlayerIsNotSpoken: with no audio player on the PATH, an announcement is
// synthesized, never recorded as spoken; the answer, talk say, /status and talk status
// say so, and the startup warning names the players tried without their options.
func TestVoiceNoPlayerIsNotSpoken(t *testing.T) {
	t.Parallel()
	empty := t.TempDir()
	d := startDaemon(t, daemonOptions{Env: map[string]string{"TALK_SINK": "auto", "PATH": empty}})

	if !strings.Contains(d.logs(), `tried="pw-play, pw-cat, paplay, aplay, play, afplay, ffplay"`) || strings.Contains(d.logs(), "-nodisp") {
		t.Errorf("startup warning does not list the players plainly:\n%s", d.logs())
	}
	status, body := d.postJSON(t, "/speak", map[string]any{"text": "can you hear me", "now": true}, nil)
	if status != http.StatusAccepted || !strings.Contains(body["warning"].(string), "no audio player") {
		t.Fatalf("speak: %d %v", status, body)
	}
	e := voiceHistoryEntry(t, d, body["id"].(string))
	if e["outcome"] != "synthesized" || e["reason"] != "no_player" {
		t.Fatalf("history says %v, want synthesized (no_player)", e)
	}
	_, st := d.getJSON(t, "/status")
	v := st["voice"].(map[string]any)
	if v["audible"] != false || !strings.Contains(v["silent"].(string), "no audio player") || v["sink"] != "none" {
		t.Fatalf("status voice %v", v)
	}

	wantTalkWarnsSilence(t, d, "no audio player")
	r := talkAt(t, d, "", "say", "--now", "--wait", "still silent")
	r.want(t, 10, "talk say --wait without a player")
	if !strings.Contains(r.stderr, "synthesized (no_player)") {
		t.Errorf("talk say --wait stderr: %q", r.stderr)
	}
}

// wantTalkWarnsSilence checks that talk say warns on stderr that the announcement will
// not be heard, and that talk status leads with a WARNING line giving why.
func wantTalkWarnsSilence(t *testing.T, d *daemon, why string) {
	t.Helper()
	r := talkAt(t, d, "", "say", "--now", "is anyone there")
	r.want(t, 0, "talk say on a silent daemon")
	if !strings.Contains(r.stderr, "will not be heard") || !strings.Contains(r.stderr, why) {
		t.Errorf("talk say stderr does not warn (%s): %q", why, r.stderr)
	}
	r = talkAt(t, d, "", "status")
	r.want(t, 0, "talk status")
	if first := strings.SplitN(r.stdout, "\n", 3); len(first) < 2 || !strings.HasPrefix(first[1], "WARNING") ||
		!strings.Contains(first[1], "NOTHING IS HEARD") || !strings.Contains(first[1], why) {
		t.Errorf("talk status does not lead with the warning (%s):\n%s", why, r.stdout)
	}
}

// TestVoiceNoEngineIsNotHeard: with neither a speech engine nor a player on the PATH, the
// daemon does not call itself audible: /status says why (and lists no usable engine as
// [], not null), the admission answer and talk say warn that the announcement will not be
// heard, it fails with the hint what to install, and talk status leads with the warning.
func TestVoiceNoEngineIsNotHeard(t *testing.T) {
	t.Parallel()
	empty := t.TempDir()
	d := startDaemon(t, daemonOptions{Env: map[string]string{"TALK_PROVIDER": "auto", "TALK_SINK": "auto", "PATH": empty}})

	_, st := d.getJSON(t, "/status")
	v := st["voice"].(map[string]any)
	if v["provider"] != "none" || v["audible"] != false || !strings.Contains(fmt.Sprint(v["silent"]), "no speech engine") {
		t.Fatalf("status voice %v", v)
	}
	if list, ok := v["providers"].([]any); !ok || len(list) != 0 {
		t.Errorf("status voice providers = %#v, want []", v["providers"])
	}
	status, body := d.postJSON(t, "/speak", map[string]any{"text": "is anyone there", "now": true}, nil)
	if w, _ := body["warning"].(string); status != http.StatusAccepted || !strings.Contains(w, "no speech engine") || !strings.Contains(w, "will not be heard") {
		t.Fatalf("speak: %d %v", status, body)
	}
	e := voiceHistoryEntry(t, d, body["id"].(string))
	if e["outcome"] != "failed" || !strings.Contains(fmt.Sprint(e["error"], e["reason"]), "install espeak-ng") {
		t.Fatalf("history says %v, want failed with the install hint", e)
	}
	wantTalkWarnsSilence(t, d, "no speech engine")
}

// TestVoicePlayerOnPath: real espeak-ng synthesizes, the first player found on the PATH
// (a fake aplay that keeps the file) plays it, and only then is it spoken.
func TestVoicePlayerOnPath(t *testing.T) {
	t.Parallel()
	bin, kept := t.TempDir(), t.TempDir()
	voiceLink(t, bin, "espeak-ng")
	voiceScript(t, filepath.Join(bin, "aplay"), `for a; do f="$a"; done; /bin/cp "$f" "`+kept+`/played.wav"; echo "$@" > "`+kept+`/args"`)
	d := startDaemon(t, daemonOptions{Env: map[string]string{"TALK_PROVIDER": "espeak", "TALK_SINK": "auto", "PATH": bin}})
	_, st := d.getJSON(t, "/status")
	if v := st["voice"].(map[string]any); v["sink"] != "aplay" || v["audible"] != true {
		t.Fatalf("status voice %v", v)
	}
	r := talkAt(t, d, "", "say", "--wait", "Grüße an @jörg und @Müller")
	r.want(t, 0, "talk say --wait with a player")
	if !strings.HasPrefix(r.stdout, "queued: ") || !strings.Contains(r.stdout, "spoken: ") || r.stderr != "" {
		t.Fatalf("talk say --wait: %q / %q", r.stdout, r.stderr)
	}
	args, _ := os.ReadFile(filepath.Join(kept, "args"))
	if !strings.HasPrefix(string(args), "-q ") {
		t.Errorf("aplay ran with %q, want -q and the file", args)
	}
	w, err := voice.InspectWAV(filepath.Join(kept, "played.wav"))
	if err != nil || w.Duration < 300*time.Millisecond || w.Peak < 0.05 {
		t.Fatalf("the played file: %+v, %v", w, err)
	}
}

// TestVoiceEspeakOwnOutputNeverClaimsSilence: with no player, espeak-ng plays through its
// own audio output; when that prints the sound library's errors and exits 0 (what
// espeak-ng does without an audio device), the announcement has failed, not been spoken.
func TestVoiceEspeakOwnOutputNeverClaimsSilence(t *testing.T) {
	t.Parallel()
	bin, seen := t.TempDir(), t.TempDir()
	voiceScript(t, filepath.Join(bin, "espeak-ng"), `case "$1" in --version) echo "eSpeak NG text-to-speech: 1.51"; exit 0;; esac
echo "$@" >> "`+seen+`/args"
/bin/cat > "`+seen+`/text"
if [ -e "`+seen+`/broken" ]; then echo "ALSA lib pcm.c:2666:(snd_pcm_open_noupdate) Unknown PCM default" >&2; fi
exit 0`)
	d := startDaemon(t, daemonOptions{Env: map[string]string{"TALK_PROVIDER": "espeak", "TALK_SINK": "auto", "PATH": bin}})
	if !strings.Contains(d.logs(), "espeak-ng plays through its own audio output") {
		t.Fatalf("no warning about espeak-ng's own output:\n%s", d.logs())
	}
	_, body := d.postJSON(t, "/speak", map[string]any{"text": "first", "now": true}, nil)
	if e := voiceHistoryEntry(t, d, body["id"].(string)); e["outcome"] != "spoken" {
		t.Fatalf("espeak-ng's own output that worked: %v", e)
	}
	args, _ := os.ReadFile(filepath.Join(seen, "args"))
	if strings.Contains(string(args), "-w") || !strings.Contains(string(args), "--stdin") {
		t.Errorf("espeak-ng's own output ran with %q (no -w expected)", args)
	}
	os.WriteFile(filepath.Join(seen, "broken"), nil, 0o600)
	_, body = d.postJSON(t, "/speak", map[string]any{"text": "second", "now": true}, nil)
	e := voiceHistoryEntry(t, d, body["id"].(string))
	if e["outcome"] != "failed" || e["reason"] != "no audio device: espeak-ng could not open a sound card" {
		t.Fatalf("espeak-ng that reported an audio error: %v", e)
	}
}

// TestVoiceLongTextIsCut: a text longer than max_chars (up to the body limit) is cut at a
// sentence boundary, not refused, and both the answer and talk say tell so.
func TestVoiceLongTextIsCut(t *testing.T) {
	t.Parallel()
	d := startDaemon(t, daemonOptions{})
	var b strings.Builder
	for b.Len() < 1199 {
		b.WriteString("The build of the parser for @jörg finished. ")
	}
	long := strings.TrimSpace(b.String())
	status, body := d.postJSON(t, "/speak", map[string]any{"text": long, "now": true}, nil)
	if status != http.StatusAccepted || body["shortened_from"] != float64(len([]rune(long))) || !strings.Contains(body["message"].(string), "cut at a sentence boundary") {
		t.Fatalf("long text: %d %v", status, body)
	}
	rec := d.waitSpoken(t, 1)[0]
	if n := len([]rune(rec.Text)); n > 400 || !strings.HasSuffix(rec.Text, "finished.") {
		t.Fatalf("spoken text has %d characters and ends %q", n, rec.Text[max(0, len(rec.Text)-20):])
	}
	r := talkAt(t, d, "", "say", "--now", long)
	r.want(t, 0, "talk say with a long text as arguments")
	if !strings.Contains(r.stderr, "cut it at a sentence boundary") {
		t.Errorf("talk say stderr: %q", r.stderr)
	}
	// Beyond the body limit it is still refused, with the limit named.
	status, body = d.postJSON(t, "/speak", map[string]any{"text": strings.Repeat("a", 70<<10)}, nil)
	if status != http.StatusRequestEntityTooLarge {
		t.Fatalf("over the body limit: %d %v", status, body)
	}
}

// TestVoiceWaitAndCancel: talk say --wait blocks until the end and exits by the outcome;
// talk cancel drops what waits (own or all) without muting, and a waiting --wait then
// exits 5 with "dropped (cancelled)".
func TestVoiceWaitAndCancel(t *testing.T) {
	t.Parallel()
	// Each utterance lasts long enough that the one speaking is still speaking while
	// three more talk processes start on a busy machine, and the cancelled ones have not
	// begun.
	const speaking = 6 * time.Second
	d := startDaemon(t, daemonOptions{Env: map[string]string{}, Config: "version = 1\n[voice]\nfake_duration = \"" + speaking.String() + "\"\n[rules.rate_limit]\nnormal = \"0s\"\nlow = \"0s\"\n"})

	start := time.Now()
	r := talkAt(t, d, "", "say", "--wait", "--json", "the first one")
	r.want(t, 0, "say --wait spoken")
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if len(lines) != 2 || !strings.Contains(lines[1], `"outcome":"spoken"`) || time.Since(start) < speaking {
		t.Fatalf("say --wait --json after %v: %q", time.Since(start), r.stdout)
	}

	_, first := d.postJSON(t, "/speak", map[string]any{"text": "speaking now"}, nil)
	_, second := d.postJSON(t, "/speak", map[string]any{"text": "waiting one"}, nil)
	waited := make(chan cliResult, 1)
	go func() {
		waited <- talkRun(t, map[string]string{"TALK_URL": d.URL}, "", "say", "--wait", "-p", "low", "waiting two")
	}()
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, st := d.getJSON(t, "/status")
		if st["queue"].(map[string]any)["waiting"] == float64(2) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the third announcement never waited: %v", st["queue"])
		}
		time.Sleep(20 * time.Millisecond)
	}
	r = talkAt(t, d, "", "cancel", first["id"].(string))
	r.want(t, 4, "cancel of the one speaking")
	if !strings.Contains(r.stderr, "not_waiting") {
		t.Errorf("cancel of the one speaking: %q", r.stderr)
	}
	r = talkAt(t, d, "", "cancel")
	r.want(t, 0, "cancel")
	if !strings.Contains(r.stdout, "cancelled "+second["id"].(string)) {
		t.Fatalf("cancel: %q", r.stdout)
	}
	w := <-waited
	w.want(t, 5, "say --wait of a cancelled announcement")
	if !strings.Contains(w.stderr, "dropped (cancelled)") {
		t.Errorf("say --wait stderr: %q", w.stderr)
	}
	_, st := d.getJSON(t, "/status")
	if st["mute"].(map[string]any)["muted"] != false {
		t.Fatalf("cancel muted: %v", st["mute"])
	}
	if e := voiceHistoryEntry(t, d, first["id"].(string)); e["outcome"] != "spoken" {
		t.Fatalf("the one speaking during cancel: %v", e)
	}
	if !strings.Contains(d.logs(), "outcome=dropped reason=cancelled") {
		t.Errorf("no log line for the cancelled announcement:\n%s", d.logs())
	}
}
