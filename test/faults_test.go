//go:build linux

package test

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Faults at the process boundary (issue 9): each test breaks something under a running
// talkd — the process itself, its voice engine, its state directory, a plan file, the git
// repository of a mirrored plan — and checks what the user is told and that nothing
// written before the fault is lost. The results are tabled in docs/RELIABILITY.md.

// faultHistory returns the daemon's history as outcome and reason by announcement id.
func faultHistory(t testing.TB, d *daemon) map[string]map[string]any {
	t.Helper()
	_, body := d.getJSON(t, "/history?limit=500")
	out := map[string]map[string]any{}
	entries, _ := body["entries"].([]any)
	for _, e := range entries {
		m, _ := e.(map[string]any)
		if id, ok := m["id"].(string); ok {
			out[id] = m
		}
	}
	return out
}

// faultSpeak posts one announcement that must be queued and returns its id.
func faultSpeak(t testing.TB, d *daemon, body map[string]any) string {
	t.Helper()
	status, resp := d.postJSON(t, "/speak", body, nil)
	if status != http.StatusAccepted {
		t.Fatalf("speak %v: %d %v", body, status, resp)
	}
	return resp["id"].(string)
}

// faultWaitOutcome polls the history until id has the outcome want (queued and speaking
// count too, unlike voiceHistoryEntry which waits for a final one).
func faultWaitOutcome(t testing.TB, d *daemon, id, want string, within time.Duration) map[string]any {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		e := faultHistory(t, d)[id]
		if e != nil && e["outcome"] == want {
			return e
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never reached %q: %v", id, want, e)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// faultRSS is the resident set size of pid in KiB (VmRSS of /proc/PID/status).
func faultRSS(t testing.TB, pid int) int {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			n, _ := strconv.Atoi(f[1])
			return n
		}
	}
	t.Fatalf("no VmRSS for %d", pid)
	return 0
}

// faultMount mounts a tmpfs of the given size (e.g. "4m") at a fresh directory and
// unmounts it when the test ends. It skips the test when mounting is not permitted here
// (not root, or no CAP_SYS_ADMIN in a container): a chmod is no substitute, because a
// root daemon ignores permission bits.
func faultMount(t *testing.T, size string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "mnt")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs here (%v: %s); these faults need root with CAP_SYS_ADMIN", err, out)
	}
	t.Cleanup(func() {
		// The daemon's cleanup (registered later) runs first, so nothing holds the mount.
		if out, err := exec.Command("umount", "-l", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", dir, err, out)
		}
	})
	return dir
}

// faultRemount switches a faultMount between read-only and read-write.
func faultRemount(t *testing.T, dir, mode string) {
	t.Helper()
	if out, err := exec.Command("mount", "-o", "remount,"+mode, dir).CombinedOutput(); err != nil {
		t.Fatalf("remount %s %s: %v: %s", dir, mode, err, out)
	}
}

// faultFill writes zeros into a file in dir until the file system is full and returns
// the file's path.
func faultFill(t *testing.T, dir string) string {
	t.Helper()
	p := filepath.Join(dir, "filler")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	chunk := make([]byte, 64<<10)
	for {
		if _, err := f.Write(chunk); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("fill %s: %v", dir, err)
			}
			break
		}
	}
	// Take the last bytes too: a 64 KiB chunk may not have fit where 1 byte would.
	for {
		if _, err := f.Write([]byte{0}); err != nil {
			break
		}
	}
	return p
}

// faultSpeechConfig is a config whose speech takes long enough to be interrupted.
const faultSpeechConfig = `version = 1
[voice]
fake_duration = "3s"
[rules.rate_limit]
low = "0s"
normal = "0s"
`

