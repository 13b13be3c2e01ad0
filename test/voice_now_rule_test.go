package test

import (
	"net/http"
	"strings"
	"testing"
)

// TestVoiceNowAndQuietHours: [rules] now_passes_quiet_hours = false makes quiet hours hold
// against talk say --now and the MCP speak tool's now (the answer says why); in shared
// mode a client's own now_passes_quiet_hours overrides the rule for it, either way.
func TestVoiceNowAndQuietHours(t *testing.T) {
	t.Parallel()
	quiet := "[rules]\nquiet_hours = [\"" + quietAroundNow() + "\"]\nnow_passes_quiet_hours = false\n"
	d := startDaemon(t, daemonOptions{Config: "version = 1\n" + quiet, Env: utcEnv(nil)})
	r := talkAt(t, d, "", "say", "--now", "--wait", "the server is down")
	r.want(t, 7, "talk say --now --wait in quiet hours that hold")
	if !strings.Contains(r.stderr, "now does not pass quiet hours here") {
		t.Errorf("talk say stderr: %q", r.stderr)
	}
	_, ans, _ := d.toolCall(t, "", "speak", map[string]any{"text": "from an agent", "now": true})
	if !strings.Contains(ans, "discarded: quiet_hours") {
		t.Errorf("MCP speak with now in quiet hours that hold: %s", ans)
	}

	open := startDaemon(t, daemonOptions{Config: "version = 1\n", Env: utcEnv(nil)})
	if status, body := open.postJSON(t, "/speak", map[string]any{"text": "by default now passes", "now": true}, nil); status != http.StatusAccepted {
		t.Fatalf("now by default: %d %v", status, body)
	}

	tokens := map[string]string{"TOK_OPS": "ops-" + strings.Repeat("o", 36), "TOK_BOT": "bot-" + strings.Repeat("b", 36)}
	shared := startDaemon(t, daemonOptions{Env: utcEnv(tokens), Config: "version = 1\n" + quiet +
		"[[clients]]\nid = \"ops\"\ntoken_env = \"TOK_OPS\"\nspeak = true\nnow_passes_quiet_hours = true\n" +
		"[[clients]]\nid = \"bot\"\ntoken_env = \"TOK_BOT\"\nspeak = true\n"})
	for _, c := range []struct {
		token, want string
	}{{tokens["TOK_OPS"], "queued"}, {tokens["TOK_BOT"], "discarded"}} {
		_, body := shared.postJSON(t, "/speak", map[string]any{"text": "now from " + c.token[:3], "now": true},
			map[string]string{"Authorization": "Bearer " + c.token})
		if body["status"] != c.want {
			t.Errorf("client %s with now in quiet hours: %v, want %s", c.token[:3], body, c.want)
		}
	}
}
