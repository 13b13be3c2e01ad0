package api

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"
)

// The hot-path decoders and encoders must answer exactly like encoding/json: these tests
// hold them against it (and against the map-based decodeRPC they replaced) on tables of
// awkward inputs, and the fuzz targets keep doing so on generated ones.

var jsonStringCases = []string{
	"", "plain", `quote " and \ backslash`, "<script>&</script>", "tab\tnl\nret\rbs\bff\f",
	"\x00\x01\x1f\x7f", "Müller ☃ 😀", "line\u2028sep\u2029", "bad \xff utf8 \xc3", "\xed\xa0\x80",
	"queued: a1", strings.Repeat("ä<", 100),
}

func TestAppendJSONStringMatchesEncodingJSON(t *testing.T) {
	for _, s := range jsonStringCases {
		want, _ := json.Marshal(s)
		if got := appendJSONString(nil, s); !bytes.Equal(got, want) {
			t.Errorf("%q: got %s, want %s", s, got, want)
		}
	}
}

func FuzzAppendJSONString(f *testing.F) {
	for _, s := range jsonStringCases {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, _ := json.Marshal(s)
		if got := appendJSONString(nil, s); !bytes.Equal(got, want) {
			t.Fatalf("%q: got %s, want %s", s, got, want)
		}
	})
}

func TestSpeakResultAppendJSONMatchesEncodingJSON(t *testing.T) {
	until := time.Date(2026, 11, 30, 4, 5, 6, 7, time.FixedZone("x", 3600))
	for _, r := range []SpeakResult{
		{Status: "queued", ID: "a1", Position: 3, Message: "queued as a1 at position 3"},
		{Status: "muted", Until: &until, Message: "muted: <until> & \"then\""},
		{Status: "muted", Message: "muted: talkd is muted until unmuted"},
		{Status: "discarded", Reason: "rate_limit", RetryAfterMs: 1234, Message: "discarded: rate_limit"},
		{Status: "discarded", Reason: "quiet_hours", Window: "22:00-07:00", Message: "discarded: quiet_hours"},
		{},
	} {
		want, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		got, err := r.appendJSON(nil)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("got %s (%v), want %s", got, err, want)
		}
		res := toolAnswer{text: r.Text(), result: r}
		wantRes, _ := json.Marshal(map[string]any{"content": []Content{TextContent(r.Text())}, "structuredContent": r})
		gotRes, _, err := encodeToolResult(nil, res)
		gotRes, wantRes = canonJSON(t, gotRes), canonJSON(t, wantRes)
		if err != nil || !bytes.Equal(gotRes, wantRes) {
			t.Errorf("tool result: got %s (%v), want %s", gotRes, err, wantRes)
		}
	}
}

// TestEncodeToolResultErrorShape: a failure is isError with one text block holding the
// ToolError's JSON and no structuredContent (so no output schema can reject it).
func TestEncodeToolResultErrorShape(t *testing.T) {
	text := "[ ] #a: Müller <b> & \"x\"\n"
	base := plansBase()
	for _, e := range []*ToolError{
		toolErrorOf(fieldError("text", `field "text" is required`)),
		{Error: "conflict", Message: "conflict: …", Conflict: true, Base: &base, Text: &text},
	} {
		got, _, err := encodeToolResult(nil, toolAnswer{err: e})
		if err != nil {
			t.Fatal(err)
		}
		var res struct {
			Content []Content
			IsError bool
			Other   map[string]any `json:"structuredContent"`
		}
		if err := json.Unmarshal(got, &res); err != nil || !res.IsError || res.Other != nil || len(res.Content) != 1 || res.Content[0].Type != "text" {
			t.Fatalf("%s (%v)", got, err)
		}
		var back ToolError
		if err := json.Unmarshal([]byte(res.Content[0].Text), &back); err != nil || back.Error != e.Error || back.Message != e.Message {
			t.Fatalf("the text is not the ToolError: %q (%v)", res.Content[0].Text, err)
		}
		if e.Text != nil && (back.Text == nil || *back.Text != text || back.Base == nil || *back.Base != base) {
			t.Errorf("conflict details lost: %+v", back)
		}
	}
}

func canonJSON(t *testing.T, b []byte) []byte {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("not JSON: %s", b)
	}
	out, _ := json.Marshal(v)
	return out
}

var speakBodies = []string{
	`{"text":"Tests are green on main","priority":"high"}`,
	`{"text":"hi","priority":"low","lang":"de","provider":"fake","now":true}`,
	` {"text" : "spaced" , "now" : false } `,
	`{"text":"a","text":"b"}`,
	`{"Text":"case folded"}`, `{"TEXT":"x"}`, `{"te\u0078t":"escaped key"}`, `{"text":"esc\"aped"}`,
	`{"text":"x","prio":"high"}`, `{"text":1}`, `{"text":null}`, `{"now":"yes"}`, `{"now":null}`,
	`{"text":"x"} {"text":"y"}`, `{"text":"x"`, `[]`, `null`, ``, `{}`, `{"text":"\xff"}`,
	"{\"\u212aey\":1}", `{"text":["a"]}`, `{"text":"x","now":1}`,
}