// TestFaultKillDuringSpeechFake SIGKILLs talkd while the fake provider speaks (3 s per
// utterance). After a restart on the same HOME the interrupted announcement is settled as
// dropped (reason restart), the earlier history is intact, the queue speaks again, and a
// mute set just before a second SIGKILL still holds after the next restart.
func TestFaultKillDuringSpeechFake(t *testing.T) {
	t.Parallel()
	d := startDaemon(t, daemonOptions{Config: faultSpeechConfig})
	first := faultSpeak(t, d, map[string]any{"text": "spoken before the crash", "priority": "high"})
	faultWaitOutcome(t, d, first, "spoken", 10*time.Second)
	cut := faultSpeak(t, d, map[string]any{"text": "cut by the crash", "priority": "high"})
	waiting := faultSpeak(t, d, map[string]any{"text": "waiting at the crash", "priority": "low"})
	faultWaitOutcome(t, d, cut, "speaking", 5*time.Second)
	// The history is saved in batches every second: let the batch holding the queued and
	// speaking states reach the disk, as it would on a daemon that has run for a while.
	time.Sleep(1600 * time.Millisecond)
	d.kill(t)

	d2 := startDaemon(t, daemonOptions{Config: faultSpeechConfig, Home: d.Home})
	h := faultHistory(t, d2)
	if h[first]["outcome"] != "spoken" {
		t.Errorf("announcement spoken before the crash: %v", h[first])
	}
	for _, id := range []string{cut, waiting} {
		if h[id]["outcome"] != "dropped" || h[id]["reason"] != "restart" {
			t.Errorf("announcement %s unsettled after the crash: %v", id, h[id])
		}
	}
	after := faultSpeak(t, d2, map[string]any{"text": "spoken after the restart", "priority": "high"})
	if after == first || after == cut || after == waiting {
		t.Fatalf("id %s reused after the crash", after)
	}
	faultWaitOutcome(t, d2, after, "spoken", 10*time.Second)
	var texts []string
	for _, r := range d2.spoken(t) {
		texts = append(texts, r.Text)
	}
	if !strings.Contains(strings.Join(texts, "|"), "spoken after the restart") {
		t.Errorf("fake log after the restart: %q", texts)
	}

	// A mute saved just before a SIGKILL survives it.
	if status, body := d2.postJSON(t, "/mute", map[string]any{"for": "1h"}, nil); status != 200 || body["muted"] != true {
		t.Fatalf("mute: %d %v", status, body)
	}
	d2.kill(t)
	d3 := startDaemon(t, daemonOptions{Config: faultSpeechConfig, Home: d.Home})
	_, st := d3.getJSON(t, "/status")
	if m, _ := st["mute"].(map[string]any); m["muted"] != true || m["until"] == nil {
		t.Fatalf("mute after SIGKILL and restart: %v", st["mute"])
	}
	if status, body := d3.postJSON(t, "/speak", map[string]any{"text": "muted", "now": true}, nil); status != 200 || body["status"] != "muted" {
		t.Fatalf("speak while muted after the restart: %d %v", status, body)
	}
	h = faultHistory(t, d3)
	if h[first]["outcome"] != "spoken" || h[cut]["outcome"] != "dropped" {
		t.Fatalf("history after the second crash: %v / %v", h[first], h[cut])
	}
	// The history is saved in batches (every second): an announcement spoken less than a
	// second before a SIGKILL may come back as dropped (restart) although it was heard.
	// Both are accepted; which one happened is logged (docs/RELIABILITY.md).
	switch e := h[after]; {
	case e["outcome"] == "spoken":
		t.Logf("spoken just before the second SIGKILL: recorded as spoken")
	case e["outcome"] == "dropped" && e["reason"] == "restart":
		t.Logf("spoken just before the second SIGKILL: recorded as dropped (restart), its last batch was lost")
	default:
		t.Fatalf("announcement spoken before the second crash: %v", e)
	}
}

