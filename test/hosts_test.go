package test

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// hostFixtures copies the populated host config files of testdata/hosts into a fresh home
// at the places the hosts read them, and returns the home and the files' original texts.
func hostFixtures(t *testing.T) (string, map[string]string) {
	t.Helper()
	home := t.TempDir()
	orig := map[string]string{}
	for src, dst := range map[string]string{
		"claude-settings.json": ".claude/settings.json",
		"claude.json":          ".claude.json",
		"codex-config.toml":    ".codex/config.toml",
		"gemini-settings.json": ".gemini/settings.json",
		"cursor-hooks.json":    ".cursor/hooks.json",
		"cursor-mcp.json":      ".cursor/mcp.json",
	} {
		raw, err := os.ReadFile(filepath.Join("testdata", "hosts", src))
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(home, dst)
		os.MkdirAll(filepath.Dir(p), 0o700)
		if err := os.WriteFile(p, raw, 0o600); err != nil {
			t.Fatal(err)
		}
		orig[dst] = string(raw)
	}
	return home, orig
}

func readHome(t *testing.T, home, rel string) string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(home, rel))
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

// TestHostSetupAllHosts: talk setup merges the hooks and MCP entry of every host into
// populated real config files (the hooks run this talk binary), a second run changes
// nothing, and talk setup --remove gives every file back byte for byte.
func TestHostSetupAllHosts(t *testing.T) {
	t.Parallel()
	_, talk := binaries(t)
	home, orig := hostFixtures(t)
	env := map[string]string{"HOME": home}
	r := talkRun(t, env, "", "setup", "claude-code", "codex", "gemini", "cursor")
	r.want(t, 0, "setup")
	for _, want := range []string{"updated   ~/.claude/settings.json (hooks Stop, SubagentStop, Notification)",
		"updated   ~/.codex/config.toml", "the file as it was: ~/.claude/settings.json.before-talk-setup",
		`kept your own MCP entry "talk"`, "undo with: talk setup --remove codex"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("setup output lacks %q:\n%s", want, r.stdout)
		}
	}
	settings := readHome(t, home, ".claude/settings.json")
	var doc struct {
		Model string `json:"model"`
		Hooks map[string][]struct {
			Matcher string `json:"matcher"`
			Hooks   []struct{ Type, Command string }
		} `json:"hooks"`
		StatusLine map[string]any `json:"statusLine"`
	}
	if err := json.Unmarshal([]byte(settings), &doc); err != nil {
		t.Fatalf("settings after setup: %v\n%s", err, settings)
	}
	if doc.Model != "opus" || doc.StatusLine["command"] != "~/.claude/statusline.sh" || len(doc.Hooks["PreToolUse"]) != 1 || len(doc.Hooks["Stop"]) != 2 {
		t.Errorf("settings lost the user's keys or hooks:\n%s", settings)
	}
	for _, ev := range []string{"Stop", "SubagentStop", "Notification"} {
		groups := doc.Hooks[ev]
		if len(groups) == 0 || groups[len(groups)-1].Hooks[0].Command != talk+" hook claude-code" {
			t.Errorf("%s hook: %+v", ev, groups)
		}
	}
	if c := readHome(t, home, ".codex/config.toml"); !strings.Contains(c, `notify = ["`+talk+`", "hook", "codex"]`) || !strings.Contains(c, "# Codex settings of Jörg Müller — keep the comments!") {
		t.Errorf("codex config:\n%s", c)
	}
	if c := readHome(t, home, ".claude.json"); !strings.Contains(c, `"command": "`+talk+`"`) || !strings.Contains(c, `"numStartups": 42`) {
		t.Errorf("~/.claude.json:\n%s", c)
	}
	before := map[string]string{}
	for rel := range orig {
		before[rel] = readHome(t, home, rel)
	}
	r = talkRun(t, env, "", "setup", "claude-code", "codex", "gemini", "cursor")
	r.want(t, 0, "second setup")
	for rel, text := range before {
		if readHome(t, home, rel) != text {
			t.Errorf("second setup changed %s", rel)
		}
	}
	if strings.Contains(r.stdout, "updated") || strings.Contains(r.stdout, "added") {
		t.Errorf("second setup reports changes:\n%s", r.stdout)
	}
	r = talkRun(t, env, "", "setup")
	r.want(t, 0, "setup without a host (status)")
	for _, want := range []string{"Claude Code (talk setup claude-code):\nset up    ~/.claude/settings.json", "set up    ~/.codex/config.toml"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("status lacks %q:\n%s", want, r.stdout)
		}
	}
	r = talkRun(t, env, "", "setup", "--remove", "claude-code", "codex", "gemini", "cursor")
	r.want(t, 0, "setup --remove")
	for rel, text := range orig {
		if got := readHome(t, home, rel); got != text {
			t.Errorf("%s after remove:\n%s\nwant:\n%s", rel, got, text)
		}
		if _, err := os.Stat(filepath.Join(home, rel+".before-talk-setup")); !os.IsNotExist(err) {
			t.Errorf("backup of %s left: %v", rel, err)
		}
	}
	if !strings.Contains(r.stdout, "restored  ~/.claude/settings.json") {
		t.Errorf("remove output:\n%s", r.stdout)
	}
	if r = talkRun(t, env, "", "setup"); !strings.Contains(r.stdout, "not set up ~/.claude/settings.json") {
		t.Errorf("status after remove:\n%s", r.stdout)
	}
}

