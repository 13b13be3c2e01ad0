package test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCLIServiceWithoutUserSession: where systemctl --user cannot reach a user manager
// (the bus error of an ssh login or a container), install writes the unit with its
// environment file, says there is no user session and names what works instead (exit
// 1: nothing was started); status cannot tell and exits 1; --autostart and --print work
// without systemd.
func TestCLIServiceWithoutUserSession(t *testing.T) {
	t.Parallel()
	talkd, _ := binaries(t)
	bin, home := t.TempDir(), t.TempDir()
	voiceScript(t, filepath.Join(bin, "systemctl"), `echo "Failed to connect to bus: No medium found" >&2; exit 1`)
	cfg := filepath.Join(home, ".config")
	env := map[string]string{"HOME": home, "XDG_CONFIG_HOME": cfg, "PATH": bin + ":/usr/bin:/bin", "USER": "jörg"}

	r := talkRun(t, env, "", "service", "install", "--talkd", talkd)
	r.want(t, 1, "service install without a user session")
	for _, want := range []string{"no systemd user session here", "No medium found", "sudo loginctl enable-linger jörg", "talk service install --autostart", "talk service install --print"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("install's stderr lacks %q:\n%s", want, r.stderr)
		}
	}
	unit, err := os.ReadFile(filepath.Join(cfg, "systemd", "user", "talkd.service"))
	envFile := filepath.Join(cfg, "talk", "talkd.env")
	if err != nil || !strings.Contains(string(unit), "EnvironmentFile=-"+envFile+"\n") || !strings.Contains(string(unit), "ExecStart="+talkd+"\n") {
		t.Errorf("unit (%v):\n%s", err, unit)
	}
	st, err := os.Stat(envFile)
	content, _ := os.ReadFile(envFile)
	if err != nil || st.Mode().Perm() != 0o600 || !strings.Contains(string(content), "\nPATH="+bin+":/usr/bin:/bin\n") {
		t.Errorf("environment file (%v, %v):\n%s", err, st, content)
	}
	// The environment file is the user's once written: a second install keeps it.
	os.WriteFile(envFile, []byte("TALKD_TOKEN_CI=secret\n"), 0o600)
	talkRun(t, env, "", "service", "install", "--talkd", talkd).want(t, 1, "second install")
	if got, _ := os.ReadFile(envFile); string(got) != "TALKD_TOKEN_CI=secret\n" {
		t.Errorf("install rewrote the environment file: %s", got)
	}

	r = talkRun(t, env, "", "service", "status")
	r.want(t, 1, "service status without a user session")
	if !strings.Contains(r.stdout, "state: unknown") || !strings.Contains(r.stderr, "cannot tell") {
		t.Errorf("status: %s / %s", r.stdout, r.stderr)
	}

	r = talkRun(t, env, "", "service", "install", "--print", "--talkd", talkd)
	r.want(t, 0, "service install --print")
	if !strings.HasPrefix(r.stdout, "[Unit]") || !strings.Contains(r.stdout, "EnvironmentFile=-"+envFile) {
		t.Errorf("--print:\n%s", r.stdout)
	}

	r = talkRun(t, env, "", "service", "install", "--autostart", "--talkd", talkd)
	r.want(t, 0, "service install --autostart")
	desktop := filepath.Join(cfg, "autostart", "talkd.desktop")
	entry, err := os.ReadFile(desktop)
	if err != nil || !strings.Contains(string(entry), "[Desktop Entry]\nType=Application\n") || !strings.Contains(string(entry), "exec '"+talkd+"'") || !strings.Contains(string(entry), ". '"+envFile+"'") {
		t.Errorf("autostart entry (%v):\n%s", err, entry)
	}
	talkRun(t, env, "", "service", "uninstall", "--autostart").want(t, 0, "service uninstall --autostart")
	if _, err := os.Stat(desktop); !os.IsNotExist(err) {
		t.Errorf("autostart entry still there: %v", err)
	}
	talkRun(t, env, "", "service", "status", "--autostart").want(t, 2, "status --autostart")
}
