package test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// Literal JSON-RPC over real HTTP against a running talkd, one test per row of
// shared/mcp/PROTOCOL.md: both eras' handshakes, the 2026 checks in their order, removed
// methods, every error code, batches, notifications, transport refusals.

// rpcReply is a decoded /mcp answer plus its raw bytes (ids are compared byte for byte).
type rpcReply struct {
	status int
	header http.Header
	raw    string
	msg    map[string]any
}

func (r rpcReply) result(t testing.TB) map[string]any {
	t.Helper()
	res, ok := r.msg["result"].(map[string]any)
	if !ok {
		t.Fatalf("no result (HTTP %d): %s", r.status, r.raw)
	}
	return res
}

func (r rpcReply) code(t testing.TB) int {
	t.Helper()
	e, ok := r.msg["error"].(map[string]any)
	if !ok {
		t.Fatalf("no error (HTTP %d): %s", r.status, r.raw)
	}
	return int(e["code"].(float64))
}

// wantError checks HTTP status, JSON-RPC code and the echoed id (raw JSON).
func (r rpcReply) wantError(t testing.TB, what string, status, code int, id string) {
	t.Helper()
	if r.status != status || r.code(t) != code {
		t.Errorf("%s: got HTTP %d code %d, want HTTP %d code %d: %s", what, r.status, r.code(t), status, code, r.raw)
	}
	if !strings.Contains(r.raw, `"id":`+id+`,`) {
		t.Errorf("%s: id %s not echoed: %s", what, id, r.raw)
	}
	if ct := r.header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("%s: Content-Type %q", what, ct)
	}
}

func rpcPost(t testing.TB, d *daemon, body string, headers map[string]string) rpcReply {
	t.Helper()
	status, h, raw := d.request(t, http.MethodPost, "/mcp", body, headers)
	return rpcReply{status: status, header: h, raw: string(raw), msg: decodeObject(t, raw)}
}

const (
	rev26     = "2026-07-28"
	meta26    = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"literal-agent","version":"1"}}`
	metaNoCap = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}`
)

// headers26 are the headers a well-behaved 2026 client sends for method (and name).
func headers26(method, name string) map[string]string {
	h := map[string]string{"MCP-Protocol-Version": rev26, "Mcp-Method": method}
	if name != "" {
		h["Mcp-Name"] = name
	}
	return h
}