// TestHostSetupRefusals: a Codex config with another notify program, a broken settings
// file and an unknown host are refused with a reason, and nothing is written.
func TestHostSetupRefusals(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	os.MkdirAll(filepath.Join(home, ".codex"), 0o700)
	codexConf := "notify = [\"notify-send\", \"Codex\"]\n"
	os.WriteFile(filepath.Join(home, ".codex", "config.toml"), []byte(codexConf), 0o600)
	r := talkRun(t, map[string]string{"HOME": home}, "", "setup", "codex")
	r.want(t, 1, "setup codex with another notify")
	if !strings.Contains(r.stderr, "Codex runs only one notify program") {
		t.Errorf("stderr: %s", r.stderr)
	}
	if got := readHome(t, home, ".codex/config.toml"); got != codexConf {
		t.Errorf("config changed:\n%s", got)
	}
	os.MkdirAll(filepath.Join(home, ".gemini"), 0o700)
	os.WriteFile(filepath.Join(home, ".gemini", "settings.json"), []byte("{ // comments are not JSON\n}"), 0o600)
	r = talkRun(t, map[string]string{"HOME": home}, "", "setup", "gemini")
	r.want(t, 1, "setup gemini with a broken file")
	if !strings.Contains(r.stderr, "not valid JSON") || !strings.Contains(r.stderr, "nothing was changed") {
		t.Errorf("stderr: %s", r.stderr)
	}
	r = talkRun(t, map[string]string{"HOME": home}, "", "setup", "vim")
	r.want(t, 2, "setup of an unknown host")
	r = talkRun(t, map[string]string{"HOME": home}, "", "setup", "--project", home, "codex")
	r.want(t, 1, "setup codex --project")
}

// hookDaemon is a daemon whose rate limits admit every announcement of a test.
func hookDaemon(t *testing.T, extra string) *daemon {
	return startDaemon(t, daemonOptions{Config: "version = 1\n[voice]\nfake_duration = \"10ms\"\n" + extra +
		"[rules.rate_limit]\nlow = \"0s\"\nnormal = \"0s\"\nhigh = \"0s\"\n"})
}

// TestHookClaudeCode: the hook speaks a finished turn as the project and the agent's
// last message cleaned to one sentence, a notification at priority high, a subagent's
// end at low, and a Stop without last_assistant_message from the transcript's tail.
func TestHookClaudeCode(t *testing.T) {
	t.Parallel()
	d := hookDaemon(t, "")
	transcript := filepath.Join(t.TempDir(), "session.jsonl")
	os.WriteFile(transcript, []byte(`{"type":"user","message":{"role":"user","content":"fix it"}}
{"type":"assistant","message":{"role":"assistant","content":[{"type":"tool_use","name":"Bash"}]}}
{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"Der Parser für **Jörg** ist repariert, siehe `+"`parser.go`"+`. Mehr später."}]}}
`), 0o600)
	events := []string{
		`{"session_id":"s1","transcript_path":"/nonexistent","cwd":"/home/jörg/src/mein-projekt","hook_event_name":"Stop","stop_hook_active":false,` +
			`"last_assistant_message":"## Done\n\nAll **12 tests** pass now; see https://github.com/x/y/pull/3 and ` + "`internal/queue/queue.go`" + `.\n\n` + "```go\\nfunc x() {}\\n```" + `\nAnything else?"}`,
		`{"session_id":"s1","cwd":"/home/jörg/src/mein-projekt","hook_event_name":"Notification","message":"Claude needs your permission to use Bash","notification_type":"permission_prompt"}`,
		`{"session_id":"s1","cwd":"/home/jörg/src/mein-projekt","hook_event_name":"SubagentStop","stop_hook_active":false}`,
		`{"session_id":"s2","transcript_path":"` + transcript + `","cwd":"/srv/Müller","hook_event_name":"Stop"}`,
		`{"session_id":"s2","cwd":"/srv/Müller","hook_event_name":"PreToolUse","tool_name":"Bash"}`,
		`{"session_id":"s2","cwd":"/srv/Müller","hook_event_name":"Notification","message":"Authenticated","notification_type":"auth_success"}`,
	}
	for i, ev := range events {
		r := talkAt(t, d, ev, "hook", "claude-code")
		r.want(t, 0, "hook claude-code")
		if r.stdout != "" || (i < 4 && r.stderr != "") {
			t.Errorf("event %d: hook printed %q, stderr %q", i, r.stdout, r.stderr)
		}
		d.waitSpoken(t, min(i+1, 4))
	}
	got := d.waitSpoken(t, 4)
	want := []struct{ text, priority string }{
		{"mein-projekt: All 12 tests pass now.", "normal"},
		{"mein-projekt: Claude needs your permission to use Bash.", "high"},
		{"mein-projekt: a subagent finished.", "low"},
		{"Müller: Der Parser für Jörg ist repariert.", "normal"},
	}
	time.Sleep(100 * time.Millisecond)
	if got = d.spoken(t); len(got) != len(want) {
		t.Fatalf("spoken %d, want %d: %+v", len(got), len(want), got)
	}
	for i, w := range want {
		if got[i].Text != w.text || got[i].Priority != w.priority || got[i].Agent != "claude-code" {
			t.Errorf("utterance %d: %q %s agent %q, want %q %s", i, got[i].Text, got[i].Priority, got[i].Agent, w.text, w.priority)
		}
	}
}

