package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"hash/fnv"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"talkd/internal/agenttext"
	"talkd/internal/hostsetup"
)

// hookBudget is all the time talk hook takes: hosts wait for their hooks (Gemini CLI
// and Claude Code run them in the agent's loop), so a slow or dead daemon must cost the
// agent no more than this.
const hookBudget = 800 * time.Millisecond

// maxHookInput bounds what talk hook reads of an event and of a transcript's tail.
const maxHookInput = 1 << 20

// sessionPitches are the pitches (engine-neutral, 50 = normal) a session is told apart by
// when [voice.agents] names no voice for the host: one of seven, chosen by the session id.
var sessionPitches = []int{50, 36, 64, 43, 57, 30, 70}

func hookCommand() command {
	return command{
		name: "hook", usage: "hook HOST [EVENT-JSON]",
		summary: "announce an agent host's hook event through talkd (run by the hosts; see talk setup)",
		detail: `The command the hooks written by talk setup run. It reads the host's event (JSON on stdin;
Codex passes it as the last argument) and asks talkd to say, within its laws (mute, quiet
hours, rate limits):
  a finished turn     the project (the folder's name) and the agent's last message, cleaned
                      for speech (code, URLs, paths and markdown dropped) and cut to one
                      sentence; priority normal
  the agent needs you  its message (a permission prompt, waiting for input); priority high
  a subagent finished  briefly; priority low
Announcements carry the host's name as the agent (TALK_AGENT overrides it), so
[voice.agents] can give each host a voice; without one there, each session speaks at a
pitch of its own. talk hook never holds up the host: it takes at most 0.8 s, prints
nothing the host would read (or {} where the host wants JSON), and exits 0 even when talkd
is down or refuses; the reason goes to stderr.`,
		define: func(fs *flag.FlagSet, a *app) func(context.Context, []string) int {
			return func(ctx context.Context, args []string) int {
				if len(args) == 0 {
					cmd, _ := findCommand("hook")
					return a.usage(cmd, "name the host: %s", strings.Join(hostsetup.Names(), ", "))
				}
				return a.hook(ctx, args[0], args[1:])
			}
		},
	}
}

// hookEvent is a host's event reduced to what is said.
type hookEvent struct {
	kind    string // done, needs, subagent, failed; "" = nothing to say
	session string
	cwd     string
	text    string
}

func (a *app) hook(ctx context.Context, host string, args []string) int {
	if _, ok := hostsetup.Find(host); !ok {
		cmd, _ := findCommand("hook")
		return a.usage(cmd, "unknown host %q: use one of %s", host, strings.Join(hostsetup.Names(), ", "))
	}
	ctx, cancel := context.WithTimeout(ctx, hookBudget)
	defer cancel()
	if host == "gemini" || host == "cursor" {
		// Both read a hook's stdout as JSON; an empty object asks for nothing.
		defer fmt.Fprintln(a.stdout, "{}")
	}
	var raw []byte
	if host == "codex" {
		if len(args) == 0 {
			a.warnf("hook codex: no event argument (Codex passes the event JSON as the last argument)")
			return exitOK
		}
		raw = []byte(args[len(args)-1])
	} else {
		var err error
		if raw, err = readBounded(ctx, a.stdin); err != nil {
			a.warnf("hook %s: %v", host, err)
			return exitOK
		}
	}
	ev, err := parseHookEvent(host, raw)
	if err != nil {
		a.warnf("hook %s: %v", host, err)
		return exitOK
	}
	if ev.kind == "" {
		return exitOK
	}
	text, priority := ev.announcement()
	agent := strings.TrimSpace(a.getenv("TALK_AGENT"))
	if agent == "" {
		agent = host
	}
	req := map[string]any{"text": text, "priority": priority}
	if pitch := a.sessionPitch(agent, ev.session); pitch != 0 {
		req["pitch"] = pitch
	}
	if deadline, ok := ctx.Deadline(); ok && a.opts.timeout > time.Until(deadline) {
		a.opts.timeout = time.Until(deadline) // the request gets what is left of the budget
	}
	c := a.client()
	c.agent = agent
	ans, err := c.do(ctx, http.MethodPost, "/speak", req, nil)
	if err != nil {
		a.warnf("hook %s: not announced: %v", host, err)
		return exitOK
	}
	var res speakResult
	if err := decode(ans, "POST /speak", &res); err == nil && res.Status != "queued" {
		a.warnf("hook %s: %s", host, res.Message)
	}
	return exitOK
}