func TestMCP2025Handshake(t *testing.T) {
	t.Parallel()
	d := startDaemon(t, daemonOptions{})
	for requested, want := range map[string]string{
		"2025-11-25": "2025-11-25", "2025-06-18": "2025-06-18", "2025-03-26": "2025-03-26",
		"2024-11-05": "2024-11-05", "2099-01-01": "2025-11-25",
	} {
		r := rpcPost(t, d, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"`+requested+
			`","capabilities":{},"clientInfo":{"name":"literal","version":"1"}}}`, nil)
		res := r.result(t)
		if r.status != 200 || res["protocolVersion"] != want {
			t.Errorf("initialize %s: HTTP %d %v, want %s", requested, r.status, res["protocolVersion"], want)
		}
		if si := res["serverInfo"].(map[string]any); si["name"] != "talkd" || si["version"] == "" {
			t.Errorf("serverInfo: %v", si)
		}
		if _, has := res["resultType"]; has {
			t.Errorf("a 2025-era result carries resultType: %s", r.raw)
		}
		if r.header.Get("Mcp-Session-Id") != "" {
			t.Errorf("talkd issued a session id")
		}
	}
	h := map[string]string{"MCP-Protocol-Version": "2025-11-25", "Mcp-Session-Id": "ignored"}
	for _, body := range []string{
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":null,"method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3}}`,
		`{"jsonrpc":"2.0","id":3,"result":{}}`,
	} {
		status, _, raw := d.request(t, http.MethodPost, "/mcp", body, h)
		if status != http.StatusAccepted || len(raw) != 0 {
			t.Errorf("%s: HTTP %d body %q, want 202 and no body", body, status, raw)
		}
	}
	for method, params := range map[string]string{"ping": `{}`, "logging/setLevel": `{"level":"info"}`} {
		r := rpcPost(t, d, `{"jsonrpc":"2.0","id":2,"method":"`+method+`","params":`+params+`}`, h)
		if r.status != 200 || !strings.Contains(r.raw, `"result":{}}`) {
			t.Errorf("%s must answer exactly {}: %s", method, r.raw)
		}
	}
	r := rpcPost(t, d, `{"jsonrpc":"2.0","id":2,"method":"logging/setLevel","params":{"level":"loud"}}`, h)
	r.wantError(t, "bad log level", 200, -32602, "2")
	r = rpcPost(t, d, `{"jsonrpc":"2.0","id":4,"method":"tools/list","params":{"_meta":{"progressToken":1}}}`, h)
	tools := r.result(t)["tools"].([]any)
	speak := tools[0].(map[string]any)
	if speak["name"] != "speak" || speak["inputSchema"].(map[string]any)["type"] != "object" || speak["outputSchema"] == nil {
		t.Errorf("speak tool entry: %v", speak)
	}
	ann := speak["annotations"].(map[string]any)
	if ann["openWorldHint"] != false || ann["destructiveHint"] != false {
		t.Errorf("speak annotations: %v", ann)
	}
	if _, has := r.result(t)["ttlMs"]; has {
		t.Errorf("a 2025-era list carries ttlMs: %s", r.raw)
	}
	rpcPost(t, d, `{"jsonrpc":"2.0","id":5,"method":"no/such"}`, h).wantError(t, "unknown method (2025)", 200, -32601, "5")
	rpcPost(t, d, `{"jsonrpc":"2.0","id":5,"method":"server/discover"}`, h).wantError(t, "server/discover is 2026-only", 200, -32601, "5")
	// No header at all is the 2025 era, too (curl-friendly).
	if r := rpcPost(t, d, `{"jsonrpc":"2.0","id":6,"method":"ping"}`, nil); r.status != 200 || r.msg["result"] == nil {
		t.Errorf("ping without headers: %s", r.raw)
	}
}

func TestMCP2026Handshake(t *testing.T) {
	t.Parallel()
	d := startDaemon(t, daemonOptions{})
	r := rpcPost(t, d, `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{`+meta26+`}}`, headers26("server/discover", ""))
	res := r.result(t)
	if r.status != 200 || res["resultType"] != "complete" || res["cacheScope"] != "public" {
		t.Fatalf("discover: %s", r.raw)
	}
	if ttl, ok := res["ttlMs"].(float64); !ok || ttl < 0 {
		t.Errorf("ttlMs: %v", res["ttlMs"])
	}
	versions, _ := json.Marshal(res["supportedVersions"])
	if !strings.Contains(string(versions), `"2026-07-28"`) || !strings.Contains(string(versions), `"2025-11-25"`) {
		t.Errorf("supportedVersions: %s", versions)
	}
	if si := res["_meta"].(map[string]any)["io.modelcontextprotocol/serverInfo"].(map[string]any); si["name"] != "talkd" {
		t.Errorf("serverInfo: %v", si)
	}
	if _, has := res["capabilities"].(map[string]any)["tools"]; !has {
		t.Errorf("capabilities: %v", res["capabilities"])
	}
	for _, m := range []string{"tools/list", "resources/list", "resources/templates/list", "prompts/list"} {
		res := rpcPost(t, d, `{"jsonrpc":"2.0","id":2,"method":"`+m+`","params":{`+meta26+`}}`, headers26(m, "")).result(t)
		if res["resultType"] != "complete" || res["ttlMs"] == nil || (res["cacheScope"] != "public" && res["cacheScope"] != "private") {
			t.Errorf("%s: %v", m, res)
		}
	}
	r = rpcPost(t, d, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"speak","arguments":{"text":"twenty twenty six"},`+meta26+`}}`,
		headers26("tools/call", "speak"))
	res = r.result(t)
	if res["resultType"] != "complete" || res["isError"] != nil || !strings.HasPrefix(res["content"].([]any)[0].(map[string]any)["text"].(string), "queued: ") {
		t.Fatalf("tools/call: %s", r.raw)
	}
	if _, has := res["ttlMs"]; has {
		t.Errorf("tools/call results carry no caching hints: %s", r.raw)
	}
	if rec := d.waitSpoken(t, 1)[0]; rec.Text != "twenty twenty six" || rec.Agent != "literal-agent" || rec.Caller != "local" {
		t.Errorf("spoken: %+v", rec)
	}
}