// faultWaitPID waits until an engine script has written its pid to file.
func faultWaitPID(t testing.TB, file string) int {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if raw, err := os.ReadFile(file); err == nil {
			if pid, err := strconv.Atoi(strings.TrimSpace(string(raw))); err == nil && pid > 0 {
				return pid
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the engine did not start (no pid in %s)", file)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// faultEngine writes a command-provider script that records its pid, sleeps when the text
// contains "slow", then copies the WAV fixture to its output file.
func faultEngine(t *testing.T, work string) (script, pidFile string) {
	t.Helper()
	fixture := filepath.Join(work, "fixture.wav")
	voiceFixtureWAV(t, fixture)
	script = filepath.Join(work, "engine")
	pidFile = filepath.Join(work, "engine.pid")
	voiceScript(t, script, `echo $$ > "`+pidFile+`"
case "$2" in *slow*) sleep 3;; esac
cp "`+fixture+`" "$1"`)
	return script, pidFile
}

// TestFaultKillDuringSpeechCommand SIGKILLs talkd while a command provider (a script that
// sleeps 3 s) synthesises. The restart settles the announcement as dropped and the next
// one is spoken. The engine (the script's shell) gets SIGKILL from the kernel when talkd
// dies (parent-death signal, Linux); TestFaultKillOrphanedEngine bounds how fast.
func TestFaultKillDuringSpeechCommand(t *testing.T) {
	t.Parallel()
	work := t.TempDir()
	engine, pidFile := faultEngine(t, work)
	wavs := filepath.Join(work, "wavs")
	cfg := fmt.Sprintf(`version = 1
[voice]
provider = "script"
sink = "dir:%s"
timeout = "10s"
[rules.rate_limit]
normal = "0s"
[[voice.commands]]
name = "script"
argv = [%q, "{out}", "{text}"]
`, wavs, engine)
	env := map[string]string{"TALK_PROVIDER": "", "TALK_SINK": ""}
	d := startDaemon(t, daemonOptions{Config: cfg, Env: env})
	before := faultSpeak(t, d, map[string]any{"text": "quick one"})
	voiceWaitFile(t, d, wavs, before)
	os.Remove(pidFile)
	cut := faultSpeak(t, d, map[string]any{"text": "slow one cut by the crash"})
	// While the engine synthesises, the history says queued ("speaking" starts with the
	// playback); let one history batch (1 s) reach the disk, then kill.
	enginePID := faultWaitPID(t, pidFile)
	time.Sleep(1600 * time.Millisecond)
	d.kill(t)
	killed := time.Now()

	d2 := startDaemon(t, daemonOptions{Config: cfg, Env: env, Home: d.Home})
	h := faultHistory(t, d2)
	if h[before]["outcome"] != "spoken" || h[cut]["outcome"] != "dropped" || h[cut]["reason"] != "restart" {
		t.Fatalf("history after the crash: %v / %v", h[before], h[cut])
	}
	next := faultSpeak(t, d2, map[string]any{"text": "spoken after the restart"})
	voiceWaitFile(t, d2, wavs, next)
	if e := voiceHistoryEntry(t, d2, next); e["outcome"] != "spoken" {
		t.Fatalf("after the restart: %v", e)
	}
	for !voiceProcessGone(enginePID) {
		if time.Since(killed) > 8*time.Second {
			t.Fatalf("the orphaned engine %d still runs %v after the daemon died", enginePID, time.Since(killed))
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("orphaned engine %d gone %v after the SIGKILL (observed after the restart)", enginePID, time.Since(killed).Round(100*time.Millisecond))
}

// orphanBound is how long an engine may outlive a SIGKILLed talkd: the kernel sends the
// parent-death signal at once; the rest is polling and a busy machine.
const orphanBound = 2 * time.Second

// TestFaultKillOrphanedEngine SIGKILLs talkd while its command engine hangs (the engine
// would sleep 300 s) and asserts that the engine process is gone within orphanBound: the
// kernel kills it on talkd's death (Pdeathsig). The signal reaches the process talkd
// started, not what that process started in turn: a script engine's own background child
// is reparented and runs on; the test logs whether it did.
func TestFaultKillOrphanedEngine(t *testing.T) {
	t.Parallel()
	work := t.TempDir()
	pidFile, childFile := filepath.Join(work, "engine.pid"), filepath.Join(work, "child.pid")
	engine := filepath.Join(work, "engine")
	voiceScript(t, engine, `sleep 300 &
echo $! > "`+childFile+`"
echo $$ > "`+pidFile+`"
wait`)
	cfg := fmt.Sprintf(`version = 1
[voice]
provider = "hang"
timeout = "60s"
[[voice.commands]]
name = "hang"
argv = [%q, "{out}", "{text}"]
`, engine)
	d := startDaemon(t, daemonOptions{Config: cfg, Env: map[string]string{"TALK_PROVIDER": ""}})
	faultSpeak(t, d, map[string]any{"text": "never finished", "priority": "high"})
	enginePID := faultWaitPID(t, pidFile)
	childPID := faultWaitPID(t, childFile)
	t.Cleanup(func() { syscall.Kill(childPID, syscall.SIGKILL) })
	d.kill(t)
	killed := time.Now()
	for !voiceProcessGone(enginePID) {
		if time.Since(killed) > orphanBound {
			t.Fatalf("the engine %d still runs %v after talkd was SIGKILLed", enginePID, time.Since(killed).Round(10*time.Millisecond))
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Logf("engine %d gone %v after the SIGKILL of talkd; the script's own child %d gone: %v",
		enginePID, time.Since(killed).Round(time.Millisecond), childPID, voiceProcessGone(childPID))
}

// TestFaultProviderHangCrashFlood: engines that hang, exit 1, die by a signal, write
// 50 MB to stderr (three times) or 50 MB to stdout each fail their announcement with a
// reason, the next announcement is spoken, and the daemon's memory and log stay bounded.
func TestFaultProviderHangCrashFlood(t *testing.T) {
	t.Parallel()
	work := t.TempDir()
	engine, _ := faultEngine(t, work)
	wavs := filepath.Join(work, "wavs")
	scripts := map[string]string{
		"hang":  `exec sleep 300`,
		"crash": `echo "engine exploded on purpose" >&2; exit 1`,
		"sig":   `kill -9 $$`,
		"flood": `head -c 52428800 /dev/zero | tr '\0' 'E' >&2; exit 3`,
		"spout": `head -c 52428800 /dev/zero; exit 4`,
	}
	var cmds strings.Builder
	for _, name := range []string{"hang", "crash", "sig", "flood", "spout"} {
		p := filepath.Join(work, name)
		voiceScript(t, p, scripts[name])
		fmt.Fprintf(&cmds, "[[voice.commands]]\nname = %q\nargv = [%q, \"{out}\", \"{text}\"]\n", name, p)
	}
	cfg := fmt.Sprintf(`version = 1
[voice]
provider = "good"
sink = "dir:%s"
timeout = "1s"
[rules.rate_limit]
normal = "0s"
[[voice.commands]]
name = "good"
argv = [%q, "{out}", "{text}"]
%s`, wavs, engine, cmds.String())
	d := startDaemon(t, daemonOptions{Config: cfg, Env: map[string]string{"TALK_PROVIDER": "", "TALK_SINK": ""}})
	pid := d.cmd.Process.Pid
	warm := faultSpeak(t, d, map[string]any{"text": "warm up"})
	voiceWaitFile(t, d, wavs, warm)
	rssBefore, logBefore := faultRSS(t, pid), len(d.logs())

	cases := []struct{ provider, reason string }{
		{"hang", "killed after timeout of 1s"},
		{"crash", "engine exploded on purpose"},
		{"sig", "signal: killed"},
		{"flood", "exit status 3"},
		{"flood", "exit status 3"},
		{"flood", "exit status 3"},
		{"spout", "exit status 4"},
	}
	maxRSS := rssBefore
	for i, tc := range cases {
		bad := faultSpeak(t, d, map[string]any{"text": fmt.Sprintf("through %s %d", tc.provider, i), "provider": tc.provider})
		good := faultSpeak(t, d, map[string]any{"text": fmt.Sprintf("after %s %d", tc.provider, i)})
		e := voiceHistoryEntry(t, d, bad)
		reason := fmt.Sprint(e["reason"])
		// On a loaded machine pushing 50 MB through a pipe can outlast the 1 s timeout:
		// then the flood is killed, which is a clean failure too.
		timedOut := (tc.provider == "flood" || tc.provider == "spout") && strings.Contains(reason, "killed after timeout of 1s")
		if e["outcome"] != "failed" || !strings.Contains(reason, tc.reason) && !timedOut {
			t.Errorf("%s: history %v, want failed with %q", tc.provider, e, tc.reason)
		}
		if timedOut {
			t.Logf("%s %d: killed at the timeout before it finished", tc.provider, i)
		} else if tc.provider == "flood" && (len(reason) > 8<<10 || !strings.Contains(reason, "EEEE")) {
			t.Errorf("flood: reason of %d bytes, want the start of stderr within the 4 KiB bound", len(reason))
		}
		voiceWaitFile(t, d, wavs, good)
		if e := voiceHistoryEntry(t, d, good); e["outcome"] != "spoken" {
			t.Errorf("after %s: %v", tc.provider, e)
		}
		maxRSS = max(maxRSS, faultRSS(t, pid))
	}
	logGrowth := len(d.logs()) - logBefore
	t.Logf("RSS %d KiB before, %d KiB max during 150 MB of engine stderr and 50 MB of stdout; log grew %d bytes", rssBefore, maxRSS, logGrowth)
	if maxRSS > rssBefore+32<<10 {
		t.Errorf("RSS grew from %d to %d KiB", rssBefore, maxRSS)
	}
	if logGrowth > 64<<10 {
		t.Errorf("the log grew by %d bytes", logGrowth)
	}
	if status, _, _ := d.request(t, "GET", "/healthz", "", nil); status != http.StatusOK {
		t.Fatal("the daemon stopped serving")
	}
}

// TestFaultSIGTERMWithHangingProvider: /stop and SIGTERM while an engine hangs in synthesis.
//
// This was a product bug (docs/RELIABILITY.md, bug 1): Voice.Close stopped only the
// *playing* utterance, so a synthesising engine ran on until voice.timeout and /stop
// answered "nothing playing". Now /stop kills the engine at once and SIGTERM ends the
// daemon within shutdown_timeout (1 s here, voice.timeout 5 s), the engine killed and the
// announcement recorded as cut.
func TestFaultSIGTERMWithHangingProvider(t *testing.T) {
	t.Parallel()
	work := t.TempDir()
	hang := filepath.Join(work, "hang")
	pidFile := filepath.Join(work, "hang.pid")
	voiceScript(t, hang, `echo $$ > "`+pidFile+`"
exec sleep 300`)
	cfg := fmt.Sprintf(`version = 1
[server]
shutdown_timeout = "1s"
[voice]
provider = "hang"
timeout = "5s"
[[voice.commands]]
name = "hang"
argv = [%q, "{out}", "{text}"]
`, hang)
	env := map[string]string{"TALK_PROVIDER": ""}
	d := startDaemon(t, daemonOptions{Config: cfg, Env: env})
	id := faultSpeak(t, d, map[string]any{"text": "never ends"})
	enginePID := faultWaitPID(t, pidFile)
	// Stop reaches an utterance that is still being synthesized: the engine is killed.
	status, stop := d.postJSON(t, "/stop", "", nil)
	if status != http.StatusOK || stop["stopped"] != true || stop["id"] != id {
		t.Fatalf("POST /stop during synthesis: %d %v", status, stop)
	}
	for deadline := time.Now().Add(3 * time.Second); !voiceProcessGone(enginePID); {
		if time.Now().After(deadline) {
			t.Fatalf("the engine %d survived POST /stop", enginePID)
		}
		time.Sleep(20 * time.Millisecond)
	}
	// A second announcement hangs again; SIGTERM ends it within shutdown_timeout.
	os.Remove(pidFile)
	faultSpeak(t, d, map[string]any{"text": "never ends either", "now": true})
	enginePID = faultWaitPID(t, pidFile)
	start := time.Now()
	code := d.terminate(t)
	took := time.Since(start)
	t.Logf("SIGTERM with a hanging engine: exit %d after %v (shutdown_timeout 1s, voice.timeout 5s)", code, took.Round(10*time.Millisecond))
	if took > 3*time.Second {
		t.Errorf("shutdown took %v, more than shutdown_timeout 1s plus margin", took)
	}
	if code != 0 {
		t.Errorf("exit code %d; log:\n%s", code, d.logs())
	}
	for deadline := time.Now().Add(3 * time.Second); !voiceProcessGone(enginePID); {
		if time.Now().After(deadline) {
			t.Fatalf("the hanging engine %d survived the shutdown", enginePID)
		}
		time.Sleep(20 * time.Millisecond)
	}
	d2 := startDaemon(t, daemonOptions{Config: cfg, Env: env, Home: d.Home})
	e := faultHistory(t, d2)[id]
	if e == nil || e["outcome"] == "queued" || e["outcome"] == "speaking" || e["outcome"] == "spoken" {
		t.Fatalf("history of the announcement cut by the shutdown: %v", e)
	}
	t.Logf("history after the shutdown: %v (%v)", e["outcome"], e["reason"])
}

// TestFaultSecondDaemon: a second talkd on the same state directory refuses to start with
// a message naming the lock, and the first keeps serving.
func TestFaultSecondDaemon(t *testing.T) {
	t.Parallel()
	d := startDaemon(t, daemonOptions{})
	d2 := startDaemon(t, daemonOptions{Home: d.Home, ExpectFail: true})
	if code := d2.exitCode(t); code == 0 {
		t.Fatal("a second talkd started on the same state directory")
	}
	if !strings.Contains(d2.logs(), "is locked: is another talkd running with the same state directory?") {
		t.Errorf("message of the second talkd:\n%s", d2.logs())
	}
	if status, _, _ := d.request(t, "GET", "/healthz", "", nil); status != http.StatusOK {
		t.Fatal("the first talkd stopped serving")
	}
}

// TestFaultProviderHugeOutput: an engine that writes a 100 MB WAV (a valid header, then
// silence). The announcement is handled (the dir: sink keeps the file), and the test
// samples the daemon's RSS meanwhile.
//
// The output check reads only the WAV's first megabyte, so the daemon's memory does not
// follow the size of what an engine writes.
func TestFaultProviderHugeOutput(t *testing.T) {
	t.Parallel()
	work := t.TempDir()
	engine, _ := faultEngine(t, work)
	fixture := filepath.Join(work, "fixture.wav")
	huge := filepath.Join(work, "huge")
	voiceScript(t, huge, `{ head -c 44 "`+fixture+`"; head -c 104857600 /dev/zero; } > "$1"`)
	cfg := fmt.Sprintf(`version = 1
[voice]
provider = "good"
timeout = "20s"
[rules.rate_limit]
normal = "0s"
[[voice.commands]]
name = "good"
argv = [%q, "{out}", "{text}"]
[[voice.commands]]
name = "huge"
argv = [%q, "{out}", "{text}"]
`, engine, huge)
	d := startDaemon(t, daemonOptions{Config: cfg, Env: map[string]string{"TALK_PROVIDER": ""}})
	pid := d.cmd.Process.Pid
	warm := faultSpeak(t, d, map[string]any{"text": "warm up"})
	voiceHistoryEntry(t, d, warm)
	before := faultRSS(t, pid)
	peak := make(chan int)
	stop := make(chan struct{})
	go func() {
		m := 0
		for {
			select {
			case <-stop:
				peak <- m
				return
			case <-time.After(5 * time.Millisecond):
				if b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status"); err == nil {
					for _, line := range strings.Split(string(b), "\n") {
						if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
							n, _ := strconv.Atoi(f[1])
							m = max(m, n)
						}
					}
				}
			}
		}
	}()
	big := faultSpeak(t, d, map[string]any{"text": "a hundred megabytes", "provider": "huge"})
	e := voiceHistoryEntry(t, d, big)
	after := faultSpeak(t, d, map[string]any{"text": "after the huge one"})
	e2 := voiceHistoryEntry(t, d, after)
	close(stop)
	maxRSS := <-peak
	t.Logf("100 MB engine output (received %v, ended %v): %v (%v); RSS %d KiB before, peak %d KiB (+%d MiB); next: %v", e["received"], e["ended"], e["outcome"], e["reason"], before, maxRSS, (maxRSS-before)>>10, e2["outcome"])
	// The sink is null: a real engine's audio ends as synthesized, never as spoken.
	if e["outcome"] != "synthesized" && e["outcome"] != "failed" {
		t.Errorf("huge output: %v", e)
	}
	if e2["outcome"] != "synthesized" {
		t.Errorf("after the huge output: %v", e2)
	}
	if grew := (maxRSS - before) >> 10; grew > 30 {
		t.Errorf("RSS grew by %d MiB while checking a 100 MB output", grew)
	}
	if status, _, _ := d.request(t, "GET", "/healthz", "", nil); status != http.StatusOK {
		t.Fatal("the daemon stopped serving")
	}
}
