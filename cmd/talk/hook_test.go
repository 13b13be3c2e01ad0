package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The transcript fallback reads only the tail of a long transcript and finds the last
// assistant text there, skipping tool calls and a line cut by the seek.
func TestLastAssistantTextOfALongTranscript(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.jsonl")
	var b strings.Builder
	filler := `{"type":"user","message":{"role":"user","content":"` + strings.Repeat("x", 1000) + `"}}` + "\n"
	for b.Len() < 3*maxHookInput {
		b.WriteString(filler)
	}
	b.WriteString(`{"type":"assistant","message":{"content":[{"type":"text","text":"Erste Antwort."}]}}` + "\n")
	b.WriteString(`{"type":"assistant","message":{"content":[{"type":"text","text":"Fertig für Jörg."},{"type":"tool_use","name":"Bash"}]}}` + "\n")
	b.WriteString(`{"type":"assistant","message":{"content":[{"type":"tool_use","name":"Read"}]}}` + "\n")
	os.WriteFile(path, []byte(b.String()), 0o600)
	if got := lastAssistantText(path); got != "Fertig für Jörg." {
		t.Errorf("got %q", got)
	}
	// An assistant text before the last MiB is not read: the hook's time is bounded.
	early := filepath.Join(t.TempDir(), "early.jsonl")
	os.WriteFile(early, []byte(`{"type":"assistant","message":{"content":"Alt."}}`+"\n"+strings.Repeat(filler, 2*maxHookInput/len(filler))), 0o600)
	if got := lastAssistantText(early); got != "" {
		t.Errorf("read beyond the tail: %q", got)
	}
	if got := lastAssistantText(filepath.Join(t.TempDir(), "none")); got != "" {
		t.Errorf("missing file: %q", got)
	}
}

// Each host's event fields become the same announcement kinds.
func TestParseHookEvent(t *testing.T) {
	cases := []struct {
		host, raw string
		want      hookEvent
	}{
		{"claude-code", `{"hook_event_name":"Notification","session_id":"s","cwd":"/p","message":"Claude is waiting for your input","notification_type":"idle_prompt"}`,
			hookEvent{kind: "needs", session: "s", cwd: "/p", text: "Claude is waiting for your input"}},
		{"codex", `{"type":"agent-turn-complete","thread-id":"t","cwd":"/c","last-assistant-message":"ok"}`,
			hookEvent{kind: "done", session: "t", cwd: "/c", text: "ok"}},
		{"codex", `{"type":"approval-requested","cwd":"/c"}`, hookEvent{cwd: "/c"}},
		{"gemini", `{"hook_event_name":"Notification","session_id":"g","cwd":"/g","notification_type":"ToolPermission","message":"Allow run_shell_command?"}`,
			hookEvent{kind: "needs", session: "g", cwd: "/g", text: "Allow run_shell_command?"}},
		{"cursor", `{"hook_event_name":"stop","conversation_id":"c","status":"error","workspace_roots":["/w"]}`,
			hookEvent{kind: "failed", session: "c", cwd: "/w"}},
		{"cursor", `{"hook_event_name":"stop","conversation_id":"c","status":"aborted","workspace_roots":["/w"]}`,
			hookEvent{session: "c", cwd: "/w"}},
	}
	for _, c := range cases {
		got, err := parseHookEvent(c.host, []byte(c.raw))
		if err != nil || got != c.want {
			t.Errorf("%s %s: %+v (%v), want %+v", c.host, c.raw, got, err, c.want)
		}
	}
	if _, err := parseHookEvent("claude-code", []byte("[1]")); err == nil {
		t.Error("a JSON array was accepted")
	}
}