// TestMCP2026ChecksInOrder sends requests that break one check each, and requests that
// break several, to show which check answers first.
func TestMCP2026ChecksInOrder(t *testing.T) {
	t.Parallel()
	d := startDaemon(t, daemonOptions{})
	list := func(params string) string {
		return `{"jsonrpc":"2.0","id":"x7","method":"tools/list","params":{` + params + `}}`
	}
	call := `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"speak","arguments":{"text":"hi"},` + meta26 + `}}`
	badVersion := `"_meta":{"io.modelcontextprotocol/protocolVersion":"v999.0.0","io.modelcontextprotocol/clientCapabilities":{}}`
	cases := []struct {
		what    string
		body    string
		headers map[string]string
		code    int
		id      string
	}{
		{"1: _meta missing (header says 2026)", list(``), headers26("tools/list", ""), -32602, `"x7"`},
		{"1: clientCapabilities missing", list(metaNoCap), headers26("tools/list", ""), -32602, `"x7"`},
		{"1: _meta not an object", list(`"_meta":"2026-07-28"`), headers26("tools/list", ""), -32602, `"x7"`},
		{"1 before 2: capabilities missing and header mismatched", list(metaNoCap), map[string]string{"MCP-Protocol-Version": "2099-01-01", "Mcp-Method": "tools/list"}, -32602, `"x7"`},
		{"2: MCP-Protocol-Version missing", list(meta26), map[string]string{"Mcp-Method": "tools/list"}, -32020, `"x7"`},
		{"2: MCP-Protocol-Version differs from _meta", list(meta26), map[string]string{"MCP-Protocol-Version": "2099-01-01", "Mcp-Method": "tools/list"}, -32020, `"x7"`},
		{"2 before 3: unsupported _meta version, other header", list(badVersion), headers26("tools/list", ""), -32020, `"x7"`},
		{"3: unsupported revision", list(badVersion), map[string]string{"MCP-Protocol-Version": "v999.0.0", "Mcp-Method": "tools/list"}, -32022, `"x7"`},
		{"3 before 4: unsupported revision and no Mcp-Method", list(badVersion), map[string]string{"MCP-Protocol-Version": "v999.0.0"}, -32022, `"x7"`},
		{"4: Mcp-Method missing", list(meta26), map[string]string{"MCP-Protocol-Version": rev26}, -32020, `"x7"`},
		{"4: Mcp-Method mismatched", list(meta26), headers26("prompts/list", ""), -32020, `"x7"`},
		{"4: Mcp-Method differs in case", list(meta26), headers26("TOOLS/LIST", ""), -32020, `"x7"`},
		{"4: Mcp-Name missing", call, headers26("tools/call", ""), -32020, `8`},
		{"4: Mcp-Name mismatched", call, headers26("tools/call", "shout"), -32020, `8`},
		{"4 before 5: Mcp-Method mismatched on an unknown method", `{"jsonrpc":"2.0","id":9,"method":"no/such","params":{` + meta26 + `}}`, headers26("tools/list", ""), -32020, `9`},
	}
	for _, c := range cases {
		rpcPost(t, d, c.body, c.headers).wantError(t, c.what, http.StatusBadRequest, c.code, c.id)
	}
	r := rpcPost(t, d, list(badVersion), map[string]string{"MCP-Protocol-Version": "v999.0.0", "Mcp-Method": "tools/list"})
	data, _ := r.msg["error"].(map[string]any)["data"].(map[string]any)
	if data["requested"] != "v999.0.0" || !strings.Contains(r.raw, `"supported":["2026-07-28"`) {
		t.Errorf("-32022 data: %s", r.raw)
	}
	// Accepted variations: header names in any case, values with surrounding spaces, and
	// base64-wrapped values.
	for what, h := range map[string]map[string]string{
		"lower-case names": {"mcp-protocol-version": rev26, "mcp-method": "tools/call", "mcp-name": "speak"},
		"padded values":    {"MCP-Protocol-Version": rev26, "Mcp-Method": "  tools/call ", "Mcp-Name": "  speak  "},
		"base64 name":      {"MCP-Protocol-Version": rev26, "Mcp-Method": "tools/call", "Mcp-Name": "=?base64?c3BlYWs=?="},
	} {
		if r := rpcPost(t, d, call, h); r.status != 200 || r.msg["result"] == nil {
			t.Errorf("%s refused: %s", what, r.raw)
		}
	}
	// 5: removed and unknown methods are 404 with -32601, echoing the id.
	for _, m := range []string{"initialize", "ping", "logging/setLevel", "resources/subscribe", "resources/unsubscribe", "no/such"} {
		rpcPost(t, d, `{"jsonrpc":"2.0","id":12345678901234567890,"method":"`+m+`","params":{`+meta26+`}}`, headers26(m, "")).
			wantError(t, "removed or unknown "+m, http.StatusNotFound, -32601, `12345678901234567890`)
	}
}

