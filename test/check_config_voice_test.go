package test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// readmePiperConfig is the README's Piper example ("Voices and engines").
const readmePiperConfig = `version = 1
[voice]
provider = "piper"

[voice.voices]
de = "de_DE-thorsten-medium"
en = "en_US-lessac-medium"

[[voice.commands]]
name = "piper"
argv = ["piper", "--model", "/opt/piper/{voice}.onnx", "--output_file", "{out}"]
stdin = true
`

// TestCheckConfigAgreesWithStart: talkd --check-config fails exactly where the start
// fails — the README's Piper config without piper on the PATH is refused by both with the
// same message and a hint — and accepts what starts, naming the engine and sink it found.
func TestCheckConfigAgreesWithStart(t *testing.T) {
	t.Parallel()
	talkd, _ := binaries(t)
	bin := t.TempDir()
	env := map[string]string{"TALK_PROVIDER": "", "TALK_SINK": "auto", "PATH": bin}

	check := func(home string) (string, int) {
		cmd := exec.Command(talkd, "--check-config")
		cmd.Env = daemonEnv(home, env)
		out, _ := cmd.CombinedOutput()
		return string(out), cmd.ProcessState.ExitCode()
	}
	home := t.TempDir()
	dir := filepath.Join(home, ".config", "talk")
	os.MkdirAll(dir, 0o700)
	os.WriteFile(filepath.Join(dir, "config.toml"), []byte(readmePiperConfig), 0o600)

	out, code := check(home)
	if code != 1 || !strings.Contains(out, `engine "piper" not found`) || !strings.Contains(out, "full path") {
		t.Fatalf("--check-config without piper: %d %q", code, out)
	}
	d := startDaemon(t, daemonOptions{Home: home, Env: env, ExpectFail: true})
	if d.exitCode(t) != 1 || !strings.Contains(d.logs(), `engine \"piper\" not found`) && !strings.Contains(d.logs(), `engine "piper" not found`) {
		t.Fatalf("the start without piper:\n%s", d.logs())
	}

	voiceScript(t, filepath.Join(bin, "piper"), `exit 0`)
	out, code = check(home)
	if code != 0 || !strings.Contains(out, "voice: piper (configured: [[voice.commands]] piper)") || !strings.Contains(out, "not be heard") {
		t.Fatalf("--check-config with piper: %d %q", code, out)
	}
	startDaemon(t, daemonOptions{Home: home, Env: env})
}
