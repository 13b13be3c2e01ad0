package api

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"talkd/internal/config"
)

// rpcPost sends one JSON-RPC body to /mcp (2025 era) and decodes the answer.
func rpcPost(url, body string) (int, map[string]any, error) {
	req, err := http.NewRequest(http.MethodPost, url+"/mcp", strings.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return resp.StatusCode, nil, err
	}
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		return resp.StatusCode, nil, errors.New("not JSON: " + string(raw))
	}
	return resp.StatusCode, out, nil
}

const slowCall = `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"slow","arguments":{}}}`

// TestHeavyCallsWaitTheirTurn: with one heavy slot taken, cheap doors (/healthz,
// tools/list, speak) still answer; a second heavy call waits and, past the bound, gets
// the "busy" JSON-RPC error; once the first finishes, heavy calls run again.
func TestHeavyCallsWaitTheirTurn(t *testing.T) {
	cfg := &config.Config{Version: 1}
	cfg.Voice.Lang = "en"
	s := New(Options{Config: cfg, Voice: &mcpTestVoice{}, Version: "test", HeavyCalls: 1, HeavyWait: 200 * time.Millisecond})
	started := make(chan struct{}, 4)
	release := make(chan struct{})
	AddTool(s, ToolSpec[noArgs, noArgs]{Name: "slow", Heavy: true, Call: func(ctx context.Context, _ Caller, _ noArgs, _ json.RawMessage) (noArgs, string, *ToolError) {
		started <- struct{}{}
		select {
		case <-release:
		case <-ctx.Done():
		}
		return noArgs{}, "done: slow", nil
	}})
	hs := httptest.NewServer(s.Handler())
	defer hs.Close()

	type answer struct {
		status int
		body   map[string]any
		err    error
	}
	first := make(chan answer, 1)
	go func() {
		st, b, err := rpcPost(hs.URL, slowCall)
		first <- answer{st, b, err}
	}()
	<-started

	resp, err := http.Get(hs.URL + "/healthz")
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("/healthz while a heavy call runs: %v %v", resp, err)
	}
	resp.Body.Close()
	if st, b, err := rpcPost(hs.URL, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`); err != nil || st != 200 || b["result"] == nil {
		t.Fatalf("tools/list while a heavy call runs: %d %v %v", st, b, err)
	}
	if st, b, err := rpcPost(hs.URL, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"speak","arguments":{"text":"hi"}}}`); err != nil || st != 200 || !strings.Contains(toJSON(b), "queued: a1") {
		t.Fatalf("speak while a heavy call runs: %d %v %v", st, b, err)
	}

	st, b, err := rpcPost(hs.URL, slowCall)
	if err != nil || st != 200 {
		t.Fatalf("second heavy call: %d %v", st, err)
	}
	e, _ := b["error"].(map[string]any)
	if e == nil || e["code"] != float64(rpcServerBusy) || !strings.HasPrefix(e["message"].(string), "busy: 1 plan tool calls are running") {
		t.Fatalf("second heavy call while the slot is taken: %v, want a busy error", b)
	}
	if d, _ := e["data"].(map[string]any); d["retry_after_ms"] != float64(5000) {
		t.Errorf("busy error data: %v", e["data"])
	}
	select {
	case <-started:
		t.Fatal("the refused heavy call ran anyway")
	default:
	}

	close(release)
	a := <-first
	if a.err != nil || a.status != 200 || !strings.Contains(toJSON(a.body), "done: slow") {
		t.Fatalf("first heavy call: %d %v %v", a.status, a.body, a.err)
	}
	if st, b, err := rpcPost(hs.URL, slowCall); err != nil || st != 200 || !strings.Contains(toJSON(b), "done: slow") {
		t.Fatalf("heavy call after the slot was freed: %d %v %v", st, b, err)
	}
}

// TestAcquireHeavyHonoursContext: a waiting call ends with its request, not at the bound.
func TestAcquireHeavyHonoursContext(t *testing.T) {
	cfg := &config.Config{Version: 1}
	s := New(Options{Config: cfg, Voice: &mcpTestVoice{}, HeavyCalls: 1, HeavyWait: time.Hour})
	release, err := s.acquireHeavy(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.acquireHeavy(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("acquire with a cancelled request: %v", err)
	}
	if e := s.mcp.busyError("werkbaum_inspect", context.Canceled); e.Code != rpcInternalError {
		t.Errorf("a cancelled wait is answered %+v", e)
	}
}

// TestHeavyCallsDefault: without explicit bounds, the slots match the CPUs Go uses and the
// wait is DefaultHeavyWait.
func TestHeavyCallsDefault(t *testing.T) {
	s := New(Options{Config: &config.Config{Version: 1}, Voice: &mcpTestVoice{}})
	if cap(s.heavy) != runtime.GOMAXPROCS(0) || s.heavyWait != DefaultHeavyWait {
		t.Errorf("heavy slots %d, wait %s", cap(s.heavy), s.heavyWait)
	}
}

func toJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