func TestMCPErrorCodesAndIDs(t *testing.T) {
	t.Parallel()
	d := startDaemon(t, daemonOptions{})
	h := map[string]string{"MCP-Protocol-Version": "2025-11-25"}
	rpcPost(t, d, `{"jsonrpc":"2.0","id":1,"method":`, h).wantError(t, "parse error", 400, -32700, "null")
	rpcPost(t, d, `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, h).wantError(t, "batch", 400, -32600, "null")
	rpcPost(t, d, `{"jsonrpc":"1.0","id":2,"method":"ping"}`, h).wantError(t, "wrong jsonrpc", 400, -32600, "2")
	rpcPost(t, d, `{"id":2,"method":"ping"}`, h).wantError(t, "missing jsonrpc", 400, -32600, "2")
	rpcPost(t, d, `{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`, h).wantError(t, "object id", 400, -32600, "null")
	rpcPost(t, d, `{"jsonrpc":"2.0","id":3,"method":"no/such"}`, h).wantError(t, "unknown method", 200, -32601, "3")
	rpcPost(t, d, `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"shout","arguments":{}}}`, h).
		wantError(t, "unknown tool", 200, -32602, "4")
	rpcPost(t, d, `{"jsonrpc":"2.0","id":5,"method":"tools/list","params":{"cursor":"bogus"}}`, h).
		wantError(t, "bogus cursor", 200, -32602, "5")
	rpcPost(t, d, `{"jsonrpc":"2.0","id":6,"method":"prompts/get","params":{"name":"nope"}}`, h).
		wantError(t, "unknown prompt", 200, -32602, "6")
	r := rpcPost(t, d, `{"jsonrpc":"2.0","id":7,"method":"resources/read","params":{"uri":"test://nothing"}}`, h)
	r.wantError(t, "resource not found (2025)", 200, -32002, "7")
	if !strings.Contains(r.raw, `"data":{"uri":"test://nothing"}`) {
		t.Errorf("not-found data: %s", r.raw)
	}
	r = rpcPost(t, d, `{"jsonrpc":"2.0","id":7,"method":"resources/read","params":{"uri":"test://nothing",`+meta26+`}}`,
		headers26("resources/read", "test://nothing"))
	r.wantError(t, "resource not found (2026)", 200, -32602, "7")
	if !strings.Contains(r.raw, `"uri":"test://nothing"`) {
		t.Errorf("not-found data: %s", r.raw)
	}
	// Ids come back byte for byte: big numbers, exponents, strings with escapes.
	for _, id := range []string{`1e400`, `12345678901234567890`, `-0.5`, `"a\"b\u00e9"`, `""`} {
		_, _, raw := d.request(t, http.MethodPost, "/mcp", `{"jsonrpc":"2.0","id":`+id+`,"method":"ping"}`, h)
		if !strings.HasPrefix(string(raw), `{"jsonrpc":"2.0","id":`+id+`,"result":{}}`) {
			t.Errorf("id %s: %s", id, raw)
		}
	}
	// Empty-but-valid lists and an empty completion.
	for m, key := range map[string]string{"resources/list": "resources", "resources/templates/list": "resourceTemplates", "prompts/list": "prompts"} {
		if l, ok := rpcPost(t, d, `{"jsonrpc":"2.0","id":8,"method":"`+m+`"}`, h).result(t)[key].([]any); !ok {
			t.Errorf("%s has no %s array", m, key)
		} else if m != "resources/templates/list" && len(l) != 0 {
			t.Logf("%s lists %d entries (registered by the plan service)", m, len(l))
		}
	}
	r = rpcPost(t, d, `{"jsonrpc":"2.0","id":9,"method":"completion/complete","params":{"ref":{"type":"ref/prompt","name":"x"},"argument":{"name":"a","value":"b"}}}`, h)
	if !strings.Contains(r.raw, `"result":{"completion":{"values":[]}}`) {
		t.Errorf("completion: %s", r.raw)
	}
}

func TestMCPSpeakToolArguments(t *testing.T) {
	t.Parallel()
	d := startDaemon(t, daemonOptions{})
	h := map[string]string{"MCP-Protocol-Version": "2025-11-25", "X-Talk-Agent": "literal-host"}
	call := func(args string) map[string]any {
		return rpcPost(t, d, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"speak","arguments":`+args+`}}`, h).result(t)
	}
	text := func(res map[string]any) string { return res["content"].([]any)[0].(map[string]any)["text"].(string) }
	for args, field := range map[string]string{
		`{}`:                             `"text"`,
		`{"text":"   "}`:                 `"text"`,
		`{"text":"hi","priority":"max"}`: `"priority"`,
		`{"text":"hi","lang":"fr"}`:      `"lang"`,
		`{"text":"hi","colour":"red"}`:   `"colour"`,
		`{"text":5}`:                     `"text"`,
	} {
		res := call(args)
		if res["isError"] != true || !strings.Contains(text(res), field) {
			t.Errorf("%s: want isError naming %s, got %v", args, field, res)
		}
	}
	res := call(`{"text":"build is green","priority":"high","lang":"de"}`)
	sc := res["structuredContent"].(map[string]any)
	if res["isError"] != nil || sc["status"] != "queued" || text(res) != "queued: "+sc["id"].(string) {
		t.Fatalf("speak: %v", res)
	}
	rec := d.waitSpoken(t, 1)[0]
	if rec.Text != "build is green" || rec.Priority != "high" || rec.Lang != "de" || rec.Agent != "literal-host" {
		t.Errorf("spoken: %+v", rec)
	}
	if n := len(d.spoken(t)); n != 1 {
		t.Errorf("invalid calls reached the voice: %d utterances", n)
	}
}

