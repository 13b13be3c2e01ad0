package test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// cliResult is one finished run of the talk binary.
type cliResult struct {
	stdout, stderr string
	code           int
}

// talkRun runs the talk binary with env (nothing inherited except PATH, so the developer's
// TALK_URL, TALK_TOKEN or config cannot leak in), stdin and args.
func talkRun(t testing.TB, env map[string]string, stdin string, args ...string) cliResult {
	t.Helper()
	_, talk := binaries(t)
	home := t.TempDir()
	base := map[string]string{
		"HOME":            home,
		"XDG_CONFIG_HOME": filepath.Join(home, ".config"),
		"XDG_STATE_HOME":  filepath.Join(home, ".local", "state"),
		"PATH":            os.Getenv("PATH"),
		"TZ":              "UTC",
	}
	for k, v := range env {
		base[k] = v
	}
	cmd := exec.Command(talk, args...)
	for k, v := range base {
		if v != "" {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
	}
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	res := cliResult{stdout: out.String(), stderr: errb.String()}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		res.code = ee.ExitCode()
	default:
		t.Fatalf("run talk %v: %v", args, err)
	}
	return res
}

// talkAt runs talk against daemon d (through TALK_URL).
func talkAt(t testing.TB, d *daemon, stdin string, args ...string) cliResult {
	t.Helper()
	return talkRun(t, map[string]string{"TALK_URL": d.URL}, stdin, args...)
}

func (r cliResult) want(t testing.TB, code int, what string) {
	t.Helper()
	if r.code != code {
		t.Fatalf("%s: exit code %d, want %d\nstdout: %s\nstderr: %s", what, r.code, code, r.stdout, r.stderr)
	}
}

// jsonLine decodes --json output: exactly one JSON object on one line.
func (r cliResult) jsonLine(t testing.TB) map[string]any {
	t.Helper()
	out := strings.TrimSuffix(r.stdout, "\n")
	if out == "" || strings.Contains(out, "\n") {
		t.Fatalf("--json output is not one line: %q", r.stdout)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatalf("--json output is not a JSON object: %v\n%s", err, r.stdout)
	}
	return m
}

// TestCLISay: text from arguments and from stdin reaches the voice with the priority,
// language, now and provider flags; --json prints the daemon's answer.
func TestCLISay(t *testing.T) {
	t.Parallel()
	d := startDaemon(t, daemonOptions{Config: `version = 1
[voice]
fake_duration = "10ms"
[rules.rate_limit]
low = "0s"
normal = "0s"
`})

	r := talkAt(t, d, "", "say", "-p", "high", "-l", "de", "Build", "kaputt")
	r.want(t, 0, "say with arguments")
	if !strings.HasPrefix(r.stdout, "queued: ") || !strings.Contains(r.stdout, "(position ") {
		t.Fatalf("say output %q", r.stdout)
	}
	id := strings.Fields(r.stdout)[1]
	recs := d.waitSpoken(t, 1)
	if got := recs[0]; got.Text != "Build kaputt" || got.Priority != "high" || got.Lang != "de" || got.ID != id || got.Caller != "local" {
		t.Fatalf("spoken %+v, want text %q, high, de, id %s", got, "Build kaputt", id)
	}

	r = talkAt(t, d, "  from a pipe\nsecond line  \n", "say", "--priority=low", "--lang", "en", "--now", "--json")
	r.want(t, 0, "say from stdin")
	m := r.jsonLine(t)
	if m["status"] != "queued" || m["id"] == "" || m["position"] == nil || m["message"] == "" {
		t.Fatalf("say --json: %v", m)
	}
	recs = d.waitSpoken(t, 2)
	if got := recs[1]; got.Text != "from a pipe\nsecond line" || got.Priority != "low" || got.Lang != "en" || got.ID != m["id"] {
		t.Fatalf("spoken from stdin %+v", got)
	}

	r = talkAt(t, d, "", "say", "--provider", "fake", "--", "-p is text here")
	r.want(t, 0, "say with --provider and --")
	recs = d.waitSpoken(t, 3)
	if got := recs[2]; got.Text != "-p is text here" || got.Provider != "fake" || got.Priority != "normal" {
		t.Fatalf("spoken %+v", got)
	}

	// TALK_AGENT names the caller's agent (X-Talk-Agent).
	talkRun(t, map[string]string{"TALK_URL": d.URL, "TALK_AGENT": "post-commit hook"}, "", "say", "labelled").want(t, 0, "say with TALK_AGENT")
	if got := d.waitSpoken(t, 4)[3]; got.Text != "labelled" || got.Agent != "post-commit hook" {
		t.Fatalf("spoken %+v, want agent %q", got, "post-commit hook")
	}

	// A provider the daemon does not know is refused by the daemon: exit 4 naming the field.
	r = talkAt(t, d, "", "say", "--provider", "nope", "hello")
	r.want(t, 4, "unknown provider")
	if !strings.Contains(r.stderr, "invalid_field") || !strings.Contains(r.stderr, "provider") {
		t.Fatalf("unknown provider stderr: %s", r.stderr)
	}
}

