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

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// speakIn mirrors the arguments of talkd's speak tool.
type speakIn struct {
	Text     string `json:"text" jsonschema:"what to say, 1 to 1000 characters"`
	Priority string `json:"priority,omitempty" jsonschema:"low, normal or high"`
	Lang     string `json:"lang,omitempty" jsonschema:"language code such as en or de"`
	Provider string `json:"provider,omitempty" jsonschema:"voice provider name"`
	Now      bool   `json:"now,omitempty" jsonschema:"pass quiet hours and the rate limit"`
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

func newHandler() http.Handler {
	server := mcp.NewServer(&mcp.Implementation{Name: "gosdk-peer", Version: "1"}, nil)
	mcp.AddTool(server, &mcp.Tool{Name: "speak", Description: "Say a short announcement aloud."},
		func(_ context.Context, _ *mcp.CallToolRequest, in speakIn) (*mcp.CallToolResult, speakOut, error) {
			if err := validate(in); err != nil {
				return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: err.Error()}}}, speakOut{Status: "rejected", Message: err.Error()}, nil
			}
			out := speakOut{Status: "queued", ID: "a1", Position: 1, Message: "queued as a1 at position 1"}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "queued: a1"}}}, out, nil
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
	if err := run(*addr); err != nil {
		slog.Error("gosdk peer", "err", err)
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