func TestMCPTransportRules(t *testing.T) {
	t.Parallel()
	d := startDaemon(t, daemonOptions{Env: map[string]string{"TALK_ALLOWED_ORIGINS": "https://listed.example"}})
	ping := `{"jsonrpc":"2.0","id":1,"method":"ping"}`
	for _, m := range []string{http.MethodGet, http.MethodDelete} {
		status, h, raw := d.request(t, m, "/mcp", "", map[string]string{"Accept": "text/event-stream"})
		if status != http.StatusMethodNotAllowed || h.Get("Allow") != "POST" || decodeObject(t, raw)["error"] == nil {
			t.Errorf("%s /mcp: HTTP %d Allow %q body %s", m, status, h.Get("Allow"), raw)
		}
	}
	r := rpcPost(t, d, ping, map[string]string{"Origin": "https://evil.example"})
	if r.status != http.StatusForbidden || r.msg["error"] == nil {
		t.Errorf("foreign Origin: HTTP %d %s", r.status, r.raw)
	}
	if r.header.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("/mcp sent CORS headers")
	}
	for _, origin := range []string{"http://" + d.Addr, "https://listed.example"} {
		if r := rpcPost(t, d, ping, map[string]string{"Origin": origin}); r.status != 200 {
			t.Errorf("Origin %s refused: HTTP %d %s", origin, r.status, r.raw)
		}
	}
	status, _, raw := d.request(t, http.MethodPost, "/mcp", ping, map[string]string{"Host": "evil.example.com", "Origin": "http://evil.example.com"})
	if status < 400 || status > 499 || decodeObject(t, raw) == nil {
		t.Errorf("foreign Host: HTTP %d %s", status, raw)
	}
	if status, _, _ := d.request(t, http.MethodPost, "/mcp", ping, map[string]string{"Host": "localhost:" + strings.Split(d.Addr, ":")[1]}); status != 200 {
		t.Errorf("localhost Host refused: %d", status)
	}
	// /mcp takes a whole plan (6 × the engine's 2 MiB plus 64 KiB, see werkbaum.JSONBodyLimit);
	// beyond that, 413 names the limit.
	big := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"speak","arguments":{"text":"` + strings.Repeat("a", 13<<20) + `"}}}`
	r = rpcPost(t, d, big, nil)
	if r.status != http.StatusRequestEntityTooLarge || r.msg["error"] == nil || !strings.Contains(r.raw, "12648448 bytes") {
		t.Errorf("oversize body: HTTP %d %.300s", r.status, r.raw)
	}
	if r := rpcPost(t, d, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"speak","arguments":{"text":"`+strings.Repeat("a", 70<<10)+`"}}}`, nil); r.status != 200 || r.result(t)["isError"] != true {
		t.Errorf("a 70 KiB /mcp body is within the limit and reaches the tool: HTTP %d %.300s", r.status, r.raw)
	}
	// Neither Content-Type nor Accept is insisted on.
	status, h, raw := d.request(t, http.MethodPost, "/mcp", ping, map[string]string{"Content-Type": "text/plain"})
	if status != 200 || h.Get("Content-Type") != "application/json" || !strings.Contains(string(raw), `"result":{}`) {
		t.Errorf("text/plain body: %d %s", status, raw)
	}
}