// TestCLIStatusAndVoices: human and --json status, voices, version.
func TestCLIStatusAndVoices(t *testing.T) {
	t.Parallel()
	d := startDaemon(t, daemonOptions{})

	r := talkAt(t, d, "", "status")
	r.want(t, 0, "status")
	for _, want := range []string{"talkd ", d.URL, "local mode", "not muted", "quiet hours", "0 waiting", "provider", "fake", "rate limit", "low 30s", "cors", "closed"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("status output lacks %q:\n%s", want, r.stdout)
		}
	}
	m := talkAt(t, d, "", "status", "--json").jsonLine(t)
	for _, k := range []string{"version", "mute", "quiet_hours", "queue", "voice", "cors", "mcp", "plans", "caller"} {
		if _, ok := m[k]; !ok {
			t.Errorf("status --json lacks %q: %v", k, m)
		}
	}
	// --json before the command means the same.
	if m2 := talkAt(t, d, "", "--json", "status").jsonLine(t); m2["version"] != m["version"] {
		t.Errorf("talk --json status: %v", m2)
	}

	r = talkAt(t, d, "", "voices")
	r.want(t, 0, "voices")
	if !strings.Contains(r.stdout, "provider") || !strings.Contains(r.stdout, "fake") || !strings.Contains(r.stdout, "sink") {
		t.Errorf("voices output:\n%s", r.stdout)
	}
	vm := talkAt(t, d, "", "voices", "--json").jsonLine(t)
	if len(vm) == 0 {
		t.Errorf("voices --json is empty")
	}

	r = talkAt(t, d, "", "version")
	r.want(t, 0, "version")
	if !strings.Contains(r.stdout, "talk ") || !strings.Contains(r.stdout, "talkd "+m["version"].(string)) {
		t.Errorf("version output:\n%s", r.stdout)
	}
	vj := talkAt(t, d, "", "version", "--json").jsonLine(t)
	if vj["talkd"] != m["version"] || vj["talk"] == "" || vj["url"] != d.URL {
		t.Errorf("version --json: %v", vj)
	}
}