// TestDecodeSpeakRequestMatchesStrict: the plain fast path and decodeStrict agree on
// every body (value or error), and on every valid one as the speak tool decodes it.
func TestDecodeSpeakRequestMatchesStrict(t *testing.T) {
	for _, b := range speakBodies {
		checkSpeakDecode(t, []byte(b))
	}
}

func FuzzDecodeSpeakRequest(f *testing.F) {
	for _, b := range speakBodies {
		f.Add([]byte(b))
	}
	f.Fuzz(func(t *testing.T, b []byte) { checkSpeakDecode(t, b) })
}

func checkSpeakDecode(t *testing.T, b []byte) {
	t.Helper()
	var want SpeakRequest
	werr := decodeStrict(b, &want)
	got, gerr := DecodeSpeakRequest(b)
	if !reflect.DeepEqual(werr, gerr) || (werr == nil && got != want) {
		t.Fatalf("%q: got %+v %v, want %+v %v", b, got, gerr, want, werr)
	}
	if json.Valid(b) {
		// The speak tool's arguments: valid JSON, decoded without checking that again.
		got, gerr = decodeSpeakArgs(b)
		if !reflect.DeepEqual(werr, gerr) || (werr == nil && got != want) {
			t.Fatalf("%q as tool arguments: got %+v %v, want %+v %v", b, got, gerr, want, werr)
		}
	}
}

var envelopeParams = []string{
	`{"name":"speak","arguments":{"text":"x"}}`,
	`{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"},"name":"speak"}`,
	`{"_meta":{"a":1},"_meta":{"b":2}}`, `{"_meta":{"a":1},"_meta":null}`, `{"_meta":"x"}`, `{"_meta":[1]}`,
	`{"Name":"speak"}`, `{"NAME":1,"name":"x"}`, `{"n\u0061me":"speak"}`, "{\"_m\u00e9ta\":1}",
	`{"uri":"werkbaum://plan/a","cursor":null}`, `{"cursor":"","arguments":[1,{"x":"}"}]}`,
	`{"name":null}`, `{}`, `{"other":{"name":"inner"},"name":"outer"}`, `{"Arguments":{"a":1}}`,
}

// TestEnvelopeDecodeMatchesUnmarshal: splitting params gives the same envelope and the
// same errors as json.Unmarshal.
func TestEnvelopeDecodeMatchesUnmarshal(t *testing.T) {
	for _, p := range envelopeParams {
		checkEnvelope(t, []byte(p))
	}
}

func FuzzEnvelopeDecode(f *testing.F) {
	for _, p := range envelopeParams {
		f.Add([]byte(p))
	}
	f.Fuzz(func(t *testing.T, p []byte) {
		p = bytes.TrimSpace(p)
		if !json.Valid(p) || p[0] != '{' {
			return // decode only ever sees a params object of a validated body
		}
		checkEnvelope(t, p)
	})
}

func checkEnvelope(t *testing.T, p []byte) {
	t.Helper()
	var want, got mcpEnvelope
	werr := json.Unmarshal(p, &want)
	gerr := got.decode(p)
	if (werr == nil) != (gerr == nil) || (werr != nil && werr.Error() != gerr.Error()) {
		t.Fatalf("%s: error %v, want %v", p, gerr, werr)
	}
	if werr == nil && !reflect.DeepEqual(normEnvelope(got), normEnvelope(want)) {
		t.Fatalf("%s:\ngot  %+v\nwant %+v", p, got, want)
	}
}

// normEnvelope makes empty and nil raw values compare alike (both mean "absent").
func normEnvelope(e mcpEnvelope) mcpEnvelope {
	for _, r := range []*json.RawMessage{&e.Name, &e.URI, &e.Cursor, &e.Arguments} {
		if len(*r) == 0 {
			*r = nil
		}
	}
	return e
}

