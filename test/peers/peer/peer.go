// Package peer holds what the test-only peer MCP servers (test/peers/gosdk,
// test/peers/mcpgo, and the floor, test/peers/floor) share, so the load comparison measures the libraries, not two copies
// of the same glue: the speak tool's validation and answer, and the process around the
// handler (listen, announce the address, stop on a signal).
package peer

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"
	"unicode/utf8"
)

// Queued is the structured answer of an admitted announcement, like talkd's outcome.
type Queued struct {
	Status   string `json:"status"`
	ID       string `json:"id,omitempty"`
	Position int    `json:"position,omitempty"`
	Message  string `json:"message"`
}

// QueuedAnswer is what both peers answer to a valid speak call, with its text copy.
func QueuedAnswer() (Queued, string) {
	return Queued{Status: "queued", ID: "a1", Position: 1, Message: "queued as a1 at position 1"}, "queued: a1"
}

// Validate applies the checks talkd applies to a speak call's text and priority.
func Validate(text, priority string) error {
	n := utf8.RuneCountInString(text)
	if n < 1 || n > 1000 {
		return fmt.Errorf(`field "text" must have 1 to 1000 characters, has %d`, n)
	}
	switch priority {
	case "", "low", "normal", "high":
	default:
		return fmt.Errorf(`field "priority" must be low, normal or high, not %q`, priority)
	}
	return nil
}

// Serve listens on addr, prints "listening addr=HOST:PORT" on stdout for test/load,
// serves h until SIGINT or SIGTERM, and shuts down within 5 s.
func Serve(addr string, h http.Handler) error {
	return ServeServer(addr, &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second})
}

// ServeServer is Serve with the caller's server settings (the floor uses talkd's).
func ServeServer(addr string, srv *http.Server) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen %s: %w", addr, err)
	}
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
