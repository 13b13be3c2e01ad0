package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// The classifiers decide what counts as a failure in every table; these cases pin them.
func TestClassifyCall(t *testing.T) {
	cases := []struct {
		status int
		body   string
		want   outcome
	}{
		{200, `{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"queued: a1"}]}}`, outcome{Kind: "queued", OK: true}},
		{200, `{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"muted: until unmuted"}]}}`, outcome{Kind: "muted", OK: true}},
		{200, `{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"{\"base\":{}}"}]}}`, outcome{Kind: "result", OK: true}},
		{200, `{"jsonrpc":"2.0","id":2,"result":{"isError":true,"content":[{"type":"text","text":"queue full"}]}}`, outcome{Kind: "tool error", Failed: true}},
		{200, `{"jsonrpc":"2.0","id":2,"error":{"code":-32602,"message":"x"}}`, outcome{Kind: "rpc error", Failed: true}},
		{200, `not json`, outcome{Kind: "bad body", Failed: true}},
		{503, `{}`, outcome{Kind: "HTTP 503", Failed: true}},
	}
	for _, c := range cases {
		if got := classifyCall(c.status, []byte(c.body)); got != c.want {
			t.Errorf("classifyCall(%d, %s) = %+v, want %+v", c.status, c.body, got, c.want)
		}
		if got := classifyCallFast(c.status, []byte(c.body)); got != c.want {
			t.Errorf("classifyCallFast(%d, %s) = %+v, want %+v", c.status, c.body, got, c.want)
		}
	}
}

// fakePlanServer answers werkbaum_read and werkbaum_apply_ops like talkd: a write on an
// old base is a conflict carrying the current base.
type fakePlanServer struct {
	mu       sync.Mutex
	revision int
	bases    []int // the base revision each apply_ops carried
}

func (f *fakePlanServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Params struct {
			Name      string `json:"name"`
			Arguments struct {
				Base struct {
					Revision int `json:"revision"`
				} `json:"base"`
			} `json:"arguments"`
		} `json:"params"`
	}
	b, _ := io.ReadAll(r.Body)
	if err := json.Unmarshal(b, &req); err != nil {
		http.Error(w, err.Error(), 400)
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	base := map[string]any{"revision": f.revision, "checksum": "c"}
	var result map[string]any
	switch {
	case req.Params.Name == "werkbaum_read":
		result = map[string]any{"content": []any{map[string]any{"type": "text", "text": "plan"}}, "structuredContent": map[string]any{"base": base, "text": "plan"}}
	case req.Params.Arguments.Base.Revision != f.revision:
		f.bases = append(f.bases, req.Params.Arguments.Base.Revision)
		detail, _ := json.Marshal(map[string]any{"error": "conflict", "message": "conflict", "conflict": true, "base": base, "text": "plan"})
		result = map[string]any{"isError": true, "content": []any{map[string]any{"type": "text", "text": string(detail)}}}
	default:
		f.bases = append(f.bases, req.Params.Arguments.Base.Revision)
		f.revision++
		result = map[string]any{"content": []any{map[string]any{"type": "text", "text": "applied"}}, "structuredContent": map[string]any{"base": map[string]any{"revision": f.revision, "checksum": "c"}}}
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": 1, "result": result})
}

// A writer reads once, then writes on the base of its last answer; after a conflict it
// retries on the base the conflict carried.
func TestWriteWorkerRetriesOnConflict(t *testing.T) {
	f := &fakePlanServer{}
	hs := httptest.NewServer(f)
	defer hs.Close()
	tg := target{Name: "fake", URL: hs.URL}
	a, b := writeWorker(tg, 1), writeWorker(tg, 2)
	ctx := context.Background()
	c, err := newPoster(clientRaw, hs.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer c.close()
	steps := []struct {
		w    worker
		want string
	}{
		{a, "read"}, {b, "read"}, // both hold revision 0
		{a, "applied"},  // revision 0 → 1
		{b, "conflict"}, // b still on 0
		{b, "applied"},  // b retries on 1 → 2
		{a, "conflict"}, // a on 1
		{a, "applied"},
	}
	for i, s := range steps {
		if got := s.w(ctx, c); got.Kind != s.want || got.Failed {
			t.Fatalf("step %d: %+v, want %s", i, got, s.want)
		}
	}
	if want := []int{0, 0, 1, 1, 2}; len(f.bases) != len(want) || f.bases[2] != 1 || f.bases[4] != 2 {
		t.Errorf("bases sent: %v, want %v", f.bases, want)
	}
}

// runLoad stops by itself at its deadline and counts every answer exactly once.
func TestRunLoadIsBoundedAndCounts(t *testing.T) {
	var mu sync.Mutex
	served := 0
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/healthz" {
			w.Write([]byte(`{"ok":true}`))
			return
		}
		mu.Lock()
		served++
		mu.Unlock()
		w.Write([]byte(`{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"speak"}]}}`))
	}))
	defer hs.Close()
	sc := scenarios()["tools/list"]
	start := time.Now()
	r := runLoad(context.Background(), target{Name: "fake", URL: hs.URL, PID: os.Getpid()}, sc, 4,
		runConfig{Duration: 2 * time.Second, Warmup: 50 * time.Millisecond, MaxRequests: 200})
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("the run took %s", d)
	}
	if r.Requests != 200 || r.OK != 200 || r.Failed != 0 || r.Kinds["ok"] != 200 {
		t.Errorf("want exactly 200 measured ok answers (the bound), got %+v", r)
	}
	mu.Lock()
	defer mu.Unlock()
	if served < 200 {
		t.Errorf("the server saw %d requests, fewer than measured", served)
	}
	if r.RSSPeakKB <= 0 || r.P99ms < r.P50ms {
		t.Errorf("RSS %d kB, p50 %.3f, p99 %.3f", r.RSSPeakKB, r.P50ms, r.P99ms)
	}
}

