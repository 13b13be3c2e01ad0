package api

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"talkd/internal/api/mcprev"
	"talkd/internal/config"
	"talkd/internal/queue"
)

// mcpTestVoice records submissions and answers with a configurable outcome.
type mcpTestVoice struct {
	mu      sync.Mutex
	got     []queue.Announcement
	outcome queue.Outcome
	err     error
}

func (v *mcpTestVoice) Submit(_ context.Context, a queue.Announcement) (queue.Outcome, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.err != nil {
		return queue.Outcome{}, v.err
	}
	v.got = append(v.got, a)
	if v.outcome.Status != "" {
		return v.outcome, nil
	}
	return queue.Outcome{Status: queue.StatusQueued, ID: fmt.Sprintf("a%d", len(v.got)), Position: 1}, nil
}
func (v *mcpTestVoice) Mute(context.Context, *time.Time) (queue.MuteState, error) {
	return queue.MuteState{}, nil
}
func (v *mcpTestVoice) Unmute(context.Context) (queue.MuteState, error) {
	return queue.MuteState{}, nil
}
func (v *mcpTestVoice) Stop(context.Context) (string, error) { return "", nil }
func (v *mcpTestVoice) Cancel(context.Context, queue.CancelRequest) ([]string, error) {
	return nil, nil
}
func (v *mcpTestVoice) Wait(context.Context, string) (queue.Entry, error) { return queue.Entry{}, nil }
func (v *mcpTestVoice) Status() queue.Status                              { return queue.Status{} }
func (v *mcpTestVoice) History(int) []queue.Entry                         { return nil }

func (v *mcpTestVoice) submitted() []queue.Announcement {
	v.mu.Lock()
	defer v.mu.Unlock()
	return append([]queue.Announcement(nil), v.got...)
}

type mcpFixture struct {
	t     *testing.T
	srv   *Server
	http  *httptest.Server
	voice *mcpTestVoice
}

func newMCPFixture(t *testing.T, edit func(*config.Config)) *mcpFixture {
	t.Helper()
	cfg := &config.Config{Version: 1}
	cfg.Voice.Lang = "en"
	cfg.Server.MaxBodyBytes = 64 << 10
	if edit != nil {
		edit(cfg)
	}
	v := &mcpTestVoice{}
	s := New(Options{Config: cfg, Voice: v, Version: "test"})
	hs := httptest.NewServer(s.Handler())
	t.Cleanup(hs.Close)
	s.SetListenAddr(strings.TrimPrefix(hs.URL, "http://"))
	return &mcpFixture{t: t, srv: s, http: hs, voice: v}
}

// post sends body to /mcp and returns status, headers and the decoded body (nil if empty).
func (f *mcpFixture) post(body string, headers map[string]string) (int, http.Header, map[string]any) {
	f.t.Helper()
	req, err := http.NewRequest(http.MethodPost, f.http.URL+"/mcp", strings.NewReader(body))
	if err != nil {
		f.t.Fatal(err)
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if len(raw) == 0 {
		return resp.StatusCode, resp.Header, nil
	}
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		f.t.Fatalf("response is not a JSON object: %v: %s", err, raw)
	}
	return resp.StatusCode, resp.Header, out
}

// call2026 sends a well-formed 2026-era request for method with params.
func (f *mcpFixture) call2026(method string, params map[string]any) (int, map[string]any) {
	f.t.Helper()
	if params == nil {
		params = map[string]any{}
	}
	params["_meta"] = map[string]any{metaVersion: mcprev.Stateless, metaCaps: map[string]any{}, metaClient: map[string]any{"name": "unit-agent", "version": "1"}}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 7, "method": method, "params": params})
	h := map[string]string{"MCP-Protocol-Version": mcprev.Stateless, "Mcp-Method": method}
	if n, ok := params["name"].(string); ok {
		h["Mcp-Name"] = n
	}
	if u, ok := params["uri"].(string); ok {
		h["Mcp-Name"] = u
	}
	status, _, out := f.post(string(body), h)
	return status, out
}

func errCode(t *testing.T, out map[string]any) int {
	t.Helper()
	e, ok := out["error"].(map[string]any)
	if !ok {
		t.Fatalf("no error in %v", out)
	}
	return int(e["code"].(float64))
}