func TestMCPSharedModeNeedsToken(t *testing.T) {
	t.Parallel()
	token := strings.Repeat("s", 40)
	d := startDaemon(t, daemonOptions{
		Config: "version = 1\n[[clients]]\nid = \"agent\"\ntoken_env = \"TOK_AGENT\"\nspeak = true\n",
		Env:    map[string]string{"TOK_AGENT": token},
	})
	ping := `{"jsonrpc":"2.0","id":1,"method":"ping"}`
	for _, auth := range []string{"", "Bearer wrong"} {
		h := map[string]string{}
		if auth != "" {
			h["Authorization"] = auth
		}
		r := rpcPost(t, d, ping, h)
		if r.status != http.StatusUnauthorized || !strings.HasPrefix(r.header.Get("WWW-Authenticate"), "Bearer") || r.msg["error"] == nil {
			t.Errorf("auth %q: HTTP %d %v %s", auth, r.status, r.header, r.raw)
		}
	}
	r := rpcPost(t, d, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"speak","arguments":{"text":"with a token"}}}`,
		map[string]string{"Authorization": "Bearer " + token, "X-Talk-Agent": "ci-bot"})
	if res := r.result(t); res["isError"] != nil {
		t.Fatalf("speak with token: %s", r.raw)
	}
	if rec := d.waitSpoken(t, 1)[0]; rec.Caller != "agent" || rec.Agent != "ci-bot" {
		t.Errorf("attribution: %+v", rec)
	}
}

// TestMCPBatchesByRevision: a JSON array of messages is served in the revisions whose
// transport defines batches (2024-11-05, 2025-03-26, and a request naming no revision,
// which counts as 2025-03-26) and refused in the later ones, naming the reason.
func TestMCPBatchesByRevision(t *testing.T) {
	t.Parallel()
	d := startDaemon(t, daemonOptions{})
	batch := `[{"jsonrpc":"2.0","id":1,"method":"ping"},` +
		`{"jsonrpc":"2.0","method":"notifications/initialized"},` +
		`{"jsonrpc":"2.0","id":"two","method":"tools/call","params":{"name":"speak","arguments":{"text":"batched","now":true}}},` +
		`{"jsonrpc":"2.0","id":3,"method":"no/such"},` +
		`42]`
	for _, version := range []string{"", "2024-11-05", "2025-03-26"} {
		h := map[string]string{}
		if version != "" {
			h["MCP-Protocol-Version"] = version
		}
		status, hdr, raw := d.request(t, http.MethodPost, "/mcp", batch, h)
		var answers []map[string]any
		if err := json.Unmarshal(raw, &answers); status != 200 || err != nil || hdr.Get("Content-Type") != "application/json" {
			t.Fatalf("batch under %q: HTTP %d %s", version, status, raw)
		}
		if len(answers) != 4 {
			t.Fatalf("batch under %q: %d answers, want 4 (the notification gets none): %s", version, len(answers), raw)
		}
		if answers[0]["id"] != float64(1) || answers[0]["result"] == nil {
			t.Errorf("ping: %v", answers[0])
		}
		if res, _ := answers[1]["result"].(map[string]any); answers[1]["id"] != "two" || res == nil || res["isError"] != nil {
			t.Errorf("speak: %v", answers[1])
		}
		if e, _ := answers[2]["error"].(map[string]any); e == nil || e["code"] != float64(-32601) {
			t.Errorf("unknown method: %v", answers[2])
		}
		if e, _ := answers[3]["error"].(map[string]any); e == nil || e["code"] != float64(-32600) || answers[3]["id"] != nil {
			t.Errorf("a number as a message: %v", answers[3])
		}
	}
	if recs := d.waitSpoken(t, 3); len(recs) != 3 || recs[0].Text != "batched" {
		t.Errorf("spoken: %+v", recs)
	}
	// Only notifications: 202 and no body.
	status, _, raw := d.request(t, http.MethodPost, "/mcp", `[{"jsonrpc":"2.0","method":"notifications/initialized"}]`, nil)
	if status != http.StatusAccepted || len(raw) != 0 {
		t.Errorf("a batch of notifications: HTTP %d %q", status, raw)
	}
	rpcPost(t, d, `[]`, nil).wantError(t, "empty batch", 400, -32600, "null")
	for _, version := range []string{"2025-06-18", "2025-11-25"} {
		r := rpcPost(t, d, `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, map[string]string{"MCP-Protocol-Version": version})
		r.wantError(t, "batch under "+version, 400, -32600, "null")
		if !strings.Contains(r.raw, "2025-03-26") || !strings.Contains(r.raw, version) {
			t.Errorf("the refusal names neither the revision nor where batches exist: %s", r.raw)
		}
	}
	r := rpcPost(t, d, `[{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{`+meta26+`}}]`, headers26("tools/list", ""))
	r.wantError(t, "batch under 2026-07-28", 400, -32600, "null")
}