// TestCLIControl: mute (muted say exits 0 with a note), unmute, stop, history.
func TestCLIControl(t *testing.T) {
	t.Parallel()
	d := startDaemon(t, daemonOptions{Config: `version = 1
[voice]
fake_duration = "20s"
[rules.rate_limit]
normal = "0s"
`})

	r := talkAt(t, d, "", "mute", "30m", "--json")
	r.want(t, 0, "mute 30m")
	m := r.jsonLine(t)
	if m["muted"] != true || m["until"] == nil {
		t.Fatalf("mute --json: %v", m)
	}
	until, err := time.Parse(time.RFC3339Nano, m["until"].(string))
	if err != nil {
		t.Fatal(err)
	}
	if left := time.Until(until); left < 29*time.Minute || left > 31*time.Minute {
		t.Fatalf("muted for %v, want 30m", left)
	}

	r = talkAt(t, d, "", "say", "--now", "while muted")
	r.want(t, 0, "say while muted")
	if r.stdout != "" || !strings.Contains(r.stderr, "muted") {
		t.Fatalf("say while muted: stdout %q stderr %q", r.stdout, r.stderr)
	}

	r = talkAt(t, d, "", "status")
	if !strings.Contains(r.stdout, "muted until") {
		t.Errorf("status while muted:\n%s", r.stdout)
	}
	r = talkAt(t, d, "", "unmute")
	r.want(t, 0, "unmute")
	if strings.TrimSpace(r.stdout) != "not muted" {
		t.Fatalf("unmute output %q", r.stdout)
	}
	r = talkAt(t, d, "", "mute", "--until", "23:59", "--json")
	r.want(t, 0, "mute --until")
	if m := r.jsonLine(t); m["muted"] != true || !strings.Contains(m["until"].(string), "T23:59:00") {
		t.Fatalf("mute --until 23:59: %v", m)
	}
	r = talkAt(t, d, "", "mute")
	r.want(t, 0, "mute without end")
	if !strings.Contains(r.stdout, "until unmuted") {
		t.Fatalf("mute output %q", r.stdout)
	}
	talkAt(t, d, "", "unmute").want(t, 0, "unmute")

	// stop ends what is speaking (fake_duration 20s), recorded as interrupted.
	r = talkAt(t, d, "", "say", "a long announcement")
	r.want(t, 0, "say long")
	id := strings.Fields(r.stdout)[1]
	cliWaitFor(t, "the announcement to start speaking", func() bool {
		_, st := d.getJSON(t, "/status")
		q, _ := st["queue"].(map[string]any)
		sp, _ := q["speaking"].(map[string]any)
		return sp != nil && sp["id"] == id
	})
	r = talkAt(t, d, "", "stop")
	r.want(t, 0, "stop")
	if strings.TrimSpace(r.stdout) != "stopped "+id {
		t.Fatalf("stop output %q, want %q", r.stdout, "stopped "+id)
	}
	if recs := d.waitSpoken(t, 1); !recs[0].Interrupted || recs[0].ID != id {
		t.Fatalf("stopped utterance recorded as %+v", recs[0])
	}
	if m := talkAt(t, d, "", "stop", "--json").jsonLine(t); m["stopped"] != false {
		t.Fatalf("second stop: %v", m)
	}

	r = talkAt(t, d, "", "history", "-n", "5")
	r.want(t, 0, "history")
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], "while muted") || !strings.Contains(lines[0], "muted") ||
		!strings.Contains(lines[1], id) || !strings.Contains(lines[1], "a long announcement") {
		t.Fatalf("history (oldest first) :\n%s", r.stdout)
	}
	h := talkAt(t, d, "", "history", "--json", "-n", "1").jsonLine(t)
	entries, _ := h["entries"].([]any)
	if len(entries) != 1 {
		t.Fatalf("history -n 1 --json: %v", h)
	}
	if e := entries[0].(map[string]any); e["id"] != id || e["outcome"] == "" || e["caller"] != "local" {
		t.Fatalf("newest history entry %v", e)
	}
}

// TestCLIDiscardedIsNotAFailure: a second low announcement inside the rate limit and one
// in quiet hours exit 0 with the reason on stderr.
func TestCLIDiscardedIsNotAFailure(t *testing.T) {
	t.Parallel()
	d := startDaemon(t, daemonOptions{Config: "version = 1\n[rules]\non_rate_limit = \"discard\"\n"})
	talkAt(t, d, "", "say", "-p", "low", "first").want(t, 0, "first low")
	r := talkAt(t, d, "", "say", "-p", "low", "second")
	r.want(t, 0, "second low inside the rate limit")
	if r.stdout != "" || !strings.Contains(r.stderr, "discarded: rate_limit") {
		t.Fatalf("rate-limited say: stdout %q stderr %q", r.stdout, r.stderr)
	}
	r = talkAt(t, d, "", "say", "--json", "-p", "low", "third")
	r.want(t, 0, "third low --json")
	if m := r.jsonLine(t); m["status"] != "discarded" || m["reason"] != "rate_limit" {
		t.Fatalf("say --json discarded: %v", m)
	}

	q := startDaemon(t, daemonOptions{Config: "version = 1\n[rules]\nquiet_hours = [\"" + quietAroundNow() + "\"]\n", Env: utcEnv(nil)})
	r = talkAt(t, q, "", "say", "in quiet hours")
	r.want(t, 0, "say in quiet hours")
	if !strings.Contains(r.stderr, "quiet_hours") {
		t.Fatalf("quiet hours stderr %q", r.stderr)
	}
}

