package main

import (
	"context"
	"fmt"
	"io"
)

// runMCP serves MCP over stdio for hosts that launch a command, forwarding each message to
// the daemon's /mcp endpoint. The full bridge lands in the next commit.
func runMCP(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, daemonURL, token string) int {
	_, _ = fmt.Fprintln(stderr, "talk mcp: the stdio bridge is not available in this build")
	return 1
}
