package test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const sharedPlan = "[ ] #root: Root (L)\n  - [ ] #a: Alpha (S)\n  - [ ] #b: Beta (S)\n  - [ ] #c: Gamma (XS)\n"

// sharedTokens are the clients' tokens; the test greps the daemon's log for them at the end.
var sharedTokens = map[string]string{
	"reader":     "rdr-" + strings.Repeat("r", 36),
	"writer":     "wrt-" + strings.Repeat("w", 36),
	"speaker":    "spk-" + strings.Repeat("s", 36),
	"controller": "ctl-" + strings.Repeat("c", 36),
}

func sharedConfig(planPath string) string {
	return fmt.Sprintf(`version = 1
[[plans]]
key = "p"
path = %q
lang = "en"

[[clients]]
id = "reader"
token_env = "TOK_READER"
read = ["p"]

[[clients]]
id = "writer"
token_env = "TOK_WRITER"
write = ["*"]

[[clients]]
id = "speaker"
token_env = "TOK_SPEAKER"
speak = true

[[clients]]
id = "controller"
token_env = "TOK_CONTROLLER"
control = true
`, planPath)
}

func sharedEnv() map[string]string {
	return map[string]string{
		"TOK_READER": sharedTokens["reader"], "TOK_WRITER": sharedTokens["writer"],
		"TOK_SPEAKER": sharedTokens["speaker"], "TOK_CONTROLLER": sharedTokens["controller"],
	}
}

// mcpCall posts one tools/call (or other method) and returns HTTP status and the decoded answer.
func (d *daemon) mcp(t testing.TB, token, method string, params any) (int, map[string]any) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 7, "method": method, "params": params})
	h := map[string]string{"MCP-Protocol-Version": "2025-11-25"}
	if token != "" {
		h["Authorization"] = "Bearer " + token
	}
	status, _, raw := d.request(t, http.MethodPost, "/mcp", string(body), h)
	return status, decodeObject(t, raw)
}

// toolCall calls a tool and returns (isError, text, structuredContent); protocol errors fail.
func (d *daemon) toolCall(t testing.TB, token, name string, args map[string]any) (bool, string, map[string]any) {
	t.Helper()
	status, ans := d.mcp(t, token, "tools/call", map[string]any{"name": name, "arguments": args})
	res, ok := ans["result"].(map[string]any)
	if status != http.StatusOK || !ok {
		t.Fatalf("%s: HTTP %d %v", name, status, ans)
	}
	text := ""
	if c, _ := res["content"].([]any); len(c) > 0 {
		text, _ = c[0].(map[string]any)["text"].(string)
	}
	sc, _ := res["structuredContent"].(map[string]any)
	isErr, _ := res["isError"].(bool)
	if isErr {
		// A failure's one text block is a JSON object {error, message, …}.
		if sc != nil || json.Unmarshal([]byte(text), &sc) != nil || sc["message"] == nil {
			t.Fatalf("%s: a failure must be a JSON text without structuredContent: %v", name, res)
		}
		text, _ = sc["message"].(string)
	}
	return isErr, text, sc
}