// decodeRPCByMap is the map-based decoder decodeRPC replaced, kept as the reference.
func decodeRPCByMap(body []byte) (rpcMessage, *rpcError) {
	var msg rpcMessage
	body = bytes.TrimSpace(body)
	if !json.Valid(body) {
		return msg, newRPCError(rpcParseError, "parse error: the body is not valid JSON")
	}
	switch {
	case body[0] == '[':
		return msg, newRPCError(rpcInvalidRequest, "batches are not supported: send one JSON-RPC message per request")
	case body[0] != '{':
		return msg, newRPCError(rpcInvalidRequest, "invalid request: the body must be a JSON-RPC object")
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(body, &fields); err != nil {
		return msg, newRPCError(rpcParseError, "parse error: "+err.Error())
	}
	if id, ok := fields["id"]; ok && !bytes.Equal(id, jsonNull) {
		if !validID(id) {
			return msg, newRPCError(rpcInvalidRequest, "invalid request: id must be a string or a number")
		}
		msg.ID = id
	}
	if v, ok := fields["jsonrpc"]; !ok || !bytes.Equal(v, jsonVersion2) {
		return msg, newRPCError(rpcInvalidRequest, `invalid request: "jsonrpc" must be "2.0"`)
	}
	method, ok := fields["method"]
	if !ok {
		_, isResult := fields["result"]
		_, isError := fields["error"]
		if isResult || isError {
			return msg, nil
		}
		return msg, newRPCError(rpcInvalidRequest, `invalid request: "method" is missing`)
	}
	if err := json.Unmarshal(method, &msg.Method); err != nil || msg.Method == "" {
		msg.Method = ""
		return msg, newRPCError(rpcInvalidRequest, `invalid request: "method" must be a non-empty string`)
	}
	if p, ok := fields["params"]; ok && !bytes.Equal(p, jsonNull) {
		if p[0] != '{' {
			return msg, newRPCError(rpcInvalidParams, `invalid params: "params" must be an object`)
		}
		msg.Params = p
	}
	return msg, nil
}

var rpcBodies = []string{
	`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
	`{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"speak","arguments":{"text":"}"}}}`,
	` {"jsonrpc" : "2.0" , "id" : 2 , "method" : "ping" } `, `{"jsonrpc":"2.0","method":"notifications/initialized"}`,
	`{"jsonrpc":"2.0","id":1,"result":{}}`, `{"jsonrpc":"2.0","id":1,"error":{"code":1}}`, `{"jsonrpc":"2.0","id":1}`,
	`{"jsonrpc":"2.0","id":null,"method":"x"}`, `{"jsonrpc":"2.0","id":true,"method":"x"}`, `{"jsonrpc":"1.0","id":1,"method":"x"}`,
	`{"jsonrpc":"2.0","id":1,"method":""}`, `{"jsonrpc":"2.0","id":1,"method":7}`, `{"jsonrpc":"2.0","id":1,"method":null}`,
	`{"jsonrpc":"2.0","id":1,"method":"to\u006fls/list"}`, `{"jsonrpc":"2.0","\u0069d":5,"method":"x"}`, `{"jsonrpc":"2.0","ID":5,"method":"x"}`,
	`{"jsonrpc":"2.0","id":1,"method":"x","params":[1]}`, `{"jsonrpc":"2.0","id":1,"method":"x","params":null}`,
	`{"jsonrpc":"2.0","id":1,"id":2,"method":"x","method":"y"}`, `{"jsonrpc":"2.0","id":1,"method":"a\xffb"}`,
	`[{"jsonrpc":"2.0"}]`, `"str"`, `{`, ``, `{"jsonrpc":"2.0","id":1e400,"method":"x"}`, `{"jsonrpc":"2.0","id":-0.5,"method":"x"}`,
}

// TestDecodeRPCMatchesMapDecoder: one pass over the members decides exactly what the map
// decode did.
func TestDecodeRPCMatchesMapDecoder(t *testing.T) {
	for _, b := range rpcBodies {
		checkDecodeRPC(t, []byte(b))
	}
}

func FuzzDecodeRPCMatchesMapDecoder(f *testing.F) {
	for _, b := range rpcBodies {
		f.Add([]byte(b))
	}
	f.Fuzz(func(t *testing.T, b []byte) { checkDecodeRPC(t, b) })
}

func checkDecodeRPC(t *testing.T, b []byte) {
	t.Helper()
	wm, we := decodeRPCByMap(b)
	gm, ge := decodeRPC(b)
	if !reflect.DeepEqual(we, ge) || wm.Method != gm.Method || !bytes.Equal(wm.ID, gm.ID) || !bytes.Equal(wm.Params, gm.Params) ||
		(wm.ID == nil) != (gm.ID == nil) || (wm.Params == nil) != (gm.Params == nil) {
		t.Fatalf("%q:\ngot  %+v %+v\nwant %+v %+v", b, gm, ge, wm, we)
	}
}

// BenchmarkAppendJSONString is the string escaping of a speak answer's message (it is
// written twice per answer: the text content and structuredContent.message).
//
//	go test ./internal/api -run '^$' -bench AppendJSONString -benchmem
func BenchmarkAppendJSONString(b *testing.B) {
	const msg = "muted: talkd is muted until unmuted; the announcement was not queued"
	buf := make([]byte, 0, 256)
	b.ReportAllocs()
	for b.Loop() {
		buf = appendJSONString(buf[:0], msg)
	}
}
