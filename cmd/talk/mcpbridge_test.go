package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// bridgeRecorded is what the fake daemon saw of one forwarded message.
type bridgeRecorded struct {
	header http.Header
	body   string
}

// bridgeFakeDaemon answers /mcp like talkd would, recording every request.
func bridgeFakeDaemon(t *testing.T) (*httptest.Server, func() []bridgeRecorded) {
	var mu sync.Mutex
	var got []bridgeRecorded
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, bridgeRecorded{r.Header.Clone(), string(body)})
		mu.Unlock()
		if r.Header.Get("Authorization") != "Bearer tok" {
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"error":{"code":"unauthorized","message":"the bearer token is not valid"}}`))
			return
		}
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		_ = json.Unmarshal(body, &msg)
		if msg.ID == nil {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		result := `{}`
		if msg.Method == "initialize" {
			result = `{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"talkd","version":"t"}}`
		}
		w.Header().Set("Content-Type", "application/json")
		// Pretty-printed on purpose: the bridge must still write one line per message.
		_, _ = w.Write([]byte("{\n \"jsonrpc\": \"2.0\",\n \"id\": " + string(msg.ID) + ",\n \"result\": " + result + "\n}\n"))
	}))
	t.Cleanup(srv.Close)
	return srv, func() []bridgeRecorded {
		mu.Lock()
		defer mu.Unlock()
		return append([]bridgeRecorded(nil), got...)
	}
}

func runBridgeForTest(t *testing.T, url, token, input string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errOut bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	code = runMCP(ctx, []string{"--timeout", "5s"}, strings.NewReader(input), &out, &errOut, url, token)
	return out.String(), errOut.String(), code
}

func bridgeOutputLines(t *testing.T, stdout string) map[string]map[string]any {
	t.Helper()
	byID := map[string]map[string]any{}
	for _, line := range strings.Split(strings.TrimRight(stdout, "\n"), "\n") {
		if line == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("stdout line is not one JSON message: %q", line)
		}
		idb, _ := json.Marshal(m["id"])
		byID[string(idb)] = m
	}
	return byID
}

func TestBridgeForwardsWithTokenAgentAndVersion(t *testing.T) {
	srv, seen := bridgeFakeDaemon(t)
	input := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"Zed Ägent","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}

{"jsonrpc":"2.0","id":"two","method":"tools/list"}
{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"speak","arguments":{"text":"hi"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}
`
	stdout, _, code := runBridgeForTest(t, srv.URL, "tok", input)
	if code != 0 {
		t.Fatalf("exit code %d", code)
	}
	lines := bridgeOutputLines(t, stdout)
	if len(lines) != 3 || lines["1"] == nil || lines[`"two"`] == nil || lines["3"] == nil {
		t.Fatalf("want answers to 1, \"two\" and 3 only (no line for the notification), got:\n%s", stdout)
	}
	reqs := seen()
	if len(reqs) != 4 {
		t.Fatalf("forwarded %d messages, want 4", len(reqs))
	}
	for _, r := range reqs {
		if r.header.Get("Authorization") != "Bearer tok" {
			t.Errorf("missing token: %v", r.header)
		}
		if got := r.header.Get("X-Talk-Agent"); got != "Zed Ägent" {
			t.Errorf("agent header %q", got)
		}
	}
	byMethod := map[string]http.Header{}
	for _, r := range reqs {
		var m struct{ Method string }
		_ = json.Unmarshal([]byte(r.body), &m)
		byMethod[m.Method] = r.header
	}
	if v := byMethod["initialize"].Get("MCP-Protocol-Version"); v != "" {
		t.Errorf("initialize must go without a version header, got %q", v)
	}
	if v := byMethod["tools/list"].Get("MCP-Protocol-Version"); v != "2025-06-18" {
		t.Errorf("tools/list version header %q, want the negotiated 2025-06-18", v)
	}
	h := byMethod["tools/call"]
	if h.Get("MCP-Protocol-Version") != "2026-07-28" || h.Get("Mcp-Method") != "tools/call" || h.Get("Mcp-Name") != "speak" {
		t.Errorf("2026 headers derived from the message: %v", h)
	}
}

