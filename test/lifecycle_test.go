package test

import (
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestMuteSurvivesRestart: a mute set before a restart still holds after it.
func TestMuteSurvivesRestart(t *testing.T) {
	t.Parallel()
	d := startDaemon(t, daemonOptions{})
	if status, body := d.postJSON(t, "/mute", map[string]any{"until": "23:59"}, nil); status != 200 || body["muted"] != true {
		t.Fatalf("mute: %d %v", status, body)
	}
	if code := d.terminate(t); code != 0 {
		t.Fatalf("exit code %d; log:\n%s", code, d.logs())
	}
	d2 := startDaemon(t, daemonOptions{Home: d.Home})
	_, st := d2.getJSON(t, "/status")
	if m, _ := st["mute"].(map[string]any); m["muted"] != true || m["until"] == nil {
		t.Fatalf("status after restart: %v", st["mute"])
	}
	if status, body := d2.postJSON(t, "/speak", map[string]any{"text": "still muted", "now": true}, nil); status != 200 || body["status"] != "muted" {
		t.Fatalf("speak after restart: %d %v", status, body)
	}
}

// TestSIGTERMWhileSpeaking: the current utterance finishes, the process exits 0, and the
// history in the database has every announcement with its outcome.
func TestSIGTERMWhileSpeaking(t *testing.T) {
	t.Parallel()
	cfg := `version = 1
[voice]
fake_duration = "600ms"
[rules.rate_limit]
normal = "0s"
`
	d := startDaemon(t, daemonOptions{Config: cfg})
	var ids []string
	for _, text := range []string{"speaking at shutdown", "waiting at shutdown"} {
		status, body := d.postJSON(t, "/speak", map[string]any{"text": text}, nil)
		if status != http.StatusAccepted {
			t.Fatalf("%d %v", status, body)
		}
		ids = append(ids, body["id"].(string))
	}
	time.Sleep(150 * time.Millisecond)
	start := time.Now()
	if code := d.terminate(t); code != 0 {
		t.Fatalf("exit code %d; log:\n%s", code, d.logs())
	}
	if time.Since(start) < 300*time.Millisecond {
		t.Errorf("talkd exited after %v, before the current utterance could finish", time.Since(start))
	}
	recs := d.spoken(t)
	if len(recs) != 1 || recs[0].Text != "speaking at shutdown" || recs[0].Interrupted {
		t.Fatalf("spoken at shutdown: %+v", recs)
	}
	d2 := startDaemon(t, daemonOptions{Home: d.Home, Config: cfg})
	_, hist := d2.getJSON(t, "/history")
	outcomes := map[string]string{}
	for _, e := range hist["entries"].([]any) {
		m := e.(map[string]any)
		outcomes[m["id"].(string)] = m["outcome"].(string)
	}
	if outcomes[ids[0]] != "spoken" || outcomes[ids[1]] != "dropped" {
		t.Fatalf("history after restart: %v", outcomes)
	}
	// Numbering continues after a restart.
	_, body := d2.postJSON(t, "/speak", map[string]any{"text": "after restart"}, nil)
	if body["id"] == ids[0] || body["id"] == ids[1] {
		t.Fatalf("id %v reused after restart", body["id"])
	}
}

// TestBadConfigRejected: the daemon refuses to start, naming file, line and problem.
func TestBadConfigRejected(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, config string
		want         []string
	}{
		{"syntax", "version = 1\n[server]\nlisten = \n", []string{"config.toml", ":3"}},
		{"unknown key", "version = 1\n[voice]\nprovder = \"fake\"\n", []string{"config.toml", "provder"}},
		{"bad value", "version = 1\n[voice]\nlang = \"fr_FR\"\n", []string{"config.toml", "lang", "fr_FR"}},
		{"language the engine lacks", "version = 1\n[voice]\nlang = \"fr\"\n", []string{"voice.lang", "fake cannot speak", "de, en"}},
		{"bad quiet hours", "version = 1\n[rules]\nquiet_hours = [\"25:00-07:00\"]\n", []string{"quiet_hours", "25:00"}},
		{"wrong version", "version = 7\n", []string{"version"}},
		{"non-loopback in local mode", "version = 1\n[server]\nlisten = \"0.0.0.0:7077\"\n", []string{"0.0.0.0", "clients"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := startDaemon(t, daemonOptions{Config: tc.config, ExpectFail: true, Env: map[string]string{"TALK_LISTEN": ""}})
			if code := d.exitCode(t); code == 0 {
				t.Fatalf("talkd started with a bad config")
			}
			for _, w := range tc.want {
				if !strings.Contains(d.logs(), w) {
					t.Errorf("message does not mention %q:\n%s", w, d.logs())
				}
			}
		})
	}
}

// TestCheckConfigAndVersion: talkd --check-config exits 0/1, --version prints the version.
func TestCheckConfigAndVersion(t *testing.T) {
	t.Parallel()
	talkd, _ := binaries(t)
	home := t.TempDir()
	run := func(args ...string) (string, int) {
		cmd := exec.Command(talkd, args...)
		cmd.Env = daemonEnv(home, nil)
		out, _ := cmd.CombinedOutput()
		return string(out), cmd.ProcessState.ExitCode()
	}
	if out, code := run("--version"); code != 0 || !strings.HasPrefix(out, "talkd ") {
		t.Errorf("--version: %d %q", code, out)
	}
	if out, code := run("--check-config"); code != 0 || !strings.Contains(out, "embedded defaults") {
		t.Errorf("--check-config on defaults: %d %q", code, out)
	}
	dir := filepath.Join(home, ".config", "talk")
	os.MkdirAll(dir, 0o700)
	os.WriteFile(filepath.Join(dir, "config.toml"), []byte("version = 1\n[rules]\nqueue_size = -1\n"), 0o600)
	if out, code := run("--check-config"); code != 1 || !strings.Contains(out, "queue_size") {
		t.Errorf("--check-config on a bad file: %d %q", code, out)
	}
}