// TestCLIExitCodes: usage 2, unreachable 3 (with the hint and the URL), refused 4.
func TestCLIExitCodes(t *testing.T) {
	t.Parallel()
	d := startDaemon(t, daemonOptions{})

	usage := [][]string{
		{},
		{"frobnicate"},
		{"say", "-p", "urgent", "x"},
		{"say", "--rate", "fast", "x"},
		{"say", "--bogus", "x"},
		{"say"}, // empty stdin
		{"mute", "soon"},
		{"mute", "30m", "--until", "14:00"},
		{"history", "-n", "0"},
		{"status", "extra"},
		{"help", "frobnicate"},
	}
	for _, args := range usage {
		r := talkAt(t, d, "", args...)
		r.want(t, 2, "talk "+strings.Join(args, " "))
		if !strings.Contains(r.stderr, "talk") || r.stdout != "" {
			t.Errorf("talk %v: stdout %q stderr %q", args, r.stdout, r.stderr)
		}
	}
	if recs := d.spoken(t); len(recs) != 0 {
		t.Fatalf("usage errors reached the voice: %+v", recs)
	}

	// Help is not an error.
	r := talkRun(t, nil, "", "--help")
	r.want(t, 0, "--help")
	for _, want := range []string{"Exit codes", "3  daemon unreachable", "4  refused", "TALK_TOKEN", "say"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("--help lacks %q", want)
		}
	}
	if r := talkRun(t, nil, "", "say", "-h"); r.code != 0 || !strings.Contains(r.stdout, "-priority") {
		t.Errorf("say -h: %d %q", r.code, r.stdout)
	}

	// Unreachable: a port nobody listens on.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + ln.Addr().String()
	ln.Close()
	r = talkRun(t, map[string]string{"TALK_URL": dead}, "", "say", "hello")
	r.want(t, 3, "unreachable")
	if !strings.Contains(r.stderr, "start it with: talkd") || !strings.Contains(r.stderr, dead) {
		t.Fatalf("unreachable stderr: %s", r.stderr)
	}
	// --url beats TALK_URL.
	talkRun(t, map[string]string{"TALK_URL": dead}, "", "--url", d.URL, "status").want(t, 0, "--url beats TALK_URL")

	// A daemon that accepts but never answers: the time limit ends the wait, exit 3.
	hang, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer hang.Close()
	go func() {
		for {
			c, err := hang.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	start := time.Now()
	r = talkRun(t, nil, "", "--url", "http://"+hang.Addr().String(), "--timeout", "300ms", "status")
	r.want(t, 3, "hanging daemon")
	if !strings.Contains(r.stderr, "did not answer within 300ms") || time.Since(start) > 10*time.Second {
		t.Fatalf("hanging daemon: %s (after %v)", r.stderr, time.Since(start))
	}

	// Refused: a bad field → the daemon's code and message, exit 4 (long texts are cut,
	// not refused: TestVoiceLongTextIsCut).
	r = talkAt(t, d, "", "say", "--provider", "nosuch", "hello")
	r.want(t, 4, "unknown provider")
	if !strings.Contains(r.stderr, "invalid_field") || !strings.Contains(r.stderr, "nosuch") {
		t.Fatalf("unknown provider stderr: %s", r.stderr)
	}
	r = talkAt(t, d, "", "say", "--provider", "nosuch", "--json", "hello")
	r.want(t, 4, "unknown provider --json")
	if m := r.jsonLine(t); m["error"].(map[string]any)["field"] != "provider" {
		t.Fatalf("unknown provider --json: %v", m)
	}
	r = talkAt(t, d, "", "mute", "--until", "2001-01-01T00:00:00Z")
	r.want(t, 4, "mute until the past")
	if !strings.Contains(r.stderr, "past") {
		t.Fatalf("mute until the past: %s", r.stderr)
	}
}

// TestCLIURLFromConfigAndToken: without --url or TALK_URL talk finds the daemon through the
// config's listen address (env overrides included); TALK_TOKEN is sent as a bearer token.
func TestCLIURLFromConfigAndToken(t *testing.T) {
	t.Parallel()
	token := strings.Repeat("s3cret-", 6)
	cfg := `version = 1
[[clients]]
id = "ci"
token_env = "CI_TALK_TOKEN"
speak = true
control = true
read = ["*"]
`
	d := startDaemon(t, daemonOptions{Config: cfg, Env: map[string]string{"CI_TALK_TOKEN": token}})

	env := map[string]string{"TALK_LISTEN": d.Addr}
	r := talkRun(t, env, "", "status")
	r.want(t, 4, "shared mode without a token")
	if !strings.Contains(r.stderr, "unauthorized") || !strings.Contains(r.stderr, "TALK_TOKEN") {
		t.Fatalf("no token: %s", r.stderr)
	}
	env["TALK_TOKEN"] = token
	r = talkRun(t, env, "", "status", "--json")
	r.want(t, 0, "with TALK_TOKEN")
	if m := r.jsonLine(t); m["caller"] != "ci" || m["mode"] != "shared" {
		t.Fatalf("status as ci: %v", m)
	}
	talkRun(t, env, "", "say", "token works").want(t, 0, "say with token")
	if recs := d.waitSpoken(t, 1); recs[0].Caller != "ci" {
		t.Fatalf("spoken as %q, want ci", recs[0].Caller)
	}

	// A broken config: talk warns and falls back to the default address.
	bad := filepath.Join(t.TempDir(), "bad.toml")
	if err := os.WriteFile(bad, []byte("version = 1\n[server]\nlisten = 7\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r = talkRun(t, map[string]string{"TALK_CONFIG": bad}, "", "version", "--timeout", "500ms")
	r.want(t, 0, "version with a broken config")
	if !strings.Contains(r.stderr, "cannot be read") || !strings.Contains(r.stderr, "bad.toml") || !strings.Contains(r.stderr, "127.0.0.1:7077") {
		t.Fatalf("broken config warning: %s", r.stderr)
	}
}

// cliWaitFor polls cond for up to 10 s.
func cliWaitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// smallPlan has warnings with and without lines and an overloaded assignee.
const smallPlan = `[ ] #root: Root (M) @anna
  - [x] #a: A (S) @anna
  - [k] #b: B (S) @ben
  - [ ] #c: C (S)
  | [ ] #d: D (XS) @ben
`

// TestCLIPlans: plans, plan show, plan inspect (human and --json) and plan set-status with
// its guard, against plan files configured in a live daemon.
func TestCLIPlans(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	example, err := os.ReadFile(filepath.Join(sharedDir(t), "werkbaum", "examples", "werkbaum.werkbaum"))
	if err != nil {
		t.Fatalf("the example plan: %v", err)
	}
	big, small := filepath.Join(dir, "werkbaum.werkbaum"), filepath.Join(dir, "small.werkbaum")
	if err := os.WriteFile(big, example, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(small, []byte(smallPlan), 0o644); err != nil {
		t.Fatal(err)
	}
	d := startDaemon(t, daemonOptions{Config: `version = 1
[[plans]]
key = "werkbaum"
path = "` + big + `"
[[plans]]
key = "small"
path = "` + small + `"
`})

	r := talkAt(t, d, "", "plans")
	r.want(t, 0, "plans")
	if !strings.Contains(r.stdout, "werkbaum") || !strings.Contains(r.stdout, "small") || !strings.Contains(r.stdout, "write") {
		t.Fatalf("plans:\n%s", r.stdout)
	}
	m := talkAt(t, d, "", "plans", "--json").jsonLine(t)
	if list, _ := m["plans"].([]any); len(list) != 2 || list[0].(map[string]any)["key"] != "werkbaum" || list[0].(map[string]any)["nodes"] == nil {
		t.Fatalf("plans --json: %v", m)
	}

	r = talkAt(t, d, "", "plan", "show", "werkbaum")
	r.want(t, 0, "plan show")
	if r.stdout != string(example) {
		t.Fatalf("plan show differs from the file (%d vs %d bytes)", len(r.stdout), len(example))
	}
	m = talkAt(t, d, "", "plan", "show", "werkbaum", "--json").jsonLine(t)
	sum := sha256.Sum256(example)
	if b, _ := m["base"].(map[string]any); b == nil || b["checksum"] != hex.EncodeToString(sum[:]) || m["text"] != string(example) {
		t.Fatalf("plan show --json base %v", m["base"])
	}

	r = talkAt(t, d, "", "plan", "inspect", "small")
	r.want(t, 0, "plan inspect")
	for _, want := range []string{
		"plan small: revision 1, 5 nodes", "    2    [x] A  #a  (S) @anna", "line 3    unknownStatus", "assigneeOverload",
		"cheapest path (exact)", "station line 5", "overloaded: ben",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("plan inspect lacks %q:\n%s", want, r.stdout)
		}
	}
	m = talkAt(t, d, "", "plan", "inspect", "small", "--json").jsonLine(t)
	nodes, _ := m["nodes"].([]any)
	path, _ := m["path"].(map[string]any)
	if len(nodes) != 5 || m["warnings"] == nil || path == nil || path["stations"] == nil || m["base"] == nil {
		t.Fatalf("plan inspect --json: %v", m)
	}
	r = talkAt(t, d, "", "plan", "inspect", "werkbaum", "--id", "not.tag")
	r.want(t, 0, "plan inspect --id")
	if !strings.Contains(r.stdout, "#not.tag.lens") || strings.Contains(r.stdout, "#ed.parser") {
		t.Fatalf("subtree not.tag:\n%s", r.stdout)
	}

	// set-status writes the file and the change is visible to inspect.
	r = talkAt(t, d, "", "plan", "set-status", "werkbaum", "not.tag.lens", "done")
	r.want(t, 0, "set-status")
	if !strings.Contains(r.stdout, "#not.tag.lens set to done, now revision") {
		t.Fatalf("set-status output %q", r.stdout)
	}
	if got, _ := os.ReadFile(big); !strings.Contains(string(got), "[x] #not.tag.lens:") {
		t.Fatalf("the file does not carry the new status")
	}
	m = talkAt(t, d, "", "plan", "inspect", "werkbaum", "--id", "not.tag.lens", "--json").jsonLine(t)
	if n := m["nodes"].([]any)[0].(map[string]any); n["id"] != "not.tag.lens" || n["status"] != "done" {
		t.Fatalf("after set-status: %v", n)
	}

	// The [^] guard refuses (exit 4, naming the switch) and leaves the file alone.
	before, _ := os.ReadFile(big)
	r = talkAt(t, d, "", "plan", "set-status", "werkbaum", "not.ticket", "^")
	r.want(t, 4, "set-status to [^] without --allow-prod")
	if !strings.Contains(r.stderr, "--allow-prod") {
		t.Fatalf("guard refusal: %s", r.stderr)
	}
	if after, _ := os.ReadFile(big); !bytes.Equal(before, after) {
		t.Fatal("a refused write changed the file")
	}
	r = talkAt(t, d, "", "plan", "set-status", "--allow-prod", "--json", "werkbaum", "not.ticket", "^")
	r.want(t, 0, "set-status --allow-prod")
	if m := r.jsonLine(t); m["changed"] != true || m["base"] == nil {
		t.Fatalf("set-status --json: %v", m)
	}
	if got, _ := os.ReadFile(big); !strings.Contains(string(got), "[^] #not.ticket:") {
		t.Fatal("the file does not carry [^] after --allow-prod")
	}

	for _, args := range [][]string{
		{"plan", "inspect", "nope"}, {"plan", "set-status", "werkbaum", "no.such.id", "done"},
		{"plan", "set-status", "werkbaum", "not.tag", "weird"},
	} {
		if r := talkAt(t, d, "", args...); r.code != 4 || r.stderr == "" {
			t.Errorf("talk %v: exit %d, stderr %q; want 4 with the daemon's reason", args, r.code, r.stderr)
		}
	}
	for _, args := range [][]string{
		{"plan"}, {"plan", "show"}, {"plan", "frob", "werkbaum"}, {"plan", "show", "werkbaum", "--allow-prod"},
		{"plan", "set-status", "werkbaum", "a"}, {"plans", "extra"},
	} {
		talkAt(t, d, "", args...).want(t, 2, "talk "+strings.Join(args, " "))
	}
}

// TestCLIMCPBridge: `talk mcp` reaches the daemon named by --url (given after the command)
// and answers MCP on stdout, one message per line.
// TestCLIPlansWithoutPlans: a daemon with no plan configured has no plan tools at all, so
// talk says that no plan is configured (and how to add one) instead of passing on the
// bare "unknown tool" refusal: `talk plans` lists none and exits 0, a command on one plan
// is refused (4) naming the config entry.
func TestCLIPlansWithoutPlans(t *testing.T) {
	t.Parallel()
	d := startDaemon(t, daemonOptions{})

	r := talkAt(t, d, "", "plans")
	r.want(t, 0, "plans without plans")
	if !strings.Contains(r.stdout, "no plans are configured") || r.stderr != "" {
		t.Errorf("plans without plans: stdout %q stderr %q", r.stdout, r.stderr)
	}
	if m := talkAt(t, d, "", "plans", "--json").jsonLine(t); m["plans"] == nil || len(m["plans"].([]any)) != 0 {
		t.Errorf("plans --json without plans: %v", m)
	}
	for _, args := range [][]string{{"plan", "show", "werkbaum"}, {"plan", "inspect", "werkbaum"}, {"plan", "set-status", "werkbaum", "n1", "done"}} {
		r := talkAt(t, d, "", args...)
		r.want(t, 4, strings.Join(args, " "))
		if !strings.Contains(r.stderr, "none is configured") || !strings.Contains(r.stderr, "[[plans]]") || strings.Contains(r.stderr, "unknown tool") {
			t.Errorf("%v without plans: stderr %q", args, r.stderr)
		}
	}
}

func TestCLIMCPBridge(t *testing.T) {
	t.Parallel()
	d := startDaemon(t, daemonOptions{})
	in := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"cli-test","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"speak","arguments":{"text":"via the bridge"}}}
`
	r := talkRun(t, nil, in, "mcp", "--url", d.URL)
	r.want(t, 0, "talk mcp")
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if len(lines) != 2 {
		t.Fatalf("talk mcp wrote %d lines, want 2 answers:\n%s\nstderr: %s", len(lines), r.stdout, r.stderr)
	}
	var init, call struct {
		ID     int `json:"id"`
		Result struct {
			ServerInfo struct{ Name string }   `json:"serverInfo"`
			Content    []struct{ Text string } `json:"content"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(lines[0]), &init); err != nil || init.ID != 1 || init.Result.ServerInfo.Name != "talkd" {
		t.Fatalf("initialize answer %s (%v)", lines[0], err)
	}
	if err := json.Unmarshal([]byte(lines[1]), &call); err != nil || call.ID != 2 || len(call.Result.Content) == 0 || !strings.HasPrefix(call.Result.Content[0].Text, "queued: ") {
		t.Fatalf("speak answer %s (%v)", lines[1], err)
	}
	if rec := d.waitSpoken(t, 1)[0]; rec.Text != "via the bridge" || rec.Agent != "cli-test" {
		t.Fatalf("spoken through the bridge: %+v", rec)
	}
}

// BenchmarkCLIStatus measures one whole `talk status --json` invocation against a live
// daemon: process start, config lookup, one HTTP round trip, output. This is what a git
// hook or shell prompt pays per call.
func BenchmarkCLIStatus(b *testing.B) {
	d := startDaemon(b, daemonOptions{})
	_, talk := binaries(b)
	env := []string{"TALK_URL=" + d.URL, "HOME=" + b.TempDir(), "PATH=" + os.Getenv("PATH")}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		cmd := exec.Command(talk, "status", "--json")
		cmd.Env = env
		if out, err := cmd.Output(); err != nil || len(out) == 0 {
			b.Fatalf("talk status: %v", err)
		}
	}
}
