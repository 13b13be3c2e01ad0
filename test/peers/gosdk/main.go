// Command gosdk is a test-only peer for talkd's load comparison: a minimal MCP server on
// the official Go SDK (github.com/modelcontextprotocol/go-sdk), stateless Streamable HTTP
// with JSON responses, offering one speak-like tool. It exists so test/load can drive
// talkd and a well-known Go MCP server with the same requests in the same run; it is never
// imported by the product.
//
//	go run ./test/peers/gosdk -addr 127.0.0.1:0
//
// It prints "listening addr=HOST:PORT" on stdout once it accepts connections, serves
// POST /mcp, and stops on SIGINT or SIGTERM.
package main

import (
	"context"
	"flag"
	"log/slog"
	"net/http"
	"os"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"talkd/test/peers/peer"
)

// speakIn mirrors the arguments of talkd's speak tool.
type speakIn struct {
	Text     string `json:"text" jsonschema:"what to say, 1 to 1000 characters"`
	Priority string `json:"priority,omitempty" jsonschema:"low, normal or high"`
	Lang     string `json:"lang,omitempty" jsonschema:"language code such as en or de"`
	Provider string `json:"provider,omitempty" jsonschema:"voice provider name"`
	Now      bool   `json:"now,omitempty" jsonschema:"pass quiet hours and the rate limit"`
}

func newHandler() http.Handler {
	server := mcp.NewServer(&mcp.Implementation{Name: "gosdk-peer", Version: "1"}, nil)
	mcp.AddTool(server, &mcp.Tool{Name: "speak", Description: "Say a short announcement aloud."},
		func(_ context.Context, _ *mcp.CallToolRequest, in speakIn) (*mcp.CallToolResult, peer.Queued, error) {
			if err := peer.Validate(in.Text, in.Priority); err != nil {
				return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: err.Error()}}}, peer.Queued{Status: "rejected", Message: err.Error()}, nil
			}
			out, text := peer.QueuedAnswer()
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, out, nil
		})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server },
		&mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true})
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	return mux
}

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen address (loopback)")
	flag.Parse()
	if err := peer.Serve(*addr, newHandler()); err != nil {
		slog.Error("gosdk peer", "err", err)
		os.Exit(1)
	}
}