func result(t *testing.T, out map[string]any) map[string]any {
	t.Helper()
	r, ok := out["result"].(map[string]any)
	if !ok {
		t.Fatalf("no result in %v", out)
	}
	return r
}

func TestDecodeRPCKeepsIDsExactly(t *testing.T) {
	for _, id := range []string{`1`, `0`, `-3`, `1e400`, `12345678901234567890`, `"abc"`, `"\u00e9\n"`, `2.50`} {
		body := `{"jsonrpc":"2.0","id":` + id + `,"method":"ping"}`
		msg, err := decodeRPC([]byte(body))
		if err != nil {
			t.Fatalf("id %s: %v", id, err.Message)
		}
		if string(msg.ID) != id {
			t.Errorf("id %s decoded as %s", id, msg.ID)
		}
		if got := string(rpcAnswer{head: appendResponseHead(nil, msg.ID), result: emptyObject, tail: responseTail}.appendTo(nil)); !strings.Contains(got, `"id":`+id+`,`) {
			t.Errorf("id %s not echoed: %s", id, got)
		}
	}
}

func TestDecodeRPCRejects(t *testing.T) {
	cases := []struct {
		body string
		code int
	}{
		{`{"jsonrpc":"2.0","id":1,"method":`, rpcParseError},
		{``, rpcParseError},
		{`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, rpcInvalidRequest},
		{`"ping"`, rpcInvalidRequest},
		{`{"id":1,"method":"ping"}`, rpcInvalidRequest},
		{`{"jsonrpc":"1.0","id":1,"method":"ping"}`, rpcInvalidRequest},
		{`{"jsonrpc":2.0,"id":1,"method":"ping"}`, rpcInvalidRequest},
		{`{"jsonrpc":"2.0","id":{},"method":"ping"}`, rpcInvalidRequest},
		{`{"jsonrpc":"2.0","id":true,"method":"ping"}`, rpcInvalidRequest},
		{`{"jsonrpc":"2.0","id":1}`, rpcInvalidRequest},
		{`{"jsonrpc":"2.0","id":1,"method":7}`, rpcInvalidRequest},
		{`{"jsonrpc":"2.0","id":1,"method":"ping","params":[1]}`, rpcInvalidParams},
	}
	for _, c := range cases {
		_, err := decodeRPC([]byte(c.body))
		if err == nil || err.Code != c.code {
			t.Errorf("%s: got %+v, want code %d", c.body, err, c.code)
		}
	}
	msg, err := decodeRPC([]byte(`{"jsonrpc":"2.0","id":null,"method":"notifications/initialized"}`))
	if err != nil || !msg.isNotification() {
		t.Errorf("id null must be a notification: %+v %v", msg, err)
	}
	msg, err = decodeRPC([]byte(`{"jsonrpc":"2.0","id":5,"result":{}}`))
	if err != nil || msg.Method != "" {
		t.Errorf("a client response must decode without method: %+v %v", msg, err)
	}
}

func TestMatchTemplate(t *testing.T) {
	cases := []struct {
		tmpl, uri string
		vars      map[string]string
	}{
		{"werkbaum://plan/{key}", "werkbaum://plan/main", map[string]string{"key": "main"}},
		{"werkbaum://plan/{key}", "werkbaum://plan/a%20b", map[string]string{"key": "a b"}},
		{"werkbaum://plan/{key}", "werkbaum://plan/", nil},
		{"werkbaum://plan/{key}", "werkbaum://plan/a/b", nil},
		{"werkbaum://plan/{key}", "werkbaum://guide", nil},
		{"x://{a}/n/{b}.md", "x://one/n/two.md", map[string]string{"a": "one", "b": "two"}},
		{"x://{a}/n/{b}.md", "x://one/n/two.txt", nil},
	}
	for _, c := range cases {
		vars, ok := matchTemplate(c.tmpl, c.uri)
		if ok != (c.vars != nil) || fmt.Sprint(vars) != fmt.Sprint(c.vars) && ok {
			t.Errorf("%s on %s: got %v %v, want %v", c.tmpl, c.uri, vars, ok, c.vars)
		}
	}
	for _, bad := range []string{"x://{}", "x://{a", "x://a}", "x://{a}{b}", "x://{a{b}}"} {
		if validTemplate(bad) {
			t.Errorf("template %q accepted", bad)
		}
	}
}

func TestMCP2025HandshakeAndSpeak(t *testing.T) {
	f := newMCPFixture(t, nil)
	status, _, out := f.post(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"claude-code","version":"1"}}}`, nil)
	r := result(t, out)
	if status != 200 || r["protocolVersion"] != "2025-06-18" || r["serverInfo"].(map[string]any)["name"] != "talkd" {
		t.Fatalf("initialize: %d %v", status, out)
	}
	if _, has := r["resultType"]; has {
		t.Error("2025-era results must not carry resultType")
	}
	caps := r["capabilities"].(map[string]any)
	for _, k := range []string{"tools", "resources", "prompts", "completions", "logging"} {
		if _, ok := caps[k]; !ok {
			t.Errorf("capability %s missing: %v", k, caps)
		}
	}
	_, _, out = f.post(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2099-01-01","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`, nil)
	if v := result(t, out)["protocolVersion"]; v != mcprev.Latest2025 {
		t.Errorf("unknown requested revision answered with %v", v)
	}
	status, _, out = f.post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`, map[string]string{"MCP-Protocol-Version": "2025-06-18"})
	if status != http.StatusAccepted || out != nil {
		t.Errorf("notification: %d %v", status, out)
	}
	h := map[string]string{"MCP-Protocol-Version": "2025-06-18", "X-Talk-Agent": "claude-code"}
	_, _, out = f.post(`{"jsonrpc":"2.0","id":"s1","method":"tools/call","params":{"name":"speak","arguments":{"text":"  tests are green ","priority":"high"},"_meta":{"progressToken":3}}}`, h)
	r = result(t, out)
	if out["id"] != "s1" || r["isError"] != nil || r["content"].([]any)[0].(map[string]any)["text"] != "queued: a1" {
		t.Fatalf("speak: %v", out)
	}
	if sc := r["structuredContent"].(map[string]any); sc["status"] != "queued" || sc["id"] != "a1" {
		t.Errorf("structuredContent: %v", sc)
	}
	got := f.voice.submitted()
	if len(got) != 1 || got[0].Text != "tests are green" || got[0].Priority != queue.High || got[0].Agent != "claude-code" || got[0].Caller != "local" {
		t.Errorf("submitted: %+v", got)
	}
}

func TestMCPSpeakOutcomesAndBadArguments(t *testing.T) {
	f := newMCPFixture(t, nil)
	h := map[string]string{"MCP-Protocol-Version": "2025-11-25"}
	call := func(args string) map[string]any {
		_, _, out := f.post(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"speak","arguments":`+args+`}}`, h)
		return result(t, out)
	}
	text := func(r map[string]any) string { return r["content"].([]any)[0].(map[string]any)["text"].(string) }
	for args, field := range map[string]string{
		`{}`:                             `"text"`,
		`{"text":"hi","priority":"max"}`: `"priority"`,
		`{"text":"hi","lang":"f r"}`:     `"lang"`,
		`{"text":"hi","volume":300}`:     `"volume"`,
		`{"text":"hi","now":"yes"}`:      `"now"`,
		`{"text":"hi","provider":"x"}`:   `"provider"`,
	} {
		r := call(args)
		if r["isError"] != true || !strings.Contains(text(r), field) {
			t.Errorf("%s: want isError naming %s, got %v", args, field, r)
		}
	}
	if len(f.voice.submitted()) != 0 {
		t.Error("invalid arguments reached the queue")
	}
	until := time.Date(2026, 1, 2, 15, 4, 5, 0, time.UTC)
	f.voice.outcome = queue.Outcome{Status: queue.StatusMuted, MutedUntil: &until}
	if r := call(`{"text":"hi"}`); r["isError"] != nil || !strings.HasPrefix(text(r), "muted: ") {
		t.Errorf("muted: %v", r)
	}
	f.voice.outcome = queue.Outcome{Status: queue.StatusDiscarded, Reason: queue.ReasonRateLimit, RetryIn: 2 * time.Second}
	if r := call(`{"text":"hi"}`); r["isError"] != nil || !strings.HasPrefix(text(r), "discarded: rate_limit") {
		t.Errorf("rate limit: %v", r)
	}
	f.voice.outcome = queue.Outcome{Status: queue.StatusDiscarded, Reason: queue.ReasonQuietHours, Window: "22:00-07:00"}
	if r := call(`{"text":"hi"}`); r["isError"] != nil || !strings.HasPrefix(text(r), "discarded: quiet_hours 22:00-07:00") {
		t.Errorf("quiet hours: %v", r)
	}
	f.voice.err = queue.ErrQueueFull
	if r := call(`{"text":"hi"}`); r["isError"] != true || !strings.Contains(text(r), "queue is full") {
		t.Errorf("queue full: %v", r)
	}
	_, _, out := f.post(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"shout","arguments":{}}}`, h)
	if errCode(t, out) != rpcInvalidParams {
		t.Errorf("unknown tool: %v", out)
	}
	_, _, out = f.post(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"speak","arguments":[1]}}`, h)
	if errCode(t, out) != rpcInvalidParams {
		t.Errorf("array arguments: %v", out)
	}
}

func TestMCPSpeakNeedsGrant(t *testing.T) {
	token := strings.Repeat("k", 40)
	f := newMCPFixture(t, func(c *config.Config) {
		c.Clients = []config.Client{{ID: "ci", Token: token, Speak: false}}
	})
	status, hdr, out := f.post(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, nil)
	if status != http.StatusUnauthorized || !strings.HasPrefix(hdr.Get("WWW-Authenticate"), "Bearer") || out["error"] == nil {
		t.Fatalf("no token: %d %v %v", status, hdr, out)
	}
	_, _, out = f.post(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"speak","arguments":{"text":"hi"}}}`,
		map[string]string{"Authorization": "Bearer " + token})
	r := result(t, out)
	if r["isError"] != true || !strings.Contains(fmt.Sprint(r["content"]), "no speak grant") {
		t.Errorf("without grant: %v", r)
	}
}