// TestHookOtherHosts: Codex passes the event as an argument, Gemini CLI and Cursor on
// stdin and read {} back; each is announced under its host's name.
func TestHookOtherHosts(t *testing.T) {
	t.Parallel()
	d := hookDaemon(t, "")
	r := talkAt(t, d, "", "hook", "codex", `{"type":"agent-turn-complete","thread-id":"t1","turn-id":"u1","cwd":"/w/api","input-messages":["go"],"last-assistant-message":"Deployed version 2.3 to staging."}`)
	r.want(t, 0, "hook codex")
	d.waitSpoken(t, 1)
	r = talkAt(t, d, `{"session_id":"g1","cwd":"/w/web","hook_event_name":"AfterAgent","timestamp":"2026-12-06T07:00:00Z","prompt":"x","prompt_response":"* Refactored the router.\n* Added tests.","stop_hook_active":false}`, "hook", "gemini")
	r.want(t, 0, "hook gemini")
	if strings.TrimSpace(r.stdout) != "{}" {
		t.Errorf("gemini stdout %q", r.stdout)
	}
	d.waitSpoken(t, 2)
	r = talkAt(t, d, `{"conversation_id":"c1","generation_id":"g","hook_event_name":"afterAgentResponse","workspace_roots":["/w/shop"],"text":"Fixed the **checkout** bug."}`, "hook", "cursor")
	r.want(t, 0, "hook cursor")
	if strings.TrimSpace(r.stdout) != "{}" {
		t.Errorf("cursor stdout %q", r.stdout)
	}
	d.waitSpoken(t, 3)
	r = talkAt(t, d, `{"conversation_id":"c1","hook_event_name":"stop","status":"completed","loop_count":0,"workspace_roots":["/w/shop"]}`, "hook", "cursor")
	r.want(t, 0, "hook cursor stop")
	time.Sleep(100 * time.Millisecond)
	got := d.spoken(t)
	want := []struct{ text, agent string }{
		{"api: Deployed version 2.3 to staging.", "codex"},
		{"web: Refactored the router.", "gemini"},
		{"shop: Fixed the checkout bug.", "cursor"},
	}
	if len(got) != len(want) {
		t.Fatalf("spoken %+v", got)
	}
	for i, w := range want {
		if got[i].Text != w.text || got[i].Agent != w.agent {
			t.Errorf("utterance %d: %q by %q, want %q by %q", i, got[i].Text, got[i].Agent, w.text, w.agent)
		}
	}
}

// TestHookNeverHoldsUpTheHost: with talkd down, or a talkd that accepts and never
// answers, the hook exits 0 well within a second and says why on stderr; bad input too.
func TestHookNeverHoldsUpTheHost(t *testing.T) {
	t.Parallel()
	hung, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer hung.Close()
	// A port nothing listens on (taken while hung holds its own, so never the same).
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := "http://" + ln.Addr().String()
	ln.Close()
	var conns []net.Conn
	var mu sync.Mutex
	go func() {
		for {
			c, err := hung.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c) // held open, never answered
			mu.Unlock()
		}
	}()
	defer func() {
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
	}()
	stop := `{"session_id":"s","cwd":"/p","hook_event_name":"Stop","last_assistant_message":"done."}`
	for _, c := range []struct{ name, url, stdin string }{
		{"daemon down", down, stop},
		{"daemon hangs", "http://" + hung.Addr().String(), stop},
		{"not JSON", down, "garbage"},
	} {
		start := time.Now()
		r := talkRun(t, map[string]string{"TALK_URL": c.url}, c.stdin, "hook", "claude-code")
		took := time.Since(start)
		r.want(t, 0, "hook: "+c.name)
		if r.stderr == "" {
			t.Errorf("%s: no reason on stderr", c.name)
		}
		// The hook's own budget is 0.8 s; the bound leaves room for a loaded machine.
		if took > 3*time.Second {
			t.Errorf("%s: the hook took %v", c.name, took)
		}
	}
}