func TestBridgeAnswersLocallyWhenDaemonIsDown(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + ln.Addr().String()
	ln.Close() // nothing listens there now
	input := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"h","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
{"jsonrpc":"2.0","id":2,"method":"tools/list"}
{"jsonrpc":"2.0","id":3,"method":"ping"}
not json
`
	start := time.Now()
	stdout, stderr, code := runBridgeForTest(t, url, "", input)
	if code != 0 || time.Since(start) > 15*time.Second {
		t.Fatalf("exit %d after %v", code, time.Since(start))
	}
	lines := bridgeOutputLines(t, stdout)
	init := lines["1"]["result"].(map[string]any)
	if init["protocolVersion"] != "2025-03-26" || !strings.Contains(init["instructions"].(string), "not reachable") {
		t.Errorf("local initialize: %v", init)
	}
	e := lines["2"]["error"].(map[string]any)
	if e["code"] != float64(bridgeUnreachable) || !strings.Contains(e["message"].(string), "not reachable") {
		t.Errorf("tools/list while down: %v", e)
	}
	if lines["3"]["result"] == nil {
		t.Errorf("ping while down: %v", lines["3"])
	}
	if lines["null"]["error"].(map[string]any)["code"] != float64(-32700) {
		t.Errorf("garbage line: %v", lines["null"])
	}
	if !strings.Contains(stderr, "not reachable") {
		t.Errorf("stderr should explain: %s", stderr)
	}
}

func TestBridgeTurnsHTTPRefusalsIntoJSONRPCErrors(t *testing.T) {
	srv, _ := bridgeFakeDaemon(t)
	stdout, _, _ := runBridgeForTest(t, srv.URL, "wrong", `{"jsonrpc":"2.0","id":7,"method":"tools/list"}`+"\n")
	e := bridgeOutputLines(t, stdout)["7"]["error"].(map[string]any)
	if !strings.Contains(e["message"].(string), "talkd refused the token: 401") || !strings.Contains(e["message"].(string), "bearer token is not valid") {
		t.Errorf("refusal: %v", e)
	}
}

// bridgeCannedDaemon answers every POST with the same status, headers and body.
func bridgeCannedDaemon(t *testing.T, status int, contentType, body string) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		if contentType != "" {
			w.Header().Set("Content-Type", contentType)
		}
		w.WriteHeader(status)
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestBridgeAnswersEveryRequestWithItsID: whatever the daemon answers — an HTTP refusal
// before it read the message, a JSON-RPC error without an id, or nothing — the host gets
// one JSON-RPC error carrying its own request id and a message naming the cause; the
// daemon's own answers that carry the id pass unchanged, and notifications get no line.
func TestBridgeAnswersEveryRequestWithItsID(t *testing.T) {
	rpcNoID := func(code int, msg string) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":null,"error":{"code":%d,"message":%q}}`, code, msg)
	}
	cases := []struct {
		name        string
		status      int
		body        string
		wantCode    float64
		wantMessage []string
	}{
		{"401 as talkd sends it", 401, rpcNoID(-32600, "the bearer token is not valid"), bridgeUnreachable,
			[]string{"talkd refused the token: 401 Unauthorized", "the bearer token is not valid", "TALK_TOKEN"}},
		{"401 without a body", 401, "", bridgeUnreachable, []string{"talkd refused the token: 401"}},
		{"403 origin", 403, rpcNoID(-32600, `origin "http://x" may not use /mcp`), bridgeUnreachable,
			[]string{"talkd refused the request: 403 Forbidden", "may not use /mcp"}},
		{"403 HTTP door body", 403, `{"error":{"code":"host_not_allowed","message":"host \"evil\" is not allowed"}}`, bridgeUnreachable,
			[]string{"403 Forbidden", `host "evil" is not allowed`}},
		{"413", 413, rpcNoID(-32600, "the body exceeds 65536 bytes"), bridgeUnreachable,
			[]string{"too large: 413", "65536 bytes"}},
		{"429 plain text", 429, "slow down\nplease", bridgeUnreachable, []string{"rate limiting: 429", "slow down"}},
		{"500 plain text", 500, "boom", bridgeUnreachable, []string{"talkd failed: 500 Internal Server Error: boom"}},
		{"502 empty", 502, "", bridgeUnreachable, []string{"talkd failed: 502 Bad Gateway"}},
		{"503 JSON", 503, `{"error":{"code":"shutting_down","message":"talkd is shutting down"}}`, bridgeUnreachable,
			[]string{"503 Service Unavailable", "talkd is shutting down"}},
		{"404 not talkd", 404, "404 page not found\n", bridgeUnreachable, []string{"no MCP endpoint at", "/mcp: 404", "TALK_URL"}},
		{"400 JSON-RPC error without id", 400, rpcNoID(-32600, "jsonrpc must be \"2.0\""), -32600,
			[]string{"400 Bad Request", `jsonrpc must be "2.0"`}},
		{"200 JSON-RPC error without id", 200, rpcNoID(-32603, "internal error"), -32603,
			[]string{"without the request's id", "internal error"}},
		{"200 empty", 200, "", bridgeUnreachable, []string{"no answer to the request (HTTP 200)"}},
		{"202 for a request", 202, "", bridgeUnreachable, []string{"no answer to the request (HTTP 202)"}},
		{"200 not JSON-RPC", 200, `{"hello":"world"}`, bridgeUnreachable, []string{"not a JSON-RPC response (HTTP 200)"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			url := bridgeCannedDaemon(t, tc.status, "application/json", tc.body)
			input := `{"jsonrpc":"2.0","id":7,"method":"tools/list"}` + "\n" +
				`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n" +
				`{"jsonrpc":"2.0","id":"jörg-1","method":"tools/call","params":{"name":"speak","arguments":{"text":"hi"}}}` + "\n"
			start := time.Now()
			stdout, stderr, code := runBridgeForTest(t, url, "tok", input)
			if code != 0 || time.Since(start) > 3*time.Second {
				t.Fatalf("exit %d after %v", code, time.Since(start))
			}
			lines := bridgeOutputLines(t, stdout)
			if len(lines) != 2 {
				t.Fatalf("want one answer per request (ids 7 and \"jörg-1\"), got:\n%s", stdout)
			}
			for _, id := range []string{"7", `"jörg-1"`} {
				m := lines[id]
				e, ok := m["error"].(map[string]any)
				if !ok || m["jsonrpc"] != "2.0" {
					t.Fatalf("id %s: %v", id, m)
				}
				if e["code"] != tc.wantCode {
					t.Errorf("id %s: code %v, want %v", id, e["code"], tc.wantCode)
				}
				msg, _ := e["message"].(string)
				for _, w := range tc.wantMessage {
					if !strings.Contains(msg, w) {
						t.Errorf("id %s: message %q lacks %q", id, msg, w)
					}
				}
				if data, _ := e["data"].(map[string]any); data["httpStatus"] != float64(tc.status) {
					t.Errorf("id %s: data %v, want httpStatus %d", id, e["data"], tc.status)
				}
			}
			if !strings.Contains(stderr, "did not answer the request itself") {
				t.Errorf("stderr does not log the refusal:\n%s", stderr)
			}
		})
	}
}

// TestBridgePassesAnswersThatCarryTheID: a 2026-era refusal is the daemon's own answer
// (HTTP 400 or 404 with the request's id and a specific code); it reaches the host as is.
func TestBridgePassesAnswersThatCarryTheID(t *testing.T) {
	for _, status := range []int{400, 404} {
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":7,"error":{"code":-32020,"message":"header mismatch %d"}}`, status)
		url := bridgeCannedDaemon(t, status, "application/json", body)
		stdout, _, _ := runBridgeForTest(t, url, "", `{"jsonrpc":"2.0","id":7,"method":"tools/list"}`+"\n")
		if strings.TrimSpace(stdout) != body {
			t.Errorf("HTTP %d: got %s, want the daemon's answer %s", status, stdout, body)
		}
	}
}

