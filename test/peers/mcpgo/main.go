// Command mcpgo is a test-only peer for talkd's load comparison: a minimal MCP server on
// github.com/mark3labs/mcp-go (Streamable HTTP, stateless mode, no server-sent streams),
// offering one speak-like tool. It exists so test/load can drive talkd and a widely used
// Go MCP server with the same requests in the same run; it is never imported by the
// product.
//
//	go run ./test/peers/mcpgo -addr 127.0.0.1:0
//
// It prints "listening addr=HOST:PORT" on stdout once it accepts connections, serves
// POST /mcp, and stops on SIGINT or SIGTERM.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	"os"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"talkd/test/peers/peer"
)

// speakIn mirrors the arguments of talkd's speak tool.
type speakIn struct {
	Text     string `json:"text"`
	Priority string `json:"priority,omitempty"`
	Lang     string `json:"lang,omitempty"`
	Provider string `json:"provider,omitempty"`
	Now      bool   `json:"now,omitempty"`
}

func speak(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var in speakIn
	if err := req.BindArguments(&in); err != nil {
		return mcp.NewToolResultError(fmt.Sprintf("arguments: %v", err)), nil
	}
	if err := peer.Validate(in.Text, in.Priority); err != nil {
		return mcp.NewToolResultError(err.Error()), nil
	}
	out, text := peer.QueuedAnswer()
	return mcp.NewToolResultStructured(out, text), nil
}

func newHandler() http.Handler {
	s := server.NewMCPServer("mcpgo-peer", "1", server.WithToolCapabilities(false))
	s.AddTool(mcp.NewTool("speak",
		mcp.WithDescription("Say a short announcement aloud."),
		mcp.WithString("text", mcp.Required(), mcp.MinLength(1), mcp.MaxLength(1000), mcp.Description("what to say")),
		mcp.WithString("priority", mcp.Enum("low", "normal", "high"), mcp.Description("low, normal or high")),
		mcp.WithString("lang", mcp.Description("language code such as en or de")),
		mcp.WithString("provider", mcp.Description("voice provider name")),
		mcp.WithBoolean("now", mcp.Description("pass quiet hours and the rate limit")),
	), speak)
	h := server.NewStreamableHTTPServer(s, server.WithStateLess(true), server.WithDisableStreaming(true))
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	return mux
}

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen address (loopback)")
	flag.Parse()
	if err := peer.Serve(*addr, newHandler()); err != nil {
		slog.Error("mcpgo peer", "err", err)
		os.Exit(1)
	}
}