// TestHookSessionVoices: without a voice for the host in [voice.agents], each session
// speaks at a pitch of its own (the same session always at the same); with one, the hook
// leaves the voice to the daemon. A stand-in daemon records the requests.
func TestHookSessionVoices(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var bodies []map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		var b map[string]any
		json.Unmarshal(raw, &b)
		b["agent"] = r.Header.Get("X-Talk-Agent")
		mu.Lock()
		bodies = append(bodies, b)
		mu.Unlock()
		w.WriteHeader(http.StatusAccepted)
		io.WriteString(w, `{"status":"queued","id":"a1","position":1,"message":"queued"}`)
	}))
	defer srv.Close()
	home := t.TempDir()
	env := map[string]string{"HOME": home, "XDG_CONFIG_HOME": filepath.Join(home, ".config"), "TALK_URL": srv.URL}
	ev := func(session string) string {
		return `{"session_id":"` + session + `","cwd":"/p","hook_event_name":"Stop","last_assistant_message":"ok."}`
	}
	sessions := []string{"a", "b", "c", "d", "e", "f", "a"}
	for _, s := range sessions {
		talkRun(t, env, ev(s), "hook", "claude-code").want(t, 0, "hook")
	}
	pitches := map[float64]bool{}
	for _, b := range bodies {
		p, _ := b["pitch"].(float64)
		if p < 1 || p > 99 {
			t.Fatalf("no pitch in %v", b)
		}
		pitches[p] = true
	}
	if len(pitches) < 2 || bodies[0]["pitch"] != bodies[len(bodies)-1]["pitch"] {
		t.Errorf("pitches %v of sessions %v", bodies, sessions)
	}
	os.MkdirAll(filepath.Join(home, ".config", "talk"), 0o700)
	os.WriteFile(filepath.Join(home, ".config", "talk", "config.toml"), []byte("version = 1\n[voice.agents]\nclaude-code = \"en-gb\"\n"), 0o600)
	talkRun(t, env, ev("a"), "hook", "claude-code").want(t, 0, "hook with an agent voice")
	if last := bodies[len(bodies)-1]; last["pitch"] != nil || last["agent"] != "claude-code" {
		t.Errorf("with [voice.agents] the hook sent %v", last)
	}
}

// TestHostCompletion: bash completes the hosts of talk setup and the plan verbs.
func TestHostCompletion(t *testing.T) {
	t.Parallel()
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	r := talkRun(t, nil, "", "completion", "bash")
	script := filepath.Join(t.TempDir(), "talk.bash")
	os.WriteFile(script, []byte(r.stdout), 0o600)
	out, err := exec.Command(bash, "-c", `source "$1"
COMP_WORDS=(talk setup c); COMP_CWORD=2; _talk; echo "setup: ${COMPREPLY[*]}"
COMP_WORDS=(talk plan se); COMP_CWORD=2; _talk; echo "plan: ${COMPREPLY[*]}"`, "x", script).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "setup: claude-code codex cursor") || !strings.Contains(string(out), "plan: set-status set-size") {
		t.Errorf("completion (%v):\n%s", err, out)
	}
}

// TestHookWithinTheLaws: the hooks pass none of talkd's laws — muted, a turn's end is
// not said (the hook still exits 0 and says why on stderr), and after unmute it is.
func TestHookWithinTheLaws(t *testing.T) {
	t.Parallel()
	d := hookDaemon(t, "")
	talkAt(t, d, "", "mute").want(t, 0, "mute")
	ev := `{"session_id":"s","cwd":"/p/quiet","hook_event_name":"Notification","message":"Claude needs your permission to use Bash","notification_type":"permission_prompt"}`
	r := talkAt(t, d, ev, "hook", "claude-code")
	r.want(t, 0, "hook while muted")
	if !strings.Contains(r.stderr, "muted") {
		t.Errorf("stderr %q", r.stderr)
	}
	talkAt(t, d, "", "unmute").want(t, 0, "unmute")
	talkAt(t, d, ev, "hook", "claude-code").want(t, 0, "hook after unmute")
	got := d.waitSpoken(t, 1)
	time.Sleep(100 * time.Millisecond)
	if got = d.spoken(t); len(got) != 1 || got[0].Text != "quiet: Claude needs your permission to use Bash." || got[0].Priority != "high" {
		t.Errorf("spoken %+v", got)
	}
}