// TestBridgeNotificationRefusedIsLoggedNotAnswered: a refused notification gets no line on
// stdout (the host expects none) but a warning on stderr that names the cause.
func TestBridgeNotificationRefusedIsLoggedNotAnswered(t *testing.T) {
	url := bridgeCannedDaemon(t, 401, "application/json", `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"the bearer token is not valid"}}`)
	stdout, stderr, code := runBridgeForTest(t, url, "bad", `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
	if code != 0 || stdout != "" {
		t.Fatalf("exit %d, stdout %q", code, stdout)
	}
	if !strings.Contains(stderr, "refused a notification") || !strings.Contains(stderr, "talkd refused the token") {
		t.Errorf("stderr: %s", stderr)
	}
}

// TestBridgeRefusedBatchAnswersEachRequest: a batch refused at the HTTP level gets an
// array with one error per request of the batch, each with its id; notifications none.
func TestBridgeRefusedBatchAnswersEachRequest(t *testing.T) {
	url := bridgeCannedDaemon(t, 401, "application/json", `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"the bearer token is not valid"}}`)
	input := `[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/initialized"},{"jsonrpc":"2.0","id":"b","method":"tools/list"}]` + "\n"
	stdout, _, _ := runBridgeForTest(t, url, "bad", input)
	var answers []struct {
		ID    json.RawMessage `json:"id"`
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(stdout), &answers); err != nil {
		t.Fatalf("want one JSON array line: %v\n%s", err, stdout)
	}
	if len(answers) != 2 || string(answers[0].ID) != "1" || string(answers[1].ID) != `"b"` {
		t.Fatalf("answers: %s", stdout)
	}
	for _, a := range answers {
		if !strings.Contains(a.Error.Message, "talkd refused the token: 401") {
			t.Errorf("id %s: %q", a.ID, a.Error.Message)
		}
	}
	// A batch the daemon answered passes unchanged.
	ok := `[{"jsonrpc":"2.0","id":1,"result":{}}]`
	url = bridgeCannedDaemon(t, 200, "application/json", ok)
	if stdout, _, _ := runBridgeForTest(t, url, "", input); strings.TrimSpace(stdout) != ok {
		t.Errorf("answered batch: %s", stdout)
	}
}

func TestBridgeTimesOutOnAHangingDaemon(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	var out, errOut bytes.Buffer
	start := time.Now()
	code := runMCP(context.Background(), []string{"--timeout", "300ms"},
		strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`+"\n"), &out, &errOut, srv.URL, "")
	if code != 0 || time.Since(start) > 5*time.Second {
		t.Fatalf("exit %d after %v", code, time.Since(start))
	}
	e := bridgeOutputLines(t, out.String())["1"]["error"].(map[string]any)
	if !strings.Contains(e["message"].(string), "no answer in time") {
		t.Errorf("timeout answer: %v", e)
	}
}