// announcement is what is said for ev, and at which priority.
func (ev hookEvent) announcement() (text, priority string) {
	project := ""
	if ev.cwd != "" {
		project = filepath.Base(filepath.Clean(ev.cwd)) + ": "
	}
	said := agenttext.Sentence(ev.text)
	switch ev.kind {
	case "needs":
		if said == "" {
			said = "the agent needs you."
		}
		return project + said, "high"
	case "subagent":
		return project + "a subagent finished.", "low"
	case "failed":
		return project + "the agent stopped with an error.", "normal"
	}
	if said == "" {
		said = "the agent finished."
	}
	return project + said, "normal"
}

// sessionPitch tells sessions of one host apart by ear when [voice.agents] gives the host
// no voice of its own (the daemon applies that one): each session id maps to one pitch.
func (a *app) sessionPitch(agent, session string) int {
	if session == "" {
		return 0
	}
	if cfg, err := a.config(); err == nil {
		if _, ok := cfg.Voice.Agents[agent]; ok {
			return 0
		}
	}
	h := fnv.New32a()
	h.Write([]byte(session))
	return sessionPitches[h.Sum32()%uint32(len(sessionPitches))]
}

// readBounded reads r until EOF, at most maxHookInput bytes, giving up at ctx's end: a
// host that keeps stdin open must not keep talk hook alive.
func readBounded(ctx context.Context, r io.Reader) ([]byte, error) {
	type result struct {
		raw []byte
		err error
	}
	done := make(chan result, 1)
	go func() {
		raw, err := io.ReadAll(io.LimitReader(r, maxHookInput))
		done <- result{raw, err}
	}()
	select {
	case res := <-done:
		if res.err != nil {
			return nil, fmt.Errorf("read the event: %w", res.err)
		}
		return res.raw, nil
	case <-ctx.Done():
		return nil, errors.New("no event on stdin in time")
	}
}

// parseHookEvent reads one host's event JSON (the fields each host documents).
func parseHookEvent(host string, raw []byte) (hookEvent, error) {
	var in map[string]any
	if err := json.Unmarshal(bytes.TrimSpace(raw), &in); err != nil {
		return hookEvent{}, fmt.Errorf("the event is not a JSON object: %w", err)
	}
	str := func(keys ...string) string {
		for _, k := range keys {
			if s, ok := in[k].(string); ok && s != "" {
				return s
			}
		}
		return ""
	}
	ev := hookEvent{session: str("session_id"), cwd: str("cwd")}
	switch host {
	case "claude-code":
		switch str("hook_event_name") {
		case "Stop":
			ev.kind, ev.text = "done", str("last_assistant_message")
			if ev.text == "" {
				ev.text = lastAssistantText(str("transcript_path"))
			}
		case "SubagentStop":
			ev.kind = "subagent"
		case "Notification":
			// A login that succeeded (auth_success) needs nobody; the prompts do.
			if t := str("notification_type"); t == "" || t == "permission_prompt" || t == "idle_prompt" || t == "elicitation_dialog" {
				ev.kind, ev.text = "needs", str("message")
			}
		}
	case "codex":
		if str("type") == "agent-turn-complete" {
			ev.kind, ev.text = "done", str("last-assistant-message")
		}
		ev.session = str("thread-id", "session-id", "session_id", "turn-id")
	case "gemini":
		switch str("hook_event_name") {
		case "AfterAgent":
			ev.kind, ev.text = "done", str("prompt_response")
		case "Notification":
			ev.kind, ev.text = "needs", str("message")
		}
	case "cursor":
		ev.session = str("conversation_id")
		if roots, ok := in["workspace_roots"].([]any); ok && len(roots) > 0 {
			ev.cwd, _ = roots[0].(string)
		}
		switch str("hook_event_name") {
		case "afterAgentResponse":
			ev.kind, ev.text = "done", str("text")
		case "stop":
			if str("status") == "error" {
				ev.kind = "failed"
			}
		}
	}
	return ev, nil
}

// lastAssistantText finds the text of the last assistant message in a Claude Code
// transcript (JSON lines), for hosts older than the Stop event's last_assistant_message.
// Only the file's last megabyte is read.
func lastAssistantText(path string) string {
	if path == "" {
		return ""
	}
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Size() > maxHookInput {
		f.Seek(st.Size()-maxHookInput, io.SeekStart)
	}
	var last string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), maxHookInput)
	for sc.Scan() {
		var line struct {
			Type    string `json:"type"`
			Message struct {
				Content json.RawMessage `json:"content"`
			} `json:"message"`
		}
		if json.Unmarshal(sc.Bytes(), &line) != nil || line.Type != "assistant" {
			continue
		}
		var blocks []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		var s string
		if json.Unmarshal(line.Message.Content, &s) == nil && s != "" {
			last = s
			continue
		}
		if json.Unmarshal(line.Message.Content, &blocks) == nil {
			for _, b := range blocks {
				if b.Type == "text" && strings.TrimSpace(b.Text) != "" {
					last = b.Text
				}
			}
		}
	}
	return last
}
