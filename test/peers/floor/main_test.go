package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// The floor must send exactly the bytes it was given, with the headers talkd sends, and
// tell the scenarios apart by their method.
func TestFloorAnswersTheGivenBytes(t *testing.T) {
	call := []byte(`{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"muted: x"}]}}` + "\n")
	// Larger than net/http's response buffer, as talkd's tools/list answer is: it must still
	// go out with a Content-Length, not chunked.
	list := []byte(`{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"speak","description":"` + strings.Repeat("x", 3000) + `"}]}}` + "\n")
	hs := httptest.NewServer(newFloor(map[string][]byte{"tools/call": call, "tools/list": list}))
	defer hs.Close()
	cases := []struct {
		path, body string
		status     int
		want       string
	}{
		{"/mcp", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"speak","arguments":{"text":"hi"}}}`, 200, string(call)},
		{"/mcp", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, 200, string(list)},
		{"/mcp", `{"jsonrpc":"2.0","id":1,"method":"ping"}`, 200, `{"jsonrpc":"2.0","id":null,"error":{"code":-32601,"message":"method not found"}}` + "\n"},
		{"/mcp", `{}`, 200, `{"jsonrpc":"2.0","id":null,"error":{"code":-32601,"message":"method not found"}}` + "\n"},
		{"/other", `{}`, 404, "the floor answers POST /mcp only\n"},
	}
	for _, c := range cases {
		resp, b := post(t, hs.URL+c.path, c.body)
		if resp.StatusCode != c.status || string(b) != c.want {
			t.Errorf("POST %s %s: %d %q, want %d %q", c.path, c.body, resp.StatusCode, b, c.status, c.want)
		}
		if c.status == 200 && (resp.Header.Get("Content-Type") != "application/json" || resp.ContentLength != int64(len(c.want)) || len(resp.TransferEncoding) != 0) {
			t.Errorf("POST %s: Content-Type %q, length %d, transfer encoding %v", c.body, resp.Header.Get("Content-Type"), resp.ContentLength, resp.TransferEncoding)
		}
	}
}

func TestMethodOf(t *testing.T) {
	for body, want := range map[string]string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`: "tools/list",
		`{"method":"tools/call","params":{}}`:            "tools/call",
		`{"jsonrpc":"2.0","method":"`:                    "",
		`{"id":1}`:                                       "",
	} {
		if got := string(methodOf([]byte(body))); got != want {
			t.Errorf("methodOf(%s) = %q, want %q", body, got, want)
		}
	}
}

func TestAnswerFlagsRejectBadValues(t *testing.T) {
	a := answerFlags{}
	for _, v := range []string{"tools/call", "=x", "tools/call=", "tools/call=/nonexistent/answer.json"} {
		if err := a.Set(v); err == nil {
			t.Errorf("Set(%q) accepted", v)
		}
	}
}

// The JSON-RPC floor answers what decodes with the same bytes as the plain floor, and
// refuses what a JSON-RPC server could not dispatch.
func TestDecodeFloorDecodesEachRequest(t *testing.T) {
	call := []byte(`{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"muted: x"}]}}` + "\n")
	f := newFloor(map[string][]byte{"tools/call": call})
	f.decode = true
	hs := httptest.NewServer(f)
	defer hs.Close()
	cases := []struct {
		body   string
		status int
	}{
		{`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"speak","arguments":{"text":"hi"}}}`, 200},
		{`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"speak","arguments":{"text":"hi"}}`, 400},
		{`{"jsonrpc":"1.0","id":2,"method":"tools/call","params":{"name":"speak"}}`, 400},
		{`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"arguments":{}}}`, 400},
		{`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":[1]}`, 400},
	}
	for _, c := range cases {
		resp, b := post(t, hs.URL+"/mcp", c.body)
		if resp.StatusCode != c.status || (c.status == 200 && string(b) != string(call)) {
			t.Errorf("POST %s: %d %q, want %d", c.body, resp.StatusCode, b, c.status)
		}
	}
}

// post sends body as a JSON POST to url and returns the answer with its whole body.
func post(t *testing.T, url, body string) (*http.Response, []byte) {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, b
}
