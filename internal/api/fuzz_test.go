package api

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
)

// FuzzDecodeRPC: the JSON-RPC decoder never panics, and what it accepts is one object
// whose id (when present) is a JSON string or number echoed byte for byte.
func FuzzDecodeRPC(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"speak","arguments":{"text":"hi"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":1e400,"method":"ping"}`,
		`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`,
		`{"jsonrpc":"1.0","id":1,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":null,"method":"ping","params":null}`,
		`{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`,
		"\x00", `{`, ``,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		msg, err := decodeRPC(body)
		if err != nil {
			if err.Code >= 0 {
				t.Fatalf("error code %d is not a JSON-RPC error code", err.Code)
			}
			return
		}
		if msg.ID != nil {
			// Numbers are kept as written, even beyond float64 (1e400), so check the kind by
			// its first byte rather than by decoding.
			dec := json.NewDecoder(bytes.NewReader(msg.ID))
			dec.UseNumber()
			var v any
			if dec.Decode(&v) != nil {
				t.Fatalf("accepted id %q is not JSON", msg.ID)
			}
			switch v.(type) {
			case string, json.Number:
			default:
				t.Fatalf("accepted id %s of type %T", msg.ID, v)
			}
			if !bytes.Contains(body, msg.ID) {
				t.Fatalf("id %s not taken from the body", msg.ID)
			}
		}
		if msg.Params != nil && !json.Valid(msg.Params) {
			t.Fatalf("params %q are not JSON", msg.Params)
		}
	})
}

// fuzzServer is the whole handler with a voice that admits everything.
func fuzzServer(t testing.TB) http.Handler {
	return benchServer()
}

// FuzzSpeakDoor: any body on POST /speak gets a documented status and a JSON answer.
func FuzzSpeakDoor(f *testing.F) {
	for _, s := range []string{
		`{"text":"hi"}`, `{"text":"hi","priority":"high","lang":"de","now":true}`, `{"text":""}`,
		`{"text":"x","prio":1}`, `{"text":["a"]}`, `null`, `[]`, `{"text":"\u0000"}`, `{"text":"a"}{"text":"b"}`,
	} {
		f.Add([]byte(s))
	}
	h := fuzzServer(f)
	f.Fuzz(func(t *testing.T, body []byte) {
		req := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:7077/speak", bytes.NewReader(body))
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		switch w.Code {
		case http.StatusAccepted, http.StatusOK, http.StatusBadRequest, http.StatusRequestEntityTooLarge:
		default:
			t.Fatalf("status %d for %q", w.Code, body)
		}
		if !json.Valid(w.Body.Bytes()) {
			t.Fatalf("answer is not JSON: %q", w.Body.Bytes())
		}
		if w.Code == http.StatusBadRequest {
			var e errorBody
			if json.Unmarshal(w.Body.Bytes(), &e) != nil || e.Error.Code == "" || e.Error.Message == "" {
				t.Fatalf("400 without code and message: %s", w.Body.Bytes())
			}
		}
	})
}

// FuzzMCPDoor: any body on POST /mcp, in either era, gets a JSON-RPC answer or 202.
func FuzzMCPDoor(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"speak","arguments":{"text":"x"}}}`,
		`{"jsonrpc":"2.0","id":3,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"f","version":"1"}}}`,
		`{"jsonrpc":"2.0","id":4,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":5,"method":"resources/read","params":{"uri":"werkbaum://guide"}}`,
	} {
		f.Add([]byte(s), false)
		f.Add([]byte(s), true)
	}
	h := fuzzServer(f)
	f.Fuzz(func(t *testing.T, body []byte, era2026 bool) {
		req := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:7077/mcp", bytes.NewReader(body))
		if era2026 {
			req.Header.Set("MCP-Protocol-Version", "2026-07-28")
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code == http.StatusAccepted {
			if w.Body.Len() != 0 {
				t.Fatalf("202 with a body: %q", w.Body.Bytes())
			}
			return
		}
		if w.Code >= 500 {
			t.Fatalf("status %d for %q: %s", w.Code, body, w.Body.Bytes())
		}
		var ans struct {
			JSONRPC string          `json:"jsonrpc"`
			Result  json.RawMessage `json:"result"`
			Error   *struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := json.Unmarshal(w.Body.Bytes(), &ans); err != nil || ans.JSONRPC != "2.0" {
			t.Fatalf("answer is not a JSON-RPC message (%v): %q", err, w.Body.Bytes())
		}
		if (ans.Result == nil) == (ans.Error == nil) {
			t.Fatalf("answer needs exactly one of result and error: %s", w.Body.Bytes())
		}
	})
}