func TestMCP2026DecoratesResultsAndTakesAgentFromMeta(t *testing.T) {
	f := newMCPFixture(t, nil)
	status, out := f.call2026("server/discover", nil)
	r := result(t, out)
	if status != 200 || r["resultType"] != "complete" || r["cacheScope"] != "public" || r["ttlMs"] == nil {
		t.Fatalf("discover: %d %v", status, out)
	}
	if si := r["_meta"].(map[string]any)[metaServer].(map[string]any); si["name"] != "talkd" || si["version"] != "test" {
		t.Errorf("serverInfo: %v", si)
	}
	if fmt.Sprint(r["supportedVersions"]) != fmt.Sprint(mcprev.Supported()) {
		t.Errorf("supportedVersions: %v", r["supportedVersions"])
	}
	for _, m := range []string{"tools/list", "resources/list", "resources/templates/list", "prompts/list"} {
		_, out := f.call2026(m, nil)
		r := result(t, out)
		if r["resultType"] != "complete" || r["ttlMs"] == nil || r["cacheScope"] == nil {
			t.Errorf("%s: %v", m, r)
		}
	}
	_, out = f.call2026("tools/call", map[string]any{"name": "speak", "arguments": map[string]any{"text": "hello"}})
	r = result(t, out)
	if r["resultType"] != "complete" || r["ttlMs"] != nil || r["isError"] != nil {
		t.Errorf("tools/call: %v", r)
	}
	if got := f.voice.submitted(); len(got) != 1 || got[0].Agent != "unit-agent" {
		t.Errorf("agent from _meta clientInfo: %+v", got)
	}
	_, out = f.call2026("completion/complete", map[string]any{"ref": map[string]any{"type": "ref/prompt", "name": "p"}, "argument": map[string]any{"name": "a", "value": "x"}})
	if r := result(t, out); fmt.Sprint(r["completion"]) != "map[values:[]]" || r["resultType"] != "complete" {
		t.Errorf("completion: %v", r)
	}
}

