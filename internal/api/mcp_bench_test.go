package api

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Round trips of tools/list and tools/call speak over loopback HTTP (a real TCP
// connection, kept alive), for both protocol eras, with the admission path behind speak
// but no queue (benchVoice admits everything). The go-sdk variants run the official Go
// SDK's stateless Streamable HTTP server with an equivalent speak tool on the same client
// loop, as a reference point for "the best Go MCP servers".
//
//	go test ./internal/api -run '^$' -bench 'MCP' -benchmem

const (
	benchList2025 = `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`
	benchCall2025 = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"speak","arguments":{"text":"Tests are green on main","priority":"high"}}}`
	benchMeta2026 = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"bench","version":"1"}}`
	benchList2026 = `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{` + benchMeta2026 + `}}`
	benchCall2026 = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"speak","arguments":{"text":"Tests are green on main","priority":"high"},` + benchMeta2026 + `}}`
)

var (
	benchHeaders2025 = map[string]string{"MCP-Protocol-Version": "2025-11-25"}
	benchListH2026   = map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/list"}
	benchCallH2026   = map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "speak"}
)

// benchRoundTrips posts body to url b.N times and checks each answer.
func benchRoundTrips(b *testing.B, url, body string, headers map[string]string, want string) {
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	defer client.CloseIdleConnections()
	payload := []byte(body)
	buf := bytes.NewBuffer(make([]byte, 0, 8<<10))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(payload))
		if err != nil {
			b.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		for k, v := range headers {
			req.Header.Set(k, v)
		}
		resp, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		buf.Reset()
		_, err = io.Copy(buf, resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK || !bytes.Contains(buf.Bytes(), []byte(want)) {
			b.Fatalf("HTTP %d %v: %s", resp.StatusCode, err, buf.Bytes())
		}
	}
}

func talkdBenchURL(b *testing.B) string {
	hs := httptest.NewServer(benchServer())
	b.Cleanup(hs.Close)
	return hs.URL + "/mcp"
}

func BenchmarkMCPToolsList2025(b *testing.B) {
	benchRoundTrips(b, talkdBenchURL(b), benchList2025, benchHeaders2025, `"name":"speak"`)
}

func BenchmarkMCPToolsList2026(b *testing.B) {
	benchRoundTrips(b, talkdBenchURL(b), benchList2026, benchListH2026, `"name":"speak"`)
}

func BenchmarkMCPToolsCallSpeak2025(b *testing.B) {
	benchRoundTrips(b, talkdBenchURL(b), benchCall2025, benchHeaders2025, `queued: a1`)
}

func BenchmarkMCPToolsCallSpeak2026(b *testing.B) {
	benchRoundTrips(b, talkdBenchURL(b), benchCall2026, benchCallH2026, `queued: a1`)
}

// BenchmarkMCPHandlerToolsList measures the handler alone, without HTTP transport.
func BenchmarkMCPHandlerToolsList(b *testing.B) {
	h := benchServer()
	b.ReportAllocs()
	for b.Loop() {
		req := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:7077/mcp", strings.NewReader(benchList2025))
		req.Header.Set("MCP-Protocol-Version", "2025-11-25")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != http.StatusOK {
			b.Fatalf("status %d", w.Code)
		}
	}
}

// The reference: the official Go SDK serving an equivalent speak tool statelessly.

type sdkSpeakIn struct {
	Text     string `json:"text" jsonschema:"what to say"`
	Priority string `json:"priority,omitempty" jsonschema:"low, normal or high"`
	Lang     string `json:"lang,omitempty"`
	Provider string `json:"provider,omitempty"`
	Now      bool   `json:"now,omitempty"`
}

type sdkSpeakOut struct {
	Status   string `json:"status"`
	ID       string `json:"id,omitempty"`
	Position int    `json:"position,omitempty"`
	Message  string `json:"message"`
}

func sdkBenchURL(b *testing.B) string {
	server := mcp.NewServer(&mcp.Implementation{Name: "reference", Version: "1"}, nil)
	mcp.AddTool(server, &mcp.Tool{Name: "speak", Description: "Say a short announcement aloud."},
		func(_ context.Context, _ *mcp.CallToolRequest, in sdkSpeakIn) (*mcp.CallToolResult, sdkSpeakOut, error) {
			out := sdkSpeakOut{Status: "queued", ID: "a1", Position: 1, Message: "queued as a1 at position 1"}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "queued: a1"}}}, out, nil
		})
	handler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server },
		&mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true})
	hs := httptest.NewServer(handler)
	b.Cleanup(hs.Close)
	return hs.URL
}

func BenchmarkMCPGoSDKToolsList2025(b *testing.B) {
	benchRoundTrips(b, sdkBenchURL(b), benchList2025, benchHeaders2025, `"name":"speak"`)
}

func BenchmarkMCPGoSDKToolsCallSpeak2025(b *testing.B) {
	benchRoundTrips(b, sdkBenchURL(b), benchCall2025, benchHeaders2025, `queued: a1`)
}

// BenchmarkMCPHandlerToolsCall measures tools/call speak through the handler alone
// (routing, identity, body, JSON-RPC decoding, strict argument decoding, validation,
// admission, result encoding), without HTTP transport.
func BenchmarkMCPHandlerToolsCall(b *testing.B) {
	h := benchServer()
	b.ReportAllocs()
	for b.Loop() {
		req := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:7077/mcp", strings.NewReader(benchCall2025))
		req.Header.Set("MCP-Protocol-Version", "2025-11-25")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != http.StatusOK || !bytes.Contains(w.Body.Bytes(), []byte("queued: a1")) {
			b.Fatalf("status %d: %s", w.Code, w.Body)
		}
	}
}

// BenchmarkMCPHandlerToolsCall2026 is the same call in the stateless 2026 era (_meta and
// header checks on every request).
func BenchmarkMCPHandlerToolsCall2026(b *testing.B) {
	h := benchServer()
	b.ReportAllocs()
	for b.Loop() {
		req := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:7077/mcp", strings.NewReader(benchCall2026))
		for k, v := range benchCallH2026 {
			req.Header.Set(k, v)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != http.StatusOK || !bytes.Contains(w.Body.Bytes(), []byte("queued: a1")) {
			b.Fatalf("status %d: %s", w.Code, w.Body)
		}
	}
}
