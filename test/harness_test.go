// Package test holds talkd's process-boundary tests: they build the real binaries, start
// talkd on an ephemeral loopback port with an isolated HOME and XDG directories and the
// fake voice provider, talk to it over real HTTP, and observe what was spoken through the
// fake provider's JSON-lines log (or the WAV files of a dir: sink).
package test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

var (
	buildOnce sync.Once
	binDir    string
	buildErr  error
)

// binaries builds talkd and talk once per test process and returns their paths.
func binaries(t testing.TB) (talkd, talk string) {
	t.Helper()
	buildOnce.Do(func() {
		binDir, buildErr = os.MkdirTemp("", "talkd-bin-")
		if buildErr != nil {
			return
		}
		for _, name := range []string{"talkd", "talk"} {
			cmd := exec.Command("go", "build", "-o", filepath.Join(binDir, name), "./cmd/"+name)
			cmd.Dir = repoRoot()
			if out, err := cmd.CombinedOutput(); err != nil {
				buildErr = fmt.Errorf("go build %s: %v\n%s", name, err, out)
				return
			}
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return filepath.Join(binDir, "talkd"), filepath.Join(binDir, "talk")
}

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// repoRoot is the module root (the test package lives one level below it).
func repoRoot() string {
	wd, _ := os.Getwd()
	return filepath.Dir(wd)
}

// sharedDir is the folder of the upstream contracts: $TALK_SHARED_DIR, else ../shared beside
// the checkout. Every test that reads werkbaum/examples from it gets the folder through
// here, the one place that decides what happens without it: a fresh clone has no
// ../shared, so the test is skipped with a message naming the missing folder and
// TALK_SHARED_DIR; with TALK_SHARED_DIR set (CI), a missing folder fails the test, since
// the examples were asked for.
func sharedDir(t testing.TB) string {
	t.Helper()
	dir := os.Getenv("TALK_SHARED_DIR")
	explicit := dir != ""
	if !explicit {
		dir = filepath.Join(filepath.Dir(repoRoot()), "shared")
	}
	examples := filepath.Join(dir, "werkbaum", "examples")
	if fi, err := os.Stat(examples); err != nil || !fi.IsDir() {
		if explicit {
			t.Fatalf("TALK_SHARED_DIR=%s has no werkbaum/examples folder (%s)", dir, examples)
		}
		t.Skipf("needs the upstream examples: %s not found (a fresh clone has no ../shared); set TALK_SHARED_DIR to the folder that holds werkbaum/examples", examples)
	}
	return dir
}

// daemonOptions configure one talkd process.
type daemonOptions struct {
	// Config is written to $XDG_CONFIG_HOME/talk/config.toml; empty = no file (embedded defaults).
	Config string
	// Env adds or overrides environment variables (TALK_PROVIDER=fake, TALK_SINK=null and
	// TALK_LISTEN=127.0.0.1:0 are preset; set a key to "" to unset it).
	Env map[string]string
	// Home reuses the directories of an earlier daemon (a restart); empty = fresh.
	Home string
	// ExpectFail starts the process and waits for it to exit instead of to listen.
	ExpectFail bool
	// Wrap runs talkd through a command that execs it (e.g. prlimit --nofile=256 --).
	Wrap []string
}

// daemon is one running talkd.
type daemon struct {
	URL      string // http://127.0.0.1:PORT
	Addr     string // 127.0.0.1:PORT
	Home     string
	StateDir string
	FakeLog  string
	Env      []string

	cmd    *exec.Cmd
	stderr *syncBuffer
	exited chan struct{}
	exit   error
}

type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

var listeningRe = regexp.MustCompile(`msg=listening addr=(\S+)`)

// daemonEnv builds the isolated environment of a daemon living in home.
func daemonEnv(home string, extra map[string]string) []string {
	env := map[string]string{
		"HOME":            home,
		"XDG_CONFIG_HOME": filepath.Join(home, ".config"),
		"XDG_STATE_HOME":  filepath.Join(home, ".local", "state"),
		"XDG_DATA_HOME":   filepath.Join(home, ".local", "share"),
		"TALK_LISTEN":     "127.0.0.1:0",
		"TALK_PROVIDER":   "fake",
		"TALK_SINK":       "null",
		"PATH":            os.Getenv("PATH"),
		"TZ":              os.Getenv("TZ"),
		"GOCOVERDIR":      os.Getenv("GOCOVERDIR"),
	}
	for k, v := range extra {
		env[k] = v
	}
	var out []string
	for k, v := range env {
		if v != "" {
			out = append(out, k+"="+v)
		}
	}
	return out
}

// startDaemon starts talkd and waits until it listens (or, with ExpectFail, until it exits).
// The daemon is stopped with SIGTERM when the test ends.
func startDaemon(t testing.TB, opts daemonOptions) *daemon {
	t.Helper()
	talkd, _ := binaries(t)
	home := opts.Home
	if home == "" {
		home = t.TempDir()
	}
	d := &daemon{
		Home:     home,
		StateDir: filepath.Join(home, ".local", "state", "talk"),
		stderr:   &syncBuffer{},
		exited:   make(chan struct{}),
	}
	if v, ok := opts.Env["TALK_STATE_DIR"]; ok && v != "" {
		d.StateDir = v
	}
	d.FakeLog = filepath.Join(d.StateDir, "fake-voice.jsonl")
	if opts.Config != "" {
		dir := filepath.Join(home, ".config", "talk")
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "config.toml"), []byte(opts.Config), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	d.Env = daemonEnv(home, opts.Env)
	d.cmd = exec.Command(talkd)
	if len(opts.Wrap) > 0 {
		d.cmd = exec.Command(opts.Wrap[0], append(opts.Wrap[1:], talkd)...)
	}
	d.cmd.Env = d.Env
	d.cmd.Stderr = d.stderr
	d.cmd.Stdout = d.stderr
	if err := d.cmd.Start(); err != nil {
		t.Fatalf("start talkd: %v", err)
	}
	go func() {
		d.exit = d.cmd.Wait()
		close(d.exited)
	}()
	if opts.ExpectFail {
		select {
		case <-d.exited:
			return d
		case <-time.After(15 * time.Second):
			d.cmd.Process.Kill()
			t.Fatalf("talkd did not exit; log:\n%s", d.stderr.String())
		}
	}
	deadline := time.After(20 * time.Second)
	for {
		if m := listeningRe.FindStringSubmatch(d.stderr.String()); m != nil {
			d.Addr = m[1]
			d.URL = "http://" + d.Addr
			break
		}
		select {
		case <-d.exited:
			t.Fatalf("talkd exited before listening (%v); log:\n%s", d.exit, d.stderr.String())
		case <-deadline:
			d.cmd.Process.Kill()
			t.Fatalf("talkd did not start listening; log:\n%s", d.stderr.String())
		case <-time.After(10 * time.Millisecond):
		}
	}
	t.Cleanup(func() {
		select {
		case <-d.exited:
			return
		default:
		}
		d.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-d.exited:
		case <-time.After(15 * time.Second):
			d.cmd.Process.Kill()
			<-d.exited
		}
		if t.Failed() {
			t.Logf("talkd log:\n%s", d.stderr.String())
		}
	})
	return d
}

// logs returns everything the daemon wrote so far.
// logBatchWait is longer than talkd holds its info lines (cmd/talkd logbuf.go: at most
// 10 ms): after it, the lines of every request already answered are in the log.
const logBatchWait = 30 * time.Millisecond

// logs returns what talkd has logged so far, including the info lines of the requests
// answered before the call (a running daemon writes them in batches).
func (d *daemon) logs() string {
	select {
	case <-d.exited:
	default:
		time.Sleep(logBatchWait)
	}
	return d.stderr.String()
}

// exitCode waits for the process to end and returns its exit code.
func (d *daemon) exitCode(t testing.TB) int {
	t.Helper()
	select {
	case <-d.exited:
	case <-time.After(20 * time.Second):
		t.Fatal("talkd did not exit")
	}
	return d.cmd.ProcessState.ExitCode()
}

// terminate sends SIGTERM and waits for the exit code.
func (d *daemon) terminate(t testing.TB) int {
	t.Helper()
	d.cmd.Process.Signal(syscall.SIGTERM)
	return d.exitCode(t)
}

// kill ends the daemon with SIGKILL, as a crash would.
func (d *daemon) kill(t testing.TB) {
	t.Helper()
	d.cmd.Process.Kill()
	<-d.exited
}

var httpClient = &http.Client{Timeout: 30 * time.Second}

// request sends one HTTP request with a raw body and returns status, headers and body.
func (d *daemon) request(t testing.TB, method, path, body string, headers map[string]string) (int, http.Header, []byte) {
	t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, d.URL+path, r)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range headers {
		if strings.EqualFold(k, "Host") {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := httpClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, b
}

// postJSON posts v (marshalled unless it is a string) and decodes the JSON answer into a map.
func (d *daemon) postJSON(t testing.TB, path string, v any, headers map[string]string) (int, map[string]any) {
	t.Helper()
	body, ok := v.(string)
	if !ok {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		body = string(b)
	}
	status, _, raw := d.request(t, http.MethodPost, path, body, headers)
	return status, decodeObject(t, raw)
}

// getJSON gets path and decodes the JSON answer.
func (d *daemon) getJSON(t testing.TB, path string) (int, map[string]any) {
	t.Helper()
	status, _, raw := d.request(t, http.MethodGet, path, "", nil)
	return status, decodeObject(t, raw)
}

func decodeObject(t testing.TB, raw []byte) map[string]any {
	t.Helper()
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("answer is not a JSON object: %v\n%s", err, raw)
	}
	return m
}

// spokenRecord is one line of the fake provider's log (see internal/queue/voice).
type spokenRecord struct {
	ID          string    `json:"id"`
	Text        string    `json:"text"`
	Lang        string    `json:"lang"`
	Priority    string    `json:"priority"`
	Provider    string    `json:"provider"`
	Caller      string    `json:"caller"`
	Agent       string    `json:"agent"`
	Start       time.Time `json:"start"`
	End         time.Time `json:"end"`
	Interrupted bool      `json:"interrupted"`
}

// spoken reads the fake provider's log as it is now.
func (d *daemon) spoken(t testing.TB) []spokenRecord {
	t.Helper()
	f, err := os.Open(d.FakeLog)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []spokenRecord
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var r spokenRecord
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("fake log line is not JSON: %v: %s", err, sc.Text())
		}
		out = append(out, r)
	}
	return out
}

// waitSpoken waits until the fake provider has recorded at least n utterances.
func (d *daemon) waitSpoken(t testing.TB, n int) []spokenRecord {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		recs := d.spoken(t)
		if len(recs) >= n {
			return recs
		}
		if time.Now().After(deadline) {
			t.Fatalf("waited for %d spoken utterances, got %d: %+v", n, len(recs), recs)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
