//go:build unix

package voice

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"talkd/internal/config"
)

// writeScript writes an executable /bin/sh script into dir.
func writeScript(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// fixtureWAV writes a valid (silent) WAV for scripts to copy as their "speech".
func fixtureWAV(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "fixture.wav")
	if err := os.WriteFile(p, silentWAV(200*time.Millisecond, 16000), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// pathIn looks binaries up only in dir, so tests decide exactly what is "installed".
func pathIn(dir string) lookPathFunc {
	return func(name string) (string, error) {
		if filepath.IsAbs(name) {
			return exec.LookPath(name)
		}
		p := filepath.Join(dir, name)
		if st, err := os.Stat(p); err == nil && st.Mode()&0o111 != 0 {
			return p, nil
		}
		return "", &exec.Error{Name: name, Err: exec.ErrNotFound}
	}
}

// baseConfig is a minimal voice config as Load would produce it.
func baseConfig(provider, sink string) config.Voice {
	return config.Voice{
		Provider:     provider,
		Sink:         sink,
		Lang:         "en",
		Timeout:      config.Duration{Duration: 5 * time.Second},
		FakeDuration: config.Duration{Duration: 20 * time.Millisecond},
	}
}

// waitGone waits until pid no longer runs (gone or a zombie nobody reaped yet).
func waitGone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for time.Now().Before(deadline) {
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			return
		}
		if b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat"); err == nil {
			if f := strings.Fields(string(b)); len(f) > 2 && f[2] == "Z" {
				return
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Errorf("process %d still runs", pid)
}

// readPIDs reads one pid per line, waiting until the file has want of them.
func readPIDs(t *testing.T, path string, want int) []int {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for {
		b, _ := os.ReadFile(path)
		var pids []int
		for _, f := range strings.Fields(string(b)) {
			if n, err := strconv.Atoi(f); err == nil {
				pids = append(pids, n)
			}
		}
		if len(pids) >= want {
			return pids
		}
		if time.Now().After(deadline) {
			t.Fatalf("pid file %s has %d pids, want %d", path, len(pids), want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
