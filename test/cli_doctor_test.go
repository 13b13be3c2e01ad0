package test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCLIDoctor: on a machine without a sound card, talk doctor follows the chain and
// names the broken link with what to do: the daemon and its engine are fine, the device
// failed (what talkd saw on its last play), speech-dispatcher hangs, the service is not
// installed; it exits 1. With the daemon down it says how to start it.
func TestCLIDoctor(t *testing.T) {
	t.Parallel()
	bin, _ := noSoundCardPath(t)
	voiceScript(t, filepath.Join(bin, "spd-say"), `if [ "$1" = "-L" ]; then exec /bin/sleep 10; fi; exit 0`)
	d := startDaemon(t, daemonOptions{Env: map[string]string{"TALK_PROVIDER": "espeak", "TALK_SINK": "auto", "PATH": bin}})
	_, body := d.postJSON(t, "/speak", map[string]any{"text": "is anyone there", "now": true}, nil)
	voiceHistoryEntry(t, d, body["id"].(string))

	r := talkRun(t, map[string]string{"TALK_URL": d.URL, "PATH": bin}, "", "doctor")
	r.want(t, 1, "talk doctor without a sound card")
	for _, want := range []string{
		"OK    daemon",
		"OK    engine             espeak (configured: espeak)",
		"OK    voices ",
		"OK    player             paplay",
		"FAIL  device             talkd's last play: no audio device: paplay could not reach the sound server; aplay could not open a sound card",
		"→ connect a sound card or start the sound server",
		"WARN  speech-dispatcher  spd-say -L did not answer within 3s",
		"WARN  service ",
		"→ talk service install",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("talk doctor lacks %q:\n%s", want, r.stdout)
		}
	}
	r = talkRun(t, map[string]string{"TALK_URL": d.URL, "PATH": bin}, "", "doctor", "--json")
	r.want(t, 1, "talk doctor --json")
	if checks, _ := r.jsonLine(t)["checks"].([]any); len(checks) != 7 {
		t.Errorf("talk doctor --json: %s", r.stdout)
	}

	// An XDG autostart entry (talk service install --autostart, for machines without a
	// systemd user session) is a service that starts at login too.
	home := t.TempDir()
	entry := filepath.Join(home, ".config", "autostart", "talkd.desktop")
	if err := os.MkdirAll(filepath.Dir(entry), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(entry, []byte("[Desktop Entry]\nType=Application\nExec=talkd\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r = talkRun(t, map[string]string{"TALK_URL": d.URL, "PATH": bin, "HOME": home, "XDG_CONFIG_HOME": filepath.Join(home, ".config")}, "", "doctor")
	if !strings.Contains(r.stdout, "OK    service            "+entry+" (XDG autostart)") {
		t.Errorf("talk doctor with an XDG autostart entry:\n%s", r.stdout)
	}

	r = talkRun(t, map[string]string{"TALK_URL": "http://127.0.0.1:1", "PATH": bin}, "", "doctor")
	r.want(t, 1, "talk doctor with the daemon down")
	if !strings.Contains(r.stdout, "FAIL  daemon") || !strings.Contains(r.stdout, "start it: talkd") || !strings.Contains(r.stdout, "OK    engine") {
		t.Errorf("talk doctor with the daemon down:\n%s", r.stdout)
	}
}
