package test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const hostilePlan = "[ ] #root: Root (L)\n  - [ ] #a: Alpha (S) @jörg\n  - [ ] #b: Beta (S) @Müller\n"

// TestHostileRequests sends requests no friendly client would, each of which must get a
// clean answer (the documented status and a JSON body naming the problem) while the plan
// file stays byte-identical and the daemon keeps serving.
func TestHostileRequests(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	planPath := filepath.Join(dir, "plan.werkbaum")
	if err := os.WriteFile(planPath, []byte(hostilePlan), 0o644); err != nil {
		t.Fatal(err)
	}
	secret := filepath.Join(dir, "secret.txt")
	os.WriteFile(secret, []byte("do not touch"), 0o600)
	d := startDaemon(t, daemonOptions{Config: fmt.Sprintf("version = 1\n[[plans]]\nkey = \"p\"\npath = %q\n", planPath)})

	_, _, readRaw := d.request(t, "POST", "/mcp", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"werkbaum_read","arguments":{"plan":"p"}}}`, nil)
	var read struct {
		Result struct {
			StructuredContent struct {
				Base map[string]any `json:"base"`
			} `json:"structuredContent"`
		} `json:"result"`
	}
	json.Unmarshal(readRaw, &read)
	base, _ := json.Marshal(read.Result.StructuredContent.Base)
	if len(base) < 20 {
		t.Fatalf("no base: %s", readRaw)
	}

	tool := func(name, args string) string {
		return `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"` + name + `","arguments":` + args + `}}`
	}
	write := func(name, extra string) string {
		return tool(name, `{"plan":"p","base":`+string(base)+`,"request_id":"h-`+name+`-`+fmt.Sprint(len(extra))+`"`+extra+`}`)
	}
	deep := strings.Repeat("[", 30000) + strings.Repeat("]", 30000) // under the body limit
	nested := func() string {
		var b strings.Builder
		for i := 0; i < 250; i++ {
			b.WriteString(strings.Repeat(" ", i) + fmt.Sprintf("- [ ] #n%d: level %d (XS)\\n", i, i))
		}
		return b.String()
	}()

	type expect int
	const (
		httpErr  expect = iota // an HTTP error status with {"error":{code,message}}
		rpcErr                 // a JSON-RPC error object
		toolErr                // a tool result with isError true
		accepted               // 2xx success
	)
	cases := []struct {
		name    string
		method  string
		path    string
		body    string
		headers map[string]string
		status  int
		want    expect
		needle  string // must appear in the answer
	}{
		// The /speak door.
		{"speak 10 MB body", "POST", "/speak", `{"text":"` + strings.Repeat("a", 10<<20) + `"}`, nil, 413, httpErr, "body_too_large"},
		{"speak deep nesting", "POST", "/speak", deep, nil, 400, httpErr, "invalid_json"},
		{"speak deep object", "POST", "/speak", `{"text":` + deep + `}`, nil, 400, httpErr, ""},
		{"speak NUL in text", "POST", "/speak", `{"text":"a\u0000b"}`, nil, 400, httpErr, "text"},
		{"speak text as number", "POST", "/speak", `{"text":1e999}`, nil, 400, httpErr, "text"},
		{"speak priority object", "POST", "/speak", `{"text":"x","priority":{"a":1}}`, nil, 400, httpErr, "priority"},
		{"speak now as string", "POST", "/speak", `{"text":"x","now":"true"}`, nil, 400, httpErr, "now"},
		{"speak lang path", "POST", "/speak", `{"text":"x","lang":"../../etc"}`, nil, 400, httpErr, "lang"},
		{"speak provider path", "POST", "/speak", `{"text":"x","provider":"/bin/sh"}`, nil, 400, httpErr, "provider"},
		{"speak 1001 characters", "POST", "/speak", `{"text":"` + strings.Repeat("é", 1001) + `","now":true}`, nil, 202, accepted, `"shortened_from":1001`},
		{"speak forged agent header", "POST", "/speak", `{"text":"agent probe","now":true}`, map[string]string{"X-Talk-Agent": strings.Repeat("Å\t", 300)}, 202, accepted, "queued"},
		{"speak forged host", "POST", "/speak", `{"text":"x"}`, map[string]string{"Host": "evil.example:7077"}, 403, httpErr, "host_not_allowed"},
		{"speak foreign origin", "POST", "/speak", `{"text":"origin probe","now":true}`, map[string]string{"Origin": "https://evil.example"}, 403, httpErr, "origin_not_allowed"},
		{"speak invalid UTF-8", "POST", "/speak", "{\"text\":\"caf\xe9 au lait\"}", nil, 400, httpErr, `"field":"text"`},
		{"speak invalid UTF-8 in an unknown field", "POST", "/speak", "{\"text\":\"ok\",\"n\xf6te\":\"x\"}", nil, 400, httpErr, "UTF-8"},
		{"speak text/plain", "POST", "/speak", `{"text":"plain probe","now":true}`, map[string]string{"Content-Type": "text/plain"}, 202, accepted, "queued"},
		{"mute negative", "POST", "/mute", `{"for":"-5m"}`, nil, 400, httpErr, "for"},
		{"mute overflow", "POST", "/mute", `{"for":"9999999999999h"}`, nil, 400, httpErr, "for"},
		{"mute bad clock", "POST", "/mute", `{"until":"25:00"}`, nil, 400, httpErr, "until"},
		{"mute unknown field", "POST", "/mute", `{"forever":true}`, nil, 400, httpErr, "forever"},
		{"history negative limit", "GET", "/history?limit=-1", ``, nil, 400, httpErr, "limit"},
		{"history huge limit", "GET", "/history?limit=99999999999999999999999", ``, nil, 400, httpErr, "limit"},
		{"path traversal URL", "GET", "/../../etc/passwd", ``, nil, 404, httpErr, ""},
		// The MCP door.
		{"mcp 20 MB body", "POST", "/mcp", `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"` + strings.Repeat("a", 20<<20) + `"}}`, nil, 413, rpcErr, "limit of 12648448 bytes"},
		{"mcp deep nesting", "POST", "/mcp", deep, nil, 400, rpcErr, ""},
		{"mcp huge numeric id", "POST", "/mcp", `{"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"ping"}`, nil, 200, accepted, `"id":123456789012345678901234567890`},
		{"mcp 1e400 id", "POST", "/mcp", `{"jsonrpc":"2.0","id":1e400,"method":"ping"}`, nil, 200, accepted, `"id":1e400`},
		{"mcp object id", "POST", "/mcp", `{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`, nil, 400, rpcErr, "-32600"},
		{"mcp bool id", "POST", "/mcp", `{"jsonrpc":"2.0","id":true,"method":"ping"}`, nil, 400, rpcErr, "-32600"},
		{"mcp batch in 2025-11-25", "POST", "/mcp", `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, map[string]string{"MCP-Protocol-Version": "2025-11-25"}, 400, rpcErr, "-32600"},
		{"mcp empty batch", "POST", "/mcp", `[]`, nil, 400, rpcErr, "-32600"},
		{"mcp batch of junk", "POST", "/mcp", `[1,"x",null]`, nil, 200, accepted, "-32600"},
		{"mcp invalid UTF-8 in a tool argument", "POST", "/mcp", tool("speak", "{\"text\":\"caf\xe9\"}"), nil, 200, toolErr, `\"field\":\"text\"`},
		{"mcp invalid UTF-8 in _meta", "POST", "/mcp", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":{\"_meta\":{\"x\":\"\xff\"}}}", nil, 400, rpcErr, "params._meta.x"},
		{"mcp method number", "POST", "/mcp", `{"jsonrpc":"2.0","id":1,"method":5}`, nil, 400, rpcErr, "-32600"},
		{"mcp jsonrpc 1.0", "POST", "/mcp", `{"jsonrpc":"1.0","id":1,"method":"ping"}`, nil, 400, rpcErr, "-32600"},
		{"mcp foreign origin", "POST", "/mcp", `{"jsonrpc":"2.0","id":1,"method":"ping"}`, map[string]string{"Origin": "http://evil.example"}, 403, rpcErr, ""},
		{"mcp forged host", "POST", "/mcp", `{"jsonrpc":"2.0","id":1,"method":"ping"}`, map[string]string{"Host": "evil.example.com"}, 403, httpErr, ""},
		{"mcp unknown tool", "POST", "/mcp", tool("rm_rf", `{}`), nil, 200, rpcErr, "-32602"},
		{"mcp arguments as string", "POST", "/mcp", tool("speak", `"text"`), nil, 200, rpcErr, "-32602"},
		{"mcp forged 2026 header", "POST", "/mcp", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`, map[string]string{"MCP-Protocol-Version": "2099-01-01"}, 400, rpcErr, ""},
		// Plans: no argument reaches another file, no guard is bypassed.
		{"plan dot-dot key", "POST", "/mcp", tool("werkbaum_read", `{"plan":"../secret.txt"}`), nil, 200, toolErr, "unknown plan"},
		{"plan absolute path key", "POST", "/mcp", tool("werkbaum_read", `{"plan":"`+secret+`"}`), nil, 200, toolErr, "unknown plan"},
		{"plan NUL key", "POST", "/mcp", tool("werkbaum_read", `{"plan":"p\u0000"}`), nil, 200, toolErr, "unknown plan"},
		{"plan huge key", "POST", "/mcp", tool("werkbaum_read", `{"plan":"`+strings.Repeat("p", 20000)+`"}`), nil, 200, toolErr, "unknown plan"},
		{"plan path argument", "POST", "/mcp", tool("werkbaum_read", `{"plan":"p","path":"`+secret+`"}`), nil, 200, toolErr, "path"},
		{"plan resource traversal", "POST", "/mcp", `{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"werkbaum://plan/../secret.txt"}}`, nil, 200, rpcErr, ""},
		{"write request_id too long", "POST", "/mcp", tool("werkbaum_set_status", `{"plan":"p","base":`+string(base)+`,"request_id":"`+strings.Repeat("r", 257)+`","id":"a","status":"x"}`), nil, 200, toolErr, "request_id"},
		{"write base as string", "POST", "/mcp", tool("werkbaum_set_status", `{"plan":"p","base":"latest","request_id":"r1","id":"a","status":"x"}`), nil, 200, toolErr, "base"},
		{"write forged checksum", "POST", "/mcp", tool("werkbaum_set_status", `{"plan":"p","base":{"revision":1,"checksum":"../../etc/passwd"},"request_id":"r2","id":"a","status":"x"}`), nil, 200, toolErr, "checksum"},
		{"write stale checksum", "POST", "/mcp", tool("werkbaum_set_status", `{"plan":"p","base":{"revision":1,"checksum":"`+strings.Repeat("0", 64)+`"},"request_id":"r3","id":"a","status":"x"}`), nil, 200, toolErr, "conflict"},
		{"apply_ops duplicate id bypass", "POST", "/mcp", write("werkbaum_apply_ops", `,"ops":[{"op":"insert","index":3,"lines":["  - [ ] #a: Again (S)"]}]`), nil, 200, toolErr, "allowWarnings"},
		{"apply_ops production bypass", "POST", "/mcp", write("werkbaum_apply_ops", `,"ops":[{"op":"replace","index":1,"count":1,"lines":["  - [^] #a: Alpha (S) @jörg"]}]`), nil, 200, toolErr, "allowProd"},
		{"apply_ops mixed gate bypass", "POST", "/mcp", write("werkbaum_apply_ops", `,"ops":[{"op":"insert","index":3,"lines":["  | [ ] Other (S)"]}]`), nil, 200, toolErr, "allowWarnings"},
		{"apply_ops negative index", "POST", "/mcp", write("werkbaum_apply_ops", `,"ops":[{"op":"delete","index":-1,"count":1}]`), nil, 200, toolErr, ""},
		{"apply_ops beyond the end", "POST", "/mcp", write("werkbaum_apply_ops", `,"ops":[{"op":"delete","index":99,"count":5}]`), nil, 200, toolErr, ""},
		{"apply_ops overlapping", "POST", "/mcp", write("werkbaum_apply_ops", `,"ops":[{"op":"delete","index":0,"count":2},{"op":"delete","index":1,"count":1}]`), nil, 200, toolErr, ""},
		{"set_status production", "POST", "/mcp", write("werkbaum_set_status", `,"id":"a","status":"^"`), nil, 200, toolErr, "allowProd"},
		{"add_node two lines", "POST", "/mcp", write("werkbaum_add_node", `,"parent":"root","line":"- [ ] x\n- [ ] y"`), nil, 200, toolErr, "line"},
		{"move under itself", "POST", "/mcp", write("werkbaum_move_node", `,"id":"root","parent":"a"`), nil, 200, toolErr, ""},
		{"write invalid UTF-8 in the text", "POST", "/mcp", write("werkbaum_write", ",\"text\":\"[ ] #root: R\xe4ksm\xf6rg\xe5s (L)\\n\""), nil, 200, toolErr, `\"field\":\"text\"`},
		{"write 3 MB text", "POST", "/mcp", write("werkbaum_write", `,"text":"`+strings.Repeat("- x\\n", 800000)+`"`), nil, 200, toolErr, "the limit is 2097152"},
		{"write invalid UTF-8 in a line", "POST", "/mcp", write("werkbaum_apply_ops", ",\"ops\":[{\"op\":\"insert\",\"index\":3,\"lines\":[\"  - [ ] #c: M\xfcller (S)\"]}]"), nil, 200, toolErr, `ops[0].lines[0]`},
		{"write deeply nested plan", "POST", "/mcp", write("werkbaum_write", `,"text":"`+nested+`","allowWarnings":false`), nil, 200, accepted, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before, _ := os.ReadFile(planPath)
			status, hdr, raw := d.request(t, tc.method, tc.path, tc.body, tc.headers)
			if status != tc.status {
				t.Fatalf("status %d, want %d: %.300s", status, tc.status, raw)
			}
			if !strings.HasPrefix(hdr.Get("Content-Type"), "application/json") || !json.Valid(raw) {
				t.Fatalf("answer is not JSON (%s): %.300s", hdr.Get("Content-Type"), raw)
			}
			var ans map[string]any
			json.Unmarshal(raw, &ans)
			switch tc.want {
			case httpErr:
				e, _ := ans["error"].(map[string]any)
				if e == nil || e["message"] == "" {
					t.Fatalf("no error with a message: %.300s", raw)
				}
			case rpcErr:
				e, _ := ans["error"].(map[string]any)
				if ans["jsonrpc"] != "2.0" || e == nil || e["message"] == "" {
					t.Fatalf("no JSON-RPC error: %.300s", raw)
				}
			case toolErr:
				res, _ := ans["result"].(map[string]any)
				if res == nil || res["isError"] != true {
					t.Fatalf("no tool error: %.300s", raw)
				}
			}
			if tc.needle != "" && !bytes.Contains(raw, []byte(tc.needle)) {
				t.Fatalf("answer does not mention %q: %.400s", tc.needle, raw)
			}
			after, _ := os.ReadFile(planPath)
			if tc.name != "write deeply nested plan" && !bytes.Equal(before, after) {
				t.Fatalf("the plan file changed")
			}
		})
	}
	if b, _ := os.ReadFile(secret); string(b) != "do not touch" {
		t.Fatal("a file outside the configuration was touched")
	}
	if status, _, _ := d.request(t, "GET", "/healthz", "", nil); status != http.StatusOK {
		t.Fatal("the daemon stopped serving")
	}
	for _, r := range d.waitSpoken(t, 2) {
		if len(r.Agent) > 100 || strings.ContainsAny(r.Agent, "\x00\t\n") {
			t.Fatalf("forged agent name kept as %q", r.Agent)
		}
	}
}
