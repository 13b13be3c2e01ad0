//go:build unix

package test

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// voiceFixtureWAV writes a 0.2 s mono 16-bit WAV of a quiet square wave for script
// engines to hand back as their "speech".
func voiceFixtureWAV(t testing.TB, path string) {
	t.Helper()
	const rate, frames = 16000, 3200
	b := make([]byte, 44+2*frames)
	le := binary.LittleEndian
	copy(b, "RIFF")
	le.PutUint32(b[4:], uint32(36+2*frames))
	copy(b[8:], "WAVEfmt ")
	le.PutUint32(b[16:], 16)
	le.PutUint16(b[20:], 1)
	le.PutUint16(b[22:], 1)
	le.PutUint32(b[24:], rate)
	le.PutUint32(b[28:], rate*2)
	le.PutUint16(b[32:], 2)
	le.PutUint16(b[34:], 16)
	copy(b[36:], "data")
	le.PutUint32(b[40:], 2*frames)
	for i := 0; i < frames; i++ {
		v := int16(3000)
		if i/20%2 == 0 {
			v = -3000
		}
		le.PutUint16(b[44+2*i:], uint16(v))
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// voiceScript writes an executable shell script.
func voiceScript(t testing.TB, path, body string) {
	t.Helper()
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
}

// voiceProcessGone reports whether pid has ended (or is a zombie waiting to be reaped).
func voiceProcessGone(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return true
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return os.IsNotExist(err)
	}
	f := strings.Fields(string(b))
	return len(f) > 2 && f[2] == "Z"
}

// TestVoiceCommandProvider drives talkd's command provider with a script engine: the
// argv and stdin forms, a text starting with "-", and a hanging engine killed (with its
// child) at voice.timeout while the queue moves on.
func TestVoiceCommandProvider(t *testing.T) {
	t.Parallel()
	work := t.TempDir()
	seen := filepath.Join(work, "seen")
	wavs := filepath.Join(work, "wavs")
	if err := os.MkdirAll(seen, 0o755); err != nil {
		t.Fatal(err)
	}
	fixture := filepath.Join(work, "fixture.wav")
	voiceFixtureWAV(t, fixture)
	engine := filepath.Join(work, "engine")
	// Records its arguments and stdin under the name of its output file (which carries
	// the utterance id), then "speaks" the fixture.
	voiceScript(t, engine, `b=$(basename "$1" .wav)
printf '%s\n' "$@" > "`+seen+`/$b.args"
cat > "`+seen+`/$b.stdin"
cp "`+fixture+`" "$1"`)
	hang := filepath.Join(work, "hang")
	voiceScript(t, hang, `sleep 300 &
echo $! > "`+work+`/hang.pids"
echo $$ >> "`+work+`/hang.pids"
wait`)

	cfg := fmt.Sprintf(`version = 1
[voice]
provider = "argvtts"
sink = "dir:%s"
timeout = "1s"

[[voice.commands]]
name = "argvtts"
argv = [%q, "{out}", "{text}", "{lang}", "{voice}"]

[[voice.commands]]
name = "stdintts"
argv = [%q, "{out}", "{lang}"]
stdin = true

[[voice.commands]]
name = "hang"
argv = [%q, "{out}", "{text}"]
`, wavs, engine, engine, hang)
	d := startDaemon(t, daemonOptions{Config: cfg, Env: map[string]string{"TALK_PROVIDER": "", "TALK_SINK": ""}})

	_, st := d.getJSON(t, "/status")
	if v, _ := st["voice"].(map[string]any); v["provider"] != "argvtts" {
		t.Fatalf("status voice %v", v)
	}

	speak := func(body map[string]any) string {
		t.Helper()
		body["priority"] = "high"
		status, resp := d.postJSON(t, "/speak", body, nil)
		if status != http.StatusAccepted {
			t.Fatalf("speak %v: %d %v", body, status, resp)
		}
		return resp["id"].(string)
	}
	recorded := func(id, ext string) string {
		t.Helper()
		m, _ := filepath.Glob(filepath.Join(seen, "*-"+id+"."+ext))
		if len(m) != 1 {
			t.Fatalf("engine saw no call for %s (%v)", id, m)
		}
		b, err := os.ReadFile(m[0])
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}

	// The argv form, in German, and a text that would be an option.
	de := speak(map[string]any{"text": "Hallo aus dem Skript", "lang": "de"})
	dash := speak(map[string]any{"text": "-rf --help", "lang": "en"})
	voiceWaitFile(t, d, wavs, de)
	voiceWaitFile(t, d, wavs, dash)
	if got := recorded(de, "args"); !strings.HasSuffix(got, "\nHallo aus dem Skript\nde\nde\n") {
		t.Errorf("argv form got %q", got)
	}
	if got := recorded(dash, "args"); !strings.HasSuffix(got, "\n -rf --help\nen\nen\n") {
		t.Errorf("dash text must not start an argument with -: %q", got)
	}

	// The stdin form, chosen per request.
	in := speak(map[string]any{"text": "--version on stdin", "lang": "en", "provider": "stdintts"})
	voiceWaitFile(t, d, wavs, in)
	if got := recorded(in, "stdin"); got != "--version on stdin" {
		t.Errorf("stdin form got %q on stdin", got)
	}
	if got := recorded(in, "args"); strings.Contains(got, "version") {
		t.Errorf("stdin form must not pass the text as argument: %q", got)
	}

	// A hanging engine is killed at the timeout, with its child, and the queue goes on.
	hung := speak(map[string]any{"text": "never finishes", "provider": "hang"})
	after := speak(map[string]any{"text": "spoken after the hang", "lang": "en"})
	e := voiceHistoryEntry(t, d, hung)
	if e["outcome"] != "failed" || !strings.Contains(fmt.Sprint(e["reason"]), "killed after timeout of 1s") {
		t.Errorf("hung utterance history %v", e)
	}
	voiceWaitFile(t, d, wavs, after)
	raw, err := os.ReadFile(filepath.Join(work, "hang.pids"))
	if err != nil {
		t.Fatal(err)
	}
	pids := strings.Fields(string(raw))
	if len(pids) != 2 {
		t.Fatalf("hang pids %q", raw)
	}
	deadline := time.Now().Add(5 * time.Second)
	for _, p := range pids {
		pid, _ := strconv.Atoi(p)
		for !voiceProcessGone(pid) {
			if time.Now().After(deadline) {
				t.Fatalf("engine process %d survived its timeout", pid)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	if m, _ := filepath.Glob(filepath.Join(wavs, "*-"+hung+".*")); len(m) != 0 {
		t.Errorf("the hung utterance left a file: %v", m)
	}
}
