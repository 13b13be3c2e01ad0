package api

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"talkd/internal/config"
)

// countingListener counts the writes on the connections it accepts.
type countingListener struct {
	net.Listener
	writes *atomic.Int64
}

func (l countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return countingConn{c, l.writes}, nil
}

type countingConn struct {
	net.Conn
	writes *atomic.Int64
}

func (c countingConn) Write(p []byte) (int, error) {
	c.writes.Add(1)
	return c.Conn.Write(p)
}

// serveCounting serves h on loopback and returns its URL and the count of its writes.
func serveCounting(t *testing.T, h http.Handler) (string, *atomic.Int64) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	writes := new(atomic.Int64)
	hs := httptest.NewUnstartedServer(h)
	hs.Listener = countingListener{ln, writes}
	hs.Start()
	t.Cleanup(hs.Close)
	return hs.URL, writes
}

// postCounting posts body and returns the answer and how many writes the server made.
func postCounting(t *testing.T, url, body string, header map[string]string, writes *atomic.Int64) ([]byte, http.Header, int64) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	before := writes.Load()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("%s: HTTP %d %v", body, resp.StatusCode, err)
	}
	return b, resp.Header, writes.Load() - before
}

type bigOut struct {
	Data string `json:"data"`
}

// A large answer leaves talkd in as many writes as the same bytes leave a plain handler
// that writes them at once: its closing "}\n" rides in the result's last write (endResult)
// instead of a 2-byte write(2) of its own after it. tools/list and a tool's result, in
// both eras.
func TestLargeAnswerTakesNoExtraWrite(t *testing.T) {
	cfg := &config.Config{Version: 1}
	cfg.Server.Listen = "127.0.0.1:7077"
	cfg.Voice.Lang = "en"
	s := New(Options{Config: cfg, Voice: &mcpTestVoice{}, Version: "test", Log: slog.New(slog.DiscardHandler)})
	AddTool(s, ToolSpec[noArgs, bigOut]{Name: "big", Description: strings.Repeat("a long description ", 600),
		Call: func(context.Context, Caller, noArgs, json.RawMessage) (bigOut, string, *ToolError) {
			return bigOut{Data: strings.Repeat("x", 20000)}, "big", nil
		}})
	url, writes := serveCounting(t, s.Handler())
	plainURL, plainWrites := serveCounting(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body) // the answer to send, as the test read it from talkd
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(len(b)))
		_, _ = w.Write(b)
	}))
	meta2026 := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"}}`
	cases := []struct {
		name, body string
		header     map[string]string
	}{
		{"tools/list 2025", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, map[string]string{"MCP-Protocol-Version": "2025-11-25"}},
		{"tools/call 2025", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"big","arguments":{}}}`, map[string]string{"MCP-Protocol-Version": "2025-11-25"}},
		{"tools/list 2026", `{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{` + meta2026 + `}}`,
			map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/list"}},
		{"tools/call 2026", `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"big","arguments":{},` + meta2026 + `}}`,
			map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "big"}},
	}
	for _, c := range cases {
		answer, _, n := postCounting(t, url+"/mcp", c.body, c.header, writes)
		if len(answer) < 8<<10 || !json.Valid(answer) || !strings.HasSuffix(string(answer), "}\n") || strings.Contains(string(answer), `"error"`) {
			t.Fatalf("%s: want a large answer, got %d bytes: %.200s", c.name, len(answer), answer)
		}
		same, _, plain := postCounting(t, plainURL, string(answer), nil, plainWrites)
		if string(same) != string(answer) {
			t.Fatalf("%s: the plain handler sent other bytes", c.name)
		}
		if n != plain {
			t.Errorf("%s: %d bytes in %d writes; a plain handler writes them in %d", c.name, len(answer), n, plain)
		}
	}
}

func TestEndResultAndWithTail(t *testing.T) {
	r := endResult([]byte(`{"a":1}`))
	if string(r) != `{"a":1}` {
		t.Fatalf("endResult changed the result: %s", r)
	}
	full, ok := withTail(r)
	if !ok || string(full) != "{\"a\":1}}\n" {
		t.Errorf("withTail(endResult(…)) = %q, %v", full, ok)
	}
	for _, b := range [][]byte{nil, []byte(`{}`), make([]byte, 2, 4), r[:3]} {
		if got, ok := withTail(b); ok || string(got) != string(b) {
			t.Errorf("withTail(%q) = %q, %v: want it unchanged and false", b, got, ok)
		}
	}
}