func TestMCPRegistriesServeResourcesAndPrompts(t *testing.T) {
	f := newMCPFixture(t, nil)
	f.srv.RegisterResource(Resource{URI: "test://notes", Name: "notes", MimeType: "text/markdown",
		Read: func(_ context.Context, _ Caller, uri string) ([]ResourceContents, error) {
			return []ResourceContents{{URI: uri, MimeType: "text/markdown", Text: "# Guide"}}, nil
		}})
	f.srv.RegisterResourceTemplate(ResourceTemplate{URITemplate: "werkbaum://plan/{key}", Name: "plan",
		Read: func(_ context.Context, c Caller, uri string, vars map[string]string) ([]ResourceContents, error) {
			if vars["key"] != "main" {
				return nil, fmt.Errorf("plan %q: %w", vars["key"], ErrResourceNotFound)
			}
			return []ResourceContents{{URI: uri, Text: "[ ] root by " + c.ID}}, nil
		}})
	f.srv.RegisterPrompt(Prompt{Name: "werkbaum/review", Description: "review",
		Arguments: []PromptArgument{{Name: "plan", Required: true}},
		Get: func(_ context.Context, _ Caller, args map[string]string) (PromptResult, error) {
			return PromptResult{Messages: []PromptMessage{{Role: "user", Content: TextContent("Review " + args["plan"])}}}, nil
		}})
	AddTool(f.srv, ToolSpec[noArgs, noArgs]{Name: "plans_list", Annotations: ToolAnnotations{ReadOnlyHint: Hint(true)},
		Call: func(context.Context, Caller, noArgs, json.RawMessage) (noArgs, string, *ToolError) {
			return noArgs{}, "none", nil
		}})

	h := map[string]string{"MCP-Protocol-Version": "2025-11-25"}
	_, _, out := f.post(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, h)
	tools := result(t, out)["tools"].([]any)
	if len(tools) != 2 || tools[0].(map[string]any)["name"] != "speak" || tools[1].(map[string]any)["name"] != "plans_list" {
		t.Fatalf("tools in registration order: %v", tools)
	}
	speak := tools[0].(map[string]any)
	if speak["inputSchema"].(map[string]any)["type"] != "object" || speak["outputSchema"] == nil ||
		speak["annotations"].(map[string]any)["openWorldHint"] != false {
		t.Errorf("speak entry: %v", speak)
	}
	_, _, out = f.post(`{"jsonrpc":"2.0","id":1,"method":"resources/list"}`, h)
	if rs := result(t, out)["resources"].([]any); len(rs) != 2 || rs[0].(map[string]any)["uri"] != "werkbaum://guide" || rs[1].(map[string]any)["uri"] != "test://notes" {
		t.Errorf("resources: %v", rs)
	}
	_, _, out = f.post(`{"jsonrpc":"2.0","id":1,"method":"resources/templates/list"}`, h)
	if ts := result(t, out)["resourceTemplates"].([]any); len(ts) != 1 {
		t.Errorf("templates: %v", ts)
	}
	_, _, out = f.post(`{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"werkbaum://plan/main"}}`, h)
	if c := result(t, out)["contents"].([]any)[0].(map[string]any); c["text"] != "[ ] root by local" {
		t.Errorf("template read: %v", c)
	}
	_, _, out = f.post(`{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"werkbaum://plan/other"}}`, h)
	if errCode(t, out) != rpcResourceNotFound || out["error"].(map[string]any)["data"].(map[string]any)["uri"] != "werkbaum://plan/other" {
		t.Errorf("2025 not found: %v", out)
	}
	_, out = f.call2026("resources/read", map[string]any{"uri": "nope://x"})
	if errCode(t, out) != rpcInvalidParams {
		t.Errorf("2026 not found: %v", out)
	}
	_, out = f.call2026("resources/read", map[string]any{"uri": "werkbaum://guide"})
	if r := result(t, out); r["cacheScope"] != "private" || r["ttlMs"] != float64(0) {
		t.Errorf("2026 read hints: %v", r)
	}
	_, _, out = f.post(`{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"name":"werkbaum/review","arguments":{"plan":"main"}}}`, h)
	if m := result(t, out)["messages"].([]any)[0].(map[string]any); m["content"].(map[string]any)["text"] != "Review main" {
		t.Errorf("prompt: %v", m)
	}
	for _, params := range []string{`{"name":"werkbaum/review"}`, `{"name":"nope"}`, `{"name":"werkbaum/review","arguments":{"plan":"m","x":"y"}}`} {
		_, _, out = f.post(`{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":`+params+`}`, h)
		if errCode(t, out) != rpcInvalidParams {
			t.Errorf("prompts/get %s: %v", params, out)
		}
	}
	_, _, out = f.post(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":"abc"}}`, h)
	if errCode(t, out) != rpcInvalidParams {
		t.Errorf("bogus cursor: %v", out)
	}
}

// TestMCPEmptyListsAreValid: a server without plans lists no templates and prompts (empty
// arrays, not absent), and one resource: the guide, served without any plan.
func TestMCPEmptyListsAreValid(t *testing.T) {
	f := newMCPFixture(t, nil)
	for m, key := range map[string]string{"resources/list": "resources", "resources/templates/list": "resourceTemplates", "prompts/list": "prompts"} {
		_, _, out := f.post(`{"jsonrpc":"2.0","id":1,"method":"`+m+`"}`, nil)
		l, ok := result(t, out)[key].([]any)
		if want := map[bool]int{true: 1, false: 0}[key == "resources"]; !ok || len(l) != want {
			t.Errorf("%s: %v", m, out)
		}
	}
	_, _, out := f.post(`{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"werkbaum://guide"}}`, nil)
	if c, _ := result(t, out)["contents"].([]any); len(c) != 1 || !strings.Contains(c[0].(map[string]any)["text"].(string), "werkbaum_inspect") {
		t.Errorf("the guide without plans: %v", out)
	}
}

func TestRegisterRejectsWiringMistakes(t *testing.T) {
	f := newMCPFixture(t, nil)
	mustPanic := func(name string, fn func()) {
		t.Helper()
		defer func() {
			if recover() == nil {
				t.Errorf("%s: no panic", name)
			}
		}()
		fn()
	}
	call := func(context.Context, Caller, noArgs, json.RawMessage) (noArgs, string, *ToolError) {
		return noArgs{}, "", nil
	}
	mustPanic("duplicate tool", func() { AddTool(f.srv, ToolSpec[noArgs, noArgs]{Name: "speak", Call: call}) })
	mustPanic("tool without call", func() { AddTool(f.srv, ToolSpec[noArgs, noArgs]{Name: "x"}) })
	mustPanic("a result that is not an object", func() {
		AddTool(f.srv, ToolSpec[noArgs, string]{Name: "z", Call: func(context.Context, Caller, noArgs, json.RawMessage) (string, string, *ToolError) {
			return "", "", nil
		}})
	})
	mustPanic("bad template", func() {
		f.srv.RegisterResourceTemplate(ResourceTemplate{URITemplate: "x://{a", Name: "x",
			Read: func(context.Context, Caller, string, map[string]string) ([]ResourceContents, error) { return nil, nil }})
	})
}

func TestMCPToolPanicIsInternalError(t *testing.T) {
	f := newMCPFixture(t, nil)
	AddTool(f.srv, ToolSpec[noArgs, noArgs]{Name: "boom", Call: func(context.Context, Caller, noArgs, json.RawMessage) (noArgs, string, *ToolError) { panic("boom") }})
	status, _, out := f.post(`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"boom"}}`, nil)
	if status != 200 || errCode(t, out) != rpcInternalError || out["id"] != float64(9) {
		t.Errorf("panic: %d %v", status, out)
	}
}

// TestMCPToolsCallNameForms holds every spelling of params.name to one answer: the plain
// string the door looks up directly, and the forms only encoding/json reads (an escape, a
// key in another case), for a known tool, an unknown one and an empty name.
func TestMCPToolsCallNameForms(t *testing.T) {
	f := newMCPFixture(t, nil)
	h := map[string]string{"MCP-Protocol-Version": "2025-11-25"}
	call := func(params string) map[string]any {
		t.Helper()
		_, _, out := f.post(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":`+params+`}`, h)
		return out
	}
	for _, params := range []string{
		`{"name":"speak","arguments":{"text":"hi"}}`,
		`{"name":"sp\u0065ak","arguments":{"text":"hi"}}`,
		`{"Name":"speak","arguments":{"text":"hi"}}`,
	} {
		r := result(t, call(params))
		if text, _ := r["content"].([]any)[0].(map[string]any)["text"].(string); r["isError"] != nil || !strings.HasPrefix(text, "queued: ") {
			t.Errorf("%s: %v", params, r)
		}
	}
	for params, want := range map[string]string{
		`{"name":"shout","arguments":{}}`:       `unknown tool "shout"`,
		`{"name":"sh\u006fut","arguments":{}}`:  `unknown tool "shout"`,
		`{"name":"","arguments":{}}`:            `tools/call needs params.name`,
		`{"arguments":{"text":"hi"}}`:           `tools/call needs params.name`,
		`{"name":"speak","arguments":"hi"}`:     `params.arguments must be an object`,
		`{"name":"sp\u0065ak","arguments":[1]}`: `params.arguments must be an object`,
	} {
		out := call(params)
		if errCode(t, out) != rpcInvalidParams || !strings.Contains(out["error"].(map[string]any)["message"].(string), want) {
			t.Errorf("%s: want %q, got %v", params, want, out)
		}
	}
}

// TestMCPConcurrentAnswersStayTheirOwn: answers are built in storage that calls reuse
// (callPool); under concurrent calls every answer must still be its own request's — its
// id, its announcement, its refused field — whole and valid, for single messages and the
// elements of a batch.
func TestMCPConcurrentAnswersStayTheirOwn(t *testing.T) {
	f := newMCPFixture(t, nil)
	const workers, calls = 8, 60
	var mu sync.Mutex
	seen := map[string]bool{}
	errs := make(chan error, workers*calls)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range calls {
				id := fmt.Sprintf("%d-%d", w, i)
				field := fmt.Sprintf("field_%d_%d", w, i)
				ok := fmt.Sprintf(`{"jsonrpc":"2.0","id":"ok-%s","method":"tools/call","params":{"name":"speak","arguments":{"text":"Müller %s"}}}`, id, id)
				bad := fmt.Sprintf(`{"jsonrpc":"2.0","id":"bad-%s","method":"tools/call","params":{"name":"speak","arguments":{"text":"x","%s":1}}}`, id, field)
				body, version := ok, "2025-11-25"
				switch i % 3 {
				case 1:
					body = bad
				case 2:
					body, version = "["+ok+","+bad+"]", "2025-03-26"
				}
				req, _ := http.NewRequest(http.MethodPost, f.http.URL+"/mcp", strings.NewReader(body))
				req.Header.Set("MCP-Protocol-Version", version)
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					errs <- err
					return
				}
				raw, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				var answers []map[string]any
				if i%3 == 2 {
					err = json.Unmarshal(raw, &answers)
				} else {
					var one map[string]any
					err = json.Unmarshal(raw, &one)
					answers = append(answers, one)
				}
				if err != nil {
					errs <- fmt.Errorf("%s: not JSON: %v: %s", id, err, raw)
					continue
				}
				for _, a := range answers {
					r, _ := a["result"].(map[string]any)
					content, _ := r["content"].([]any)
					if len(content) != 1 {
						errs <- fmt.Errorf("%s: %s", id, raw)
						continue
					}
					text, _ := content[0].(map[string]any)["text"].(string)
					switch a["id"] {
					case "ok-" + id:
						sc, _ := r["structuredContent"].(map[string]any)
						aid, _ := sc["id"].(string)
						if text != "queued: "+aid {
							errs <- fmt.Errorf("%s: text %q, structured id %q", id, text, aid)
						}
						mu.Lock()
						if seen[aid] {
							errs <- fmt.Errorf("%s: announcement %s answered twice", id, aid)
						}
						seen[aid] = true
						mu.Unlock()
					case "bad-" + id:
						if r["isError"] != true || !strings.Contains(text, field) {
							errs <- fmt.Errorf("%s: want the refusal naming %s, got %s", id, field, raw)
						}
					default:
						errs <- fmt.Errorf("%s: answer of another request: %s", id, raw)
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if want := workers * (calls - calls/3); len(seen) != want {
		t.Errorf("%d announcements answered, want %d", len(seen), want)
	}
}

// sharedToolResult is a whole result whose bytes are made once and shared by every call,
// as a cached inspect answer is; it has spare capacity, which a pooled answer must never
// be written into.
type sharedToolResult struct{ bytes []byte }

func (r sharedToolResult) toolResult() []byte { return r.bytes }

// TestMCPSharedResultNotReused: a call's storage (mcpCall.scratch) never takes a shared
// result, so the next call built in that storage cannot overwrite it.
func TestMCPSharedResultNotReused(t *testing.T) {
	f := newMCPFixture(t, nil)
	shared := make([]byte, 0, 4096)
	shared = endResult(append(shared, `{"content":[{"type":"text","text":"shared"}]}`...))
	want := string(shared[:cap(shared)])
	AddTool(f.srv, ToolSpec[struct{}, sharedToolResult]{
		Name: "shared", Description: "A cached result.", UndeclaredOutput: true,
		Call: func(context.Context, Caller, struct{}, json.RawMessage) (sharedToolResult, string, *ToolError) {
			return sharedToolResult{shared}, "", nil
		},
	})
	m := f.srv.mcp
	c := newCall()
	c.env = mcpEnvelope{Name: json.RawMessage(`"shared"`), Arguments: json.RawMessage(`{}`)}
	got, rerr := m.toolsCall(context.Background(), c)
	if rerr != nil || string(got) != string(shared) {
		t.Fatalf("shared tool answered %s %v", got, rerr)
	}
	// The next call on the same storage, as the pool hands it out again.
	c.env = mcpEnvelope{Name: json.RawMessage(`"speak"`), Arguments: json.RawMessage(`{"text":"a longer text than the shared result holds, Müller"}`)}
	if _, rerr := m.toolsCall(context.Background(), c); rerr != nil {
		t.Fatal(rerr)
	}
	if string(shared[:cap(shared)]) != want {
		t.Errorf("the shared result was overwritten: %q", shared[:80])
	}
}

// TestToolEncodeMatchesGeneric: a result built by ToolSpec.Encode straight into the call's
// storage is byte for byte the result the generic encoding makes of the same Out (the
// speak tool's results, text and structured content, and an Out Encode cannot encode).
func TestToolEncodeMatchesGeneric(t *testing.T) {
	f := newMCPFixture(t, nil)
	until := time.Date(2026, 11, 30, 4, 5, 6, 7, time.FixedZone("x", 3600))
	var current SpeakResult
	call := func(context.Context, Caller, struct{}, json.RawMessage) (SpeakResult, string, *ToolError) {
		return current, current.Text(), nil
	}
	AddTool(f.srv, ToolSpec[struct{}, SpeakResult]{Name: "built", Description: "Encode.", Call: call,
		Encode: func(dst []byte, r SpeakResult) ([]byte, error) { return r.appendJSON(dst) }})
	AddTool(f.srv, ToolSpec[struct{}, SpeakResult]{Name: "generic", Description: "No Encode.", Call: call})
	run := func(name string, c *mcpCall) ([]byte, *rpcError) {
		c.env = mcpEnvelope{Name: json.RawMessage(`"` + name + `"`), Arguments: json.RawMessage(`{}`)}
		return f.srv.mcp.toolsCall(context.Background(), c)
	}
	c := newCall()
	c.scratch = make([]byte, 0, 8) // grown by the first call, reused by the next
	for _, r := range []SpeakResult{
		{Status: "queued", ID: "a1", Position: 3, Message: "queued as a1 at position 3", Warning: "no player <b>"},
		{Status: "muted", Until: &until, Message: "muted: <until> & \"then\", Müller"},
		{Status: "muted", Message: "muted: talkd is muted until unmuted; the announcement was not queued"},
		{Status: "discarded", Reason: "rate_limit", RetryAfterMs: 1234, Message: "discarded: rate_limit"},
		{Status: "discarded", Reason: "quiet_hours", Window: "22:00-07:00", Message: "discarded: quiet_hours \u2028"},
		{Status: "queued", ID: "a9", ShortenedFrom: 900, LeftOut: "the first 3 lines", DeferredMs: 20, SameAs: "a8", Message: "x"},
	} {
		current = r
		want, rerr := run("generic", &mcpCall{})
		if rerr != nil {
			t.Fatal(rerr)
		}
		got, rerr := run("built", c)
		if rerr != nil || string(got) != string(want) {
			t.Fatalf("%+v: Encode built\n%s (%v)\nthe generic encoding\n%s", r, got, rerr, want)
		}
		if full, ok := withTail(got); !ok || string(full[len(got):]) != "}\n" {
			t.Errorf("%+v: no response tail after the built result", r)
		}
	}
	// A time Encode cannot write fails the call as the generic encoding does.
	bad := time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)
	current = SpeakResult{Status: "muted", Until: &bad}
	if _, rerr := run("built", c); rerr == nil || rerr.Code != rpcInternalError {
		t.Errorf("an unencodable result: %v", rerr)
	}
	if _, rerr := run("generic", &mcpCall{}); rerr == nil || rerr.Code != rpcInternalError {
		t.Errorf("an unencodable result, generic: %v", rerr)
	}
}
