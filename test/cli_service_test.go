package test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestCLIServiceSystemd: talk service install writes a systemd user unit that runs the
// given talkd and enables and starts it through systemctl --user (a fake on the PATH);
// status and uninstall undo it.
func TestCLIServiceSystemd(t *testing.T) {
	t.Parallel()
	talkd, _ := binaries(t)
	bin, home := t.TempDir(), t.TempDir()
	calls := filepath.Join(t.TempDir(), "calls")
	voiceScript(t, filepath.Join(bin, "systemctl"), `echo "$@" >> "`+calls+`"
case "$*" in *is-active*) echo active;; esac`)
	env := map[string]string{"HOME": home, "XDG_CONFIG_HOME": filepath.Join(home, ".config"), "PATH": bin}

	r := talkRun(t, env, "", "service", "install", "--talkd", talkd)
	r.want(t, 0, "service install")
	unit := filepath.Join(home, ".config", "systemd", "user", "talkd.service")
	raw, err := os.ReadFile(unit)
	if err != nil {
		t.Fatalf("no unit file: %v\n%s%s", err, r.stdout, r.stderr)
	}
	for _, want := range []string{"ExecStart=" + talkd + "\n", "ExecReload=/bin/kill -HUP $MAINPID\n", "Restart=on-failure", "WantedBy=default.target"} {
		if !strings.Contains(string(raw), want) {
			t.Errorf("unit lacks %q:\n%s", want, raw)
		}
	}
	r = talkRun(t, env, "", "service", "status")
	r.want(t, 0, "service status")
	if !strings.Contains(r.stdout, "installed: "+unit) || !strings.Contains(r.stdout, "state: active") {
		t.Errorf("service status: %s", r.stdout)
	}
	r = talkRun(t, env, "", "service", "uninstall")
	r.want(t, 0, "service uninstall")
	if _, err := os.Stat(unit); !os.IsNotExist(err) {
		t.Errorf("unit still there after uninstall: %v", err)
	}
	got, _ := os.ReadFile(calls)
	want := "--user daemon-reload\n--user enable --now talkd.service\n--user is-active talkd.service\n--user disable --now talkd.service\n--user daemon-reload\n"
	if string(got) != want {
		t.Errorf("systemctl calls:\n%s\nwant:\n%s", got, want)
	}
	r = talkRun(t, env, "", "service", "frobnicate")
	r.want(t, 2, "service with an unknown action")
}

// TestCLICompletionBash: the bash script loads, completes commands and a command's flags.
func TestCLICompletionBash(t *testing.T) {
	t.Parallel()
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	r := talkRun(t, nil, "", "completion", "bash")
	r.want(t, 0, "completion bash")
	script := filepath.Join(t.TempDir(), "talk.bash")
	os.WriteFile(script, []byte(r.stdout), 0o600)
	out, err := exec.Command(bash, "-c", `source "$1"
COMP_WORDS=(talk ca); COMP_CWORD=1; _talk; echo "cmds: ${COMPREPLY[*]}"
COMP_WORDS=(talk say --w); COMP_CWORD=2; _talk; echo "say: ${COMPREPLY[*]}"`, "x", script).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "cmds: cancel") || !strings.Contains(string(out), "say: --wait") {
		t.Fatalf("bash completion: %v\n%s", err, out)
	}
	for _, sh := range []string{"zsh", "fish"} {
		r := talkRun(t, nil, "", "completion", sh)
		r.want(t, 0, "completion "+sh)
		if !strings.Contains(r.stdout, "cancel") || !strings.Contains(r.stdout, "wait") {
			t.Errorf("%s completion lacks commands or flags:\n%s", sh, r.stdout)
		}
	}
}
