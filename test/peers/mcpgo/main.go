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
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// speakIn mirrors the arguments of talkd's speak tool.
type speakIn struct {
	Text     string `json:"text"`
	Priority string `json:"priority,omitempty"`
	Lang     string `json:"lang,omitempty"`
	Provider string `json:"provider,omitempty"`
	Now      bool   `json:"now,omitempty"`
}

// speakOut is the structured answer, like talkd's admission outcome.
type speakOut struct {
	Status   string `json:"status"`
	ID       string `json:"id,omitempty"`
	Position int    `json:"position,omitempty"`
	Message  string `json:"message"`
}

// validate applies the same checks talkd applies to text and priority.
func validate(in speakIn) error {
	n := utf8.RuneCountInString(in.Text)
	if n < 1 || n > 1000 {
		return fmt.Errorf(`field "text" must have 1 to 1000 characters, has %d`, n)
	}
	switch in.Priority {
	case "", "low", "normal", "high":
	default:
		return fmt.Errorf(`field "priority" must be low, normal or high, not %q`, in.Priority)
	}
	return nil
}

func speak(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var in speakIn
	if err := req.BindArguments(&in); err != nil {
		return mcp.NewToolResultError(fmt.Sprintf("arguments: %v", err)), nil
	}
	if err := validate(in); err != nil {
		return mcp.NewToolResultError(err.Error()), nil
	}
	out := speakOut{Status: "queued", ID: "a1", Position: 1, Message: "queued as a1 at position 1"}
	return mcp.NewToolResultStructured(out, "queued: a1"), nil
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
	if err := run(*addr); err != nil {
		slog.Error("mcpgo peer", "err", err)
		os.Exit(1)
	}
}

func run(addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen %s: %w", addr, err)
	}
	srv := &http.Server{Handler: newHandler(), ReadHeaderTimeout: 10 * time.Second}
	fmt.Printf("listening addr=%s\n", ln.Addr())
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("shutdown: %w", err)
	}
	return nil
}
