package api

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"talkd/internal/config"
)

// syncBuffer is a log sink the handler's goroutine and the test can share.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestCancelledCallLogsAbandonedNotRefused: a call whose client disconnects while the tool
// runs fails with the request's cancellation; the log says the call was abandoned, not
// refused (before, "tool call refused … context canceled" sent users looking for a rule).
// A tool's own failure is still logged as a refusal.
func TestCancelledCallLogsAbandonedNotRefused(t *testing.T) {
	cfg := &config.Config{Version: 1}
	cfg.Voice.Lang = "en"
	var logs syncBuffer
	s := New(Options{Config: cfg, Voice: &mcpTestVoice{}, Version: "test", Log: slog.New(slog.NewTextHandler(&logs, nil))})
	started := make(chan struct{}, 1)
	finished := make(chan struct{}, 1)
	AddTool(s, ToolSpec[noArgs, noArgs]{Name: "waits", Call: func(ctx context.Context, _ Caller, _ noArgs, _ json.RawMessage) (noArgs, string, *ToolError) {
		defer func() { finished <- struct{}{} }()
		started <- struct{}{}
		<-ctx.Done()
		return noArgs{}, "", &ToolError{Error: "failed", Message: ctx.Err().Error()}
	}})
	AddTool(s, ToolSpec[noArgs, noArgs]{Name: "says_no", Call: func(context.Context, Caller, noArgs, json.RawMessage) (noArgs, string, *ToolError) {
		return noArgs{}, "", &ToolError{Error: "refused", Message: "a rule said no"}
	}})
	hs := httptest.NewServer(s.Handler())
	defer hs.Close()

	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, hs.URL+"/mcp",
		strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"waits","arguments":{}}}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	done := make(chan error, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		done <- err
	}()
	<-started
	cancel()
	if err := <-done; err == nil {
		t.Fatal("the cancelled request got an answer")
	}
	select {
	case <-finished:
	case <-time.After(10 * time.Second):
		t.Fatal("the tool did not see its request cancelled")
	}
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(logs.String(), "tool call abandoned") && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	got := logs.String()
	if !strings.Contains(got, `msg="tool call abandoned: the request was cancelled (client disconnected or daemon stopping)" tool=waits`) {
		t.Fatalf("no abandoned line for the cancelled call:\n%s", got)
	}
	if strings.Contains(got, "tool call refused") {
		t.Errorf("the cancelled call was logged as refused:\n%s", got)
	}

	if st, b, err := rpcPost(hs.URL, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"says_no","arguments":{}}}`); err != nil || st != 200 || !strings.Contains(toJSON(b), "a rule said no") {
		t.Fatalf("says_no: %d %v %v", st, b, err)
	}
	if !strings.Contains(logs.String(), `msg="tool call refused" tool=says_no code=refused`) {
		t.Errorf("a tool's own refusal is not logged as one:\n%s", logs.String())
	}
}
