package main

import (
	"bytes"
	"context"
	"encoding/json"
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
	if !strings.Contains(e["message"].(string), "HTTP 401") || !strings.Contains(e["message"].(string), "bearer token is not valid") {
		t.Errorf("refusal: %v", e)
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