// TestMCPUnsupportedVersionNamesSupported: an MCP-Protocol-Version talkd does not serve
// gets 400 with -32022 naming the supported revisions (before: a message about _meta).
func TestMCPUnsupportedVersionNamesSupported(t *testing.T) {
	t.Parallel()
	d := startDaemon(t, daemonOptions{})
	for _, body := range []string{
		`{"jsonrpc":"2.0","id":5,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":5,"method":"tools/list","params":{"_meta":{"progressToken":1}}}`,
		`{"jsonrpc":"2.0","id":5,"method":"prompts/list","params":{}}`,
	} {
		r := rpcPost(t, d, body, map[string]string{"MCP-Protocol-Version": "2099-01-01"})
		r.wantError(t, "unsupported version", 400, -32022, "5")
		e := r.msg["error"].(map[string]any)
		msg, _ := e["message"].(string)
		data, _ := e["data"].(map[string]any)
		if !strings.Contains(msg, "2099-01-01") || !strings.Contains(msg, "2026-07-28") || !strings.Contains(msg, "2025-11-25") ||
			!strings.Contains(msg, "2024-11-05") || data["requested"] != "2099-01-01" || len(data["supported"].([]any)) != 5 {
			t.Errorf("the error does not name the requested and supported revisions: %s", r.raw)
		}
	}
	// initialize negotiates through its protocolVersion (without the header, which a
	// client cannot know before): an unknown one is answered with the latest 2025-era one.
	init := rpcPost(t, d, `{"jsonrpc":"2.0","id":7,"method":"initialize","params":{"protocolVersion":"2099-01-01","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`, nil)
	if init.status != 200 || init.result(t)["protocolVersion"] != "2025-11-25" {
		t.Errorf("initialize asking for an unknown revision: %s", init.raw)
	}
	// The 2026 era keeps its documented order: check 3 names the supported ones too.
	badVersion := `"_meta":{"io.modelcontextprotocol/protocolVersion":"v9","io.modelcontextprotocol/clientCapabilities":{}}`
	r := rpcPost(t, d, `{"jsonrpc":"2.0","id":6,"method":"tools/list","params":{`+badVersion+`}}`, map[string]string{"MCP-Protocol-Version": "v9", "Mcp-Method": "tools/list"})
	r.wantError(t, "2026 check 3", 400, -32022, "6")
	if !strings.Contains(r.raw, "talkd supports 2026-07-28") {
		t.Errorf("check 3 message: %s", r.raw)
	}
}
