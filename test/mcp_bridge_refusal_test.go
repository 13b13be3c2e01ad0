package test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestMCPBridgeWrongTokenAnswersAtOnce: `talk mcp` in front of a shared-mode daemon with a
// token the daemon does not know. Every request the host sends (initialize first, as every
// host does, and a later tools/list) gets a JSON-RPC error carrying that request's id
// within 2 s, saying that talkd refused the token; the notification in between gets no
// line. Before the fix the bridge passed on the daemon's 401 error with id null, and the
// host waited for its own timeout. A real client (the Go SDK) fails to connect at once too.
func TestMCPBridgeWrongTokenAnswersAtOnce(t *testing.T) {
	t.Parallel()
	_, talk := binaries(t)
	planPath := filepath.Join(t.TempDir(), "plan.werkbaum")
	if err := os.WriteFile(planPath, []byte(sharedPlan), 0o644); err != nil {
		t.Fatal(err)
	}
	d := startDaemon(t, daemonOptions{Config: sharedConfig(planPath), Env: sharedEnv()})
	bridgeEnv := append(append([]string(nil), d.Env...), "TALK_TOKEN=wrong-"+strings.Repeat("x", 34))

	t.Run("raw lines", func(t *testing.T) {
		cmd := exec.Command(talk, "mcp", "--url", d.URL)
		cmd.Env = bridgeEnv
		var stderr syncBuffer
		cmd.Stderr = &stderr
		stdin, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		stdoutPipe, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		defer func() {
			stdin.Close()
			done := make(chan struct{})
			go func() { _ = cmd.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				_ = cmd.Process.Kill()
				<-done
			}
		}()
		lines := make(chan string, 8)
		go func() {
			sc := bufio.NewScanner(stdoutPipe)
			sc.Buffer(make([]byte, 1<<20), 1<<20)
			for sc.Scan() {
				lines <- sc.Text()
			}
			close(lines)
		}()
		answer := func(req string) map[string]any {
			t.Helper()
			start := time.Now()
			if _, err := io.WriteString(stdin, req+"\n"); err != nil {
				t.Fatal(err)
			}
			select {
			case line, ok := <-lines:
				if !ok {
					t.Fatalf("the bridge closed stdout; stderr:\n%s", stderr.String())
				}
				if took := time.Since(start); took > 2*time.Second {
					t.Errorf("the answer took %v, want under 2 s", took)
				}
				var m map[string]any
				if err := json.Unmarshal([]byte(line), &m); err != nil {
					t.Fatalf("stdout line is not JSON: %q", line)
				}
				return m
			case <-time.After(2 * time.Second):
				t.Fatalf("no answer within 2 s to %s; stderr:\n%s", req, stderr.String())
			}
			return nil
		}
		check := func(m map[string]any, wantID any) {
			t.Helper()
			e, _ := m["error"].(map[string]any)
			msg, _ := e["message"].(string)
			if m["id"] != wantID || !strings.Contains(msg, "talkd refused the token: 401") || !strings.Contains(msg, "bearer token is not valid") {
				t.Errorf("want an error for id %v naming the refused token, got %v", wantID, m)
			}
		}
		check(answer(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"@jörg","version":"1"}}}`), float64(1))
		if _, err := io.WriteString(stdin, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n"); err != nil {
			t.Fatal(err)
		}
		check(answer(`{"jsonrpc":"2.0","id":"list-Müller","method":"tools/list"}`), "list-Müller")
		select {
		case line := <-lines:
			t.Errorf("an extra line (for the notification?): %s", line)
		case <-time.After(200 * time.Millisecond):
		}
		if !strings.Contains(stderr.String(), "refused a notification") {
			t.Errorf("the refused notification left no log line; stderr:\n%s", stderr.String())
		}
	})

	t.Run("Go SDK", func(t *testing.T) {
		cmd := exec.Command(talk, "mcp", "--url", d.URL)
		cmd.Env = bridgeEnv
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		client := mcp.NewClient(&mcp.Implementation{Name: "wrong-token-host", Version: "1"}, nil)
		start := time.Now()
		session, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		if err == nil {
			session.Close()
			t.Fatal("connect with a wrong token succeeded")
		}
		if took := time.Since(start); took > 2*time.Second || !strings.Contains(err.Error(), "talkd refused the token") {
			t.Errorf("connect failed after %v with %v; want under 2 s, naming the refused token", took, err)
		}
	})
}