// TestSharedModeMatrix runs every door for every kind of caller in shared mode.
func TestSharedModeMatrix(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	planPath := filepath.Join(dir, "plan.werkbaum")
	if err := os.WriteFile(planPath, []byte(sharedPlan), 0o644); err != nil {
		t.Fatal(err)
	}
	d := startDaemon(t, daemonOptions{Config: sharedConfig(planPath), Env: sharedEnv()})
	bearer := func(tok string) map[string]string {
		if tok == "" {
			return nil
		}
		return map[string]string{"Authorization": "Bearer " + tok}
	}
	readPlan := func(t *testing.T) []byte {
		b, err := os.ReadFile(planPath)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	base := func(t *testing.T) map[string]any {
		isErr, _, sc := d.toolCall(t, sharedTokens["writer"], "werkbaum_read", map[string]any{"plan": "p"})
		if isErr {
			t.Fatal("writer cannot read")
		}
		return sc["base"].(map[string]any)
	}

	// 401 for every door without a valid token.
	for _, tok := range []string{"", "wrong-" + strings.Repeat("x", 34)} {
		for _, door := range []struct{ method, path, body string }{
			{"POST", "/speak", `{"text":"x"}`}, {"POST", "/mute", ``}, {"POST", "/unmute", ``}, {"POST", "/stop", ``},
			{"GET", "/status", ``}, {"GET", "/history", ``},
			{"POST", "/mcp", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`},
		} {
			status, hdr, raw := d.request(t, door.method, door.path, door.body, bearer(tok))
			if status != http.StatusUnauthorized || !strings.HasPrefix(hdr.Get("WWW-Authenticate"), "Bearer") {
				t.Errorf("token %q %s %s: %d %v %s", tok, door.method, door.path, status, hdr, raw)
			}
		}
	}
	if status, _, _ := d.request(t, "GET", "/healthz", "", nil); status != http.StatusOK {
		t.Errorf("healthz needs no token: %d", status)
	}

	type want struct {
		speak, mute, read, write bool
	}
	callers := map[string]want{
		"reader":     {read: true},
		"writer":     {read: true, write: true},
		"speaker":    {speak: true},
		"controller": {mute: true},
	}
	writeTools := []struct {
		name string
		args map[string]any
	}{
		{"werkbaum_set_status", map[string]any{"id": "a", "status": "done"}},
		{"werkbaum_set_size", map[string]any{"id": "b", "size": "M"}},
		{"werkbaum_add_node", map[string]any{"parent": "root", "line": "- [ ] #d: Delta (XS)"}},
		{"werkbaum_move_node", map[string]any{"id": "d", "parent": "a"}},
		{"werkbaum_remove_node", map[string]any{"id": "c", "discard": true}},
		{"werkbaum_apply_ops", map[string]any{"ops": []any{map[string]any{"op": "insert", "index": 0, "lines": []string{"%% shared plan"}}}}},
		{"werkbaum_write", map[string]any{"text": sharedPlan + "  - [ ] #e: Epsilon (XS)\n"}},
	}
	for _, id := range []string{"reader", "speaker", "controller", "writer"} {
		w, tok := callers[id], sharedTokens[id]
		t.Run(id, func(t *testing.T) {
			status, body := d.postJSON(t, "/speak", map[string]any{"text": "from " + id, "now": true}, bearer(tok))
			if w.speak != (status == http.StatusAccepted) || (!w.speak && status != http.StatusForbidden) {
				t.Errorf("speak: %d %v", status, body)
			}
			isErr, text, _ := d.toolCall(t, tok, "speak", map[string]any{"text": "mcp from " + id, "now": true})
			if isErr == w.speak || (!w.speak && !strings.Contains(text, "speak grant")) {
				t.Errorf("mcp speak: isError %v %q", isErr, text)
			}
			if w.speak {
				d.waitSpoken(t, 2) // before the controller's mute would cut them off
			}
			status, body = d.postJSON(t, "/mute", "", bearer(tok))
			if w.mute != (status == http.StatusOK) || (!w.mute && status != http.StatusForbidden) {
				t.Errorf("mute: %d %v", status, body)
			}
			if w.mute {
				d.postJSON(t, "/unmute", "", bearer(tok))
			}
			status, _, raw := d.request(t, "GET", "/status", "", bearer(tok))
			if status != http.StatusOK {
				t.Fatalf("status: %d %s", status, raw)
			}
			var sb struct {
				Plans []struct{ Key, Access string } `json:"plans"`
				Mode  string                         `json:"mode"`
			}
			json.Unmarshal(raw, &sb)
			if sb.Mode != "shared" || (len(sb.Plans) == 1) != w.read {
				t.Errorf("status plans %+v", sb)
			}
			_, _, list := d.toolCall(t, tok, "plans_list", map[string]any{})
			if plans, _ := list["plans"].([]any); (len(plans) == 1) != w.read {
				t.Errorf("plans_list %v", list)
			} else if w.read {
				access := plans[0].(map[string]any)["access"]
				if (access == "write") != w.write {
					t.Errorf("plans_list access %v", access)
				}
			}
			for _, name := range []string{"werkbaum_read", "werkbaum_inspect", "operation_get"} {
				args := map[string]any{"plan": "p"}
				if name == "operation_get" {
					args["request_id"] = "none"
				}
				isErr, text, _ := d.toolCall(t, tok, name, args)
				if isErr == w.read || (!w.read && !strings.Contains(text, `unknown plan "p"`)) {
					t.Errorf("%s: isError %v %q", name, isErr, text)
				}
			}
			_, listed := d.mcp(t, tok, "resources/list", map[string]any{})
			if l, _ := listed["result"].(map[string]any); l == nil || strings.Contains(fmt.Sprint(l["resources"]), "werkbaum://plan/p") != w.read {
				t.Errorf("resources/list names the plan %v, want %v: %v", !w.read, w.read, listed)
			}
			_, res := d.mcp(t, tok, "resources/read", map[string]any{"uri": "werkbaum://plan/p"})
			if (res["result"] != nil) != w.read {
				t.Errorf("resources/read: %v", res)
			}
			for i, wt := range writeTools {
				before := readPlan(t)
				args := map[string]any{"plan": "p", "base": base(t), "request_id": fmt.Sprintf("%s-%d", id, i)}
				for k, v := range wt.args {
					args[k] = v
				}
				isErr, text, _ := d.toolCall(t, tok, wt.name, args)
				after := readPlan(t)
				if w.write {
					if isErr || bytes.Equal(before, after) {
						t.Errorf("%s by writer: isError %v %q", wt.name, isErr, text)
					}
					continue
				}
				if !isErr || !bytes.Equal(before, after) {
					t.Errorf("%s by %s: isError %v %q, file changed %v", wt.name, id, isErr, text, !bytes.Equal(before, after))
				}
				wantMsg := `no write grant for plan "p"`
				if !w.read {
					wantMsg = `unknown plan "p"`
				}
				if !strings.Contains(text, wantMsg) {
					t.Errorf("%s by %s: %q does not say %q", wt.name, id, text, wantMsg)
				}
			}
		})
	}
	recs := d.waitSpoken(t, 2)
	for _, r := range recs {
		if r.Caller != "speaker" {
			t.Errorf("spoken for %q", r.Caller)
		}
	}
	d.terminate(t)
	for id, tok := range sharedTokens {
		if strings.Contains(d.logs(), tok) {
			t.Errorf("the log contains the token of %s", id)
		}
	}
}

// TestSharedModeStartupRefusals: bad client setups stop the daemon with a clear message.
func TestSharedModeStartupRefusals(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	planPath := filepath.Join(dir, "plan.werkbaum")
	os.WriteFile(planPath, []byte(sharedPlan), 0o644)
	client := func(id, env string, extra string) string {
		return fmt.Sprintf("\n[[clients]]\nid = %q\ntoken_env = %q\nspeak = true\n%s", id, env, extra)
	}
	head := fmt.Sprintf("version = 1\n[[plans]]\nkey = \"p\"\npath = %q\n", planPath)
	long := strings.Repeat("k", 40)
	cases := []struct {
		name, config string
		env          map[string]string
		want         []string
	}{
		{"short token", head + client("a", "TOK_A", ""), map[string]string{"TOK_A": "tiny-7f3Q"}, []string{"TOK_A", "32"}},
		{"missing env var", head + client("a", "TOK_A", ""), nil, []string{"TOK_A"}},
		{"duplicate id", head + client("a", "TOK_A", "") + client("a", "TOK_B", ""), map[string]string{"TOK_A": long, "TOK_B": long + "b"}, []string{"duplicate", `"a"`}},
		{"unknown plan in grant", head + client("a", "TOK_A", `read = ["nope"]`), map[string]string{"TOK_A": long}, []string{"nope"}},
		{"non-loopback in local mode", head + "[server]\nlisten = \"0.0.0.0:7077\"\n", nil, []string{"0.0.0.0", "[[clients]]"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			env := map[string]string{"TALK_LISTEN": ""}
			for k, v := range tc.env {
				env[k] = v
			}
			d := startDaemon(t, daemonOptions{Config: tc.config, Env: env, ExpectFail: true})
			if d.exitCode(t) == 0 {
				t.Fatal("talkd started")
			}
			for _, w := range tc.want {
				if !strings.Contains(d.logs(), w) {
					t.Errorf("message lacks %q:\n%s", w, d.logs())
				}
			}
			if tok := tc.env["TOK_A"]; tok != "" && strings.Contains(d.logs(), tok) {
				t.Error("the message contains the token")
			}
		})
	}
}