func TestParseFlagsRejectsUnknown(t *testing.T) {
	for _, args := range [][]string{{"-mode", "soak"}, {"-scenarios", "nope"}, {"-conc", "0"}, {"-duration", "1h"},
		{"-peers", "go-sdk,nope"}, {"-peer-scenarios", "inspect"}} {
		if _, err := parseFlags(args); err == nil {
			t.Errorf("parseFlags(%v) accepted", args)
		}
	}
	o, err := parseFlags([]string{"-conc", "1, 8", "-mode", "peers"})
	if err != nil || len(o.Conc) != 2 || o.Conc[1] != 8 || o.Modes[0] != "peers" {
		t.Errorf("parseFlags: %+v %v", o, err)
	}
}

// Every other round runs the targets in reverse, and talkd and the floor stay neighbours.
func TestRoundOrder(t *testing.T) {
	ts := []target{{Name: "talkd"}, {Name: "floor"}, {Name: "go-sdk"}}
	names := func(ts []target) (s []string) {
		for _, t := range ts {
			s = append(s, t.Name)
		}
		return s
	}
	if got := names(roundOrder(ts, 1)); !slices.Equal(got, []string{"talkd", "floor", "go-sdk"}) {
		t.Errorf("round 1: %v", got)
	}
	if got := names(roundOrder(ts, 2)); !slices.Equal(got, []string{"go-sdk", "floor", "talkd"}) {
		t.Errorf("round 2: %v", got)
	}
	if ts[0].Name != "talkd" {
		t.Error("roundOrder changed its argument")
	}
}

// The ratio to the better MCP peer never takes the floor for a peer.
func TestBetterPeer(t *testing.T) {
	row := map[string]Result{"talkd": {OKRPS: 10}, "go-sdk": {Target: "go-sdk", OKRPS: 2}, "mcp-go": {Target: "mcp-go", OKRPS: 5}, "floor": {Target: "floor", OKRPS: 12}}
	if b, ok := betterPeer(row); !ok || b.Target != "mcp-go" {
		t.Errorf("betterPeer = %+v %v, want mcp-go", b, ok)
	}
	delete(row, "mcp-go")
	if b, ok := betterPeer(row); !ok || b.Target != "go-sdk" {
		t.Errorf("betterPeer without mcp-go = %+v %v, want go-sdk", b, ok)
	}
	delete(row, "go-sdk")
	if b, ok := betterPeer(row); ok {
		t.Errorf("betterPeer with only the floor = %+v, want none", b)
	}
}

// The summary's talkd ÷ floor (requests/s, p99) and floor ÷ talkd (CPU per answer) are the
// median and range of the per-round ratios.
func TestPeerSummaryFloorRatio(t *testing.T) {
	var results []Result
	for round, rps := range [][2]float64{{90, 100}, {80, 100}, {99, 110}} {
		results = append(results,
			Result{Target: "talkd", Scenario: "tools/call", Conc: 8, Round: round + 1, OKRPS: rps[0], P99ms: 1, CPUusPerReq: 40},
			Result{Target: "floor", Scenario: "tools/call", Conc: 8, Round: round + 1, OKRPS: rps[1], P99ms: 2, CPUusPerReq: 30})
	}
	var out strings.Builder
	writePeerSummary(&out, "tools/call speak", "tools/call", []int{8}, []target{{Name: "talkd"}, {Name: "floor"}}, results)
	if !strings.Contains(out.String(), "| 0.90 (0.80–0.90) | 0.50 (0.50–0.50) | 0.75 (0.75–0.75) |") {
		t.Errorf("summary:\n%s", out.String())
	}
}
