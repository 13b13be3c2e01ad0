package test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The one admission layer at the process boundary: the bearer scheme in any case, two
// Authorization headers refused, a log line for every refusal (never the token), the body
// limit of each door, and raw invalid UTF-8 refused naming the field.

// rawRequest sends a request whose headers may repeat (http.Header.Add per pair).
func (d *daemon) rawRequest(t testing.TB, method, path, body string, headers [][2]string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, d.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range headers {
		req.Header.Add(h[0], h[1])
	}
	resp, err := httpClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, raw
}

// waitLog waits until the daemon's log holds want (its stderr arrives through a pipe, a
// moment after the answer it logged).
func (d *daemon) waitLog(t testing.TB, want string) bool {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(d.logs(), want) {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
	return true
}

func sharedPlanDaemon(t *testing.T) (*daemon, string) {
	t.Helper()
	planPath := filepath.Join(t.TempDir(), "plan.werkbaum")
	if err := os.WriteFile(planPath, []byte(sharedPlan), 0o644); err != nil {
		t.Fatal(err)
	}
	return startDaemon(t, daemonOptions{Config: sharedConfig(planPath), Env: sharedEnv()}), planPath
}

// TestBearerSchemeAnyCase: RFC 7235 §2.1 makes the auth scheme case-insensitive; hosts and
// proxies that send "bearer" or "BEARER" are served on every door (they got 401 before).
func TestBearerSchemeAnyCase(t *testing.T) {
	t.Parallel()
	d, _ := sharedPlanDaemon(t)
	for _, scheme := range []string{"bearer", "BEARER", "Bearer", "bEaReR"} {
		auth := func(tok string) [][2]string { return [][2]string{{"Authorization", scheme + " " + tok}} }
		if st, raw := d.rawRequest(t, "POST", "/speak", `{"text":"scheme `+scheme+`","now":true}`, auth(sharedTokens["speaker"])); st != http.StatusAccepted {
			t.Errorf("/speak with %q: %d %s", scheme, st, raw)
		}
		if st, raw := d.rawRequest(t, "POST", "/mute", ``, auth(sharedTokens["controller"])); st != http.StatusOK {
			t.Errorf("/mute with %q: %d %s", scheme, st, raw)
		}
		d.rawRequest(t, "POST", "/unmute", ``, auth(sharedTokens["controller"]))
		st, raw := d.rawRequest(t, "GET", "/status", ``, auth(sharedTokens["reader"]))
		if st != http.StatusOK || !strings.Contains(string(raw), `"caller":"reader"`) {
			t.Errorf("/status with %q: %d %s", scheme, st, raw)
		}
		st, raw = d.rawRequest(t, "POST", "/mcp", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"werkbaum_read","arguments":{"plan":"p"}}}`,
			auth(sharedTokens["writer"]))
		if st != http.StatusOK || !strings.Contains(string(raw), `"structuredContent"`) {
			t.Errorf("/mcp with %q: %d %.300s", scheme, st, raw)
		}
	}
	// Other schemes and a bare token stay refused.
	for _, h := range []string{"Basic " + sharedTokens["speaker"], sharedTokens["speaker"], "Bearer", "Bearer  "} {
		if st, _ := d.rawRequest(t, "POST", "/speak", `{"text":"nope"}`, [][2]string{{"Authorization", h}}); st != http.StatusUnauthorized {
			t.Errorf("Authorization %.12q…: %d, want 401", h, st)
		}
	}
}

// TestDuplicateAuthorizationRefused: with two Authorization headers, which one counts
// would be a guess (before, the first won); every door answers 400 naming the problem,
// nothing is spoken or muted, and the refusal is logged without either token.
func TestDuplicateAuthorizationRefused(t *testing.T) {
	t.Parallel()
	d, _ := sharedPlanDaemon(t)
	wrong := "wrong-" + strings.Repeat("x", 40)
	for _, pair := range [][2]string{
		{"Bearer " + sharedTokens["speaker"], "Bearer " + wrong},
		{"Bearer " + wrong, "Bearer " + sharedTokens["controller"]},
		{"Bearer " + sharedTokens["controller"], "Bearer " + sharedTokens["controller"]},
	} {
		h := [][2]string{{"Authorization", pair[0]}, {"Authorization", pair[1]}}
		for _, c := range []struct{ method, path, body string }{
			{"POST", "/speak", `{"text":"two headers","now":true}`},
			{"POST", "/mute", ``},
			{"GET", "/status", ``},
			{"POST", "/mcp", `{"jsonrpc":"2.0","id":1,"method":"ping"}`},
		} {
			st, raw := d.rawRequest(t, c.method, c.path, c.body, h)
			if st != http.StatusBadRequest || !strings.Contains(string(raw), "2 Authorization headers") {
				t.Errorf("%s %s with two Authorization headers: %d %s", c.method, c.path, st, raw)
			}
		}
	}
	if st, body := d.getJSON(t, "/healthz"); st != 200 || body["ok"] != true {
		t.Fatalf("healthz: %d %v", st, body)
	}
	if n := len(d.spoken(t)); n != 0 {
		t.Errorf("%d announcements were spoken", n)
	}
	if !d.waitLog(t, `msg="request refused" door=/speak status=400 code=bad_header`) ||
		!d.waitLog(t, `msg="request refused" door=/mcp status=400 code=bad_header`) {
		t.Errorf("no refusal log lines")
	}
	logs := d.logs()
	for _, tok := range append([]string{wrong}, sharedTokens["speaker"], sharedTokens["controller"]) {
		if strings.Contains(logs, tok) {
			t.Fatalf("a token reached the log")
		}
	}
}

// TestEveryRefusalIsLogged: each kind of refusal at each door leaves one log line with
// door, status and code, and the origin and host it came from.
func TestEveryRefusalIsLogged(t *testing.T) {
	t.Parallel()
	d, _ := sharedPlanDaemon(t)
	wrong := "Bearer wrong-" + strings.Repeat("y", 40)
	cases := []struct {
		method, path, body string
		headers            [][2]string
		status             int
		want               string
	}{
		{"POST", "/speak", `{"text":"x"}`, [][2]string{{"Host", "evil.example"}}, 403, `door=/speak status=403 code=host_not_allowed origin="" host=evil.example`},
		{"POST", "/mcp", `{"jsonrpc":"2.0","id":1,"method":"ping"}`, [][2]string{{"Origin", "https://evil.example"}}, 403, `door=/mcp status=403 code=origin_not_allowed origin=https://evil.example`},
		{"POST", "/mute", ``, [][2]string{{"Authorization", wrong}}, 401, `door=/mute status=401 code=unauthorized`},
		{"POST", "/mute", ``, [][2]string{{"Authorization", "Bearer " + sharedTokens["reader"]}}, 403, `door=/mute status=403 code=forbidden`},
		{"POST", "/speak", `{"text":"` + strings.Repeat("a", 70<<10) + `"}`, [][2]string{{"Authorization", "Bearer " + sharedTokens["speaker"]}}, 413, `door=/speak status=413 code=body_too_large`},
		{"POST", "/speak", `{"text":"x","priority":"max"}`, [][2]string{{"Authorization", "Bearer " + sharedTokens["speaker"]}}, 400, `door=/speak status=400 code=invalid_field`},
		{"POST", "/mcp", `{"jsonrpc":"2.0","id":1,"method":`, [][2]string{{"Authorization", "Bearer " + sharedTokens["speaker"]}}, 400, `door=/mcp status=400 code=-32700`},
		{"POST", "/mcp", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"rm_rf"}}`, [][2]string{{"Authorization", "Bearer " + sharedTokens["speaker"]}}, 200, `door=/mcp status=200 code=-32602`},
	}
	for _, c := range cases {
		h := c.headers
		var req *http.Request
		req, _ = http.NewRequest(c.method, d.URL+c.path, strings.NewReader(c.body))
		for _, kv := range h {
			if kv[0] == "Host" {
				req.Host = kv[1]
				continue
			}
			req.Header.Add(kv[0], kv[1])
		}
		resp, err := httpClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != c.status {
			t.Errorf("%s %s: %d, want %d", c.method, c.path, resp.StatusCode, c.status)
		}
		if !d.waitLog(t, c.want) {
			t.Errorf("%s %s: no log line with %s", c.method, c.path, c.want)
		}
	}
	// A refused tool call is logged as well.
	isErr, _, _ := d.toolCall(t, sharedTokens["reader"], "werkbaum_set_status", map[string]any{"plan": "p"})
	if !isErr || !d.waitLog(t, `msg="tool call refused" tool=werkbaum_set_status`) {
		t.Errorf("tool refusal not logged")
	}
	if strings.Contains(d.logs(), strings.TrimPrefix(wrong, "Bearer ")) {
		t.Fatal("a token reached the log")
	}
}

// TestBodyLimitPerDoor: /speak and the control doors keep 64 KiB; /mcp takes a plan far
// beyond that (before, any werkbaum_write over ~60 KB got 413), and past its own limit the
// 413 names the limit.
func TestBodyLimitPerDoor(t *testing.T) {
	t.Parallel()
	d, paths := startPlanDaemon(t, planFile{Key: "big", Text: "[ ] #root: Root (L)\n"})
	big := 64<<10 + 1
	for _, path := range []string{"/speak", "/mute"} {
		st, raw := d.rawRequest(t, "POST", path, `{"text":"`+strings.Repeat("a", big)+`"}`, nil)
		if st != http.StatusRequestEntityTooLarge || !strings.Contains(string(raw), "limit of 65536 bytes") {
			t.Errorf("%s with %d bytes: %d %s", path, big, st, raw)
		}
	}
	// A 400 KB plan whose quotes and newlines double in JSON: an 800 KB body.
	var b strings.Builder
	b.WriteString("[ ] #root: Root (L)\n")
	for i := 0; b.Len() < 400<<10; i++ {
		fmt.Fprintf(&b, "  - [ ] #n%d: \"Quoted\" task %d for @jörg (XS)\n", i, i)
	}
	c := newMCPClient(d)
	r := c.read(t, "big")
	var w writeAnswer
	c.ok(t, "werkbaum_write", writeArgs("big", r.Base, "big-1", map[string]any{"text": b.String(), "allowWarnings": true}), &w)
	if !w.Changed || string(readFile(t, paths["big"])) != b.String() {
		t.Fatalf("the large write: %+v", w)
	}
}

// TestInvalidUTF8Refused: raw bytes that are not UTF-8 in a text field are refused with an
// error naming the field; before, encoding/json turned them into U+FFFD and talkd spoke
// or wrote text the caller never sent.
func TestInvalidUTF8Refused(t *testing.T) {
	t.Parallel()
	d, paths := startPlanDaemon(t, planFile{Key: "u", Text: "[ ] #root: Root (L)\n  - [ ] #a: Müller (S)\n"})
	st, raw := d.rawRequest(t, "POST", "/speak", "{\"text\":\"Caf\xe9 ist fertig\"}", nil)
	var e struct {
		Error struct{ Code, Field, Message string } `json:"error"`
	}
	if json.Unmarshal(raw, &e); st != http.StatusBadRequest || e.Error.Field != "text" || !strings.Contains(e.Error.Message, "UTF-8") {
		t.Errorf("/speak: %d %s", st, raw)
	}
	c := newMCPClient(d)
	r := c.read(t, "u")
	before := readFile(t, paths["u"])
	base, _ := json.Marshal(r.Base)
	for _, c := range []struct{ tool, args, field string }{
		{"werkbaum_write", "{\"plan\":\"u\",\"base\":" + string(base) + ",\"request_id\":\"u1\",\"text\":\"[ ] #root: R\xe4ksm\xf6rg\xe5s (L)\\n\"}", "text"},
		{"werkbaum_add_node", "{\"plan\":\"u\",\"base\":" + string(base) + ",\"request_id\":\"u2\",\"parent\":\"root\",\"line\":\"- [ ] #b: Gr\xfc\xdfe (S)\"}", "line"},
		{"werkbaum_apply_ops", "{\"plan\":\"u\",\"base\":" + string(base) + ",\"request_id\":\"u3\",\"ops\":[{\"op\":\"insert\",\"index\":2,\"lines\":[\"x\",\"  - [ ] #c: \xff (S)\"]}]}", "ops[0].lines[1]"},
		{"speak", "{\"text\":\"\xc3\"}", "text"},
	} {
		body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + c.tool + `","arguments":` + c.args + `}}`
		st, raw := d.rawRequest(t, "POST", "/mcp", body, nil)
		var ans struct {
			Result struct {
				Content []struct{ Text string } `json:"content"`
				IsError bool                    `json:"isError"`
			} `json:"result"`
		}
		var detail struct{ Error, Field, Message string }
		if json.Unmarshal(raw, &ans); st != 200 || !ans.Result.IsError || len(ans.Result.Content) != 1 ||
			json.Unmarshal([]byte(ans.Result.Content[0].Text), &detail) != nil || detail.Field != c.field || !strings.Contains(detail.Message, "UTF-8") {
			t.Errorf("%s: %d %s", c.tool, st, raw)
		}
	}
	if after := readFile(t, paths["u"]); string(after) != string(before) {
		t.Errorf("the plan changed:\n%s", after)
	}
	if n := len(d.spoken(t)); n != 0 {
		t.Errorf("%d announcements were spoken", n)
	}
}
