package api

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"talkd/internal/werkbaum/plans"
)

func plansBase() plans.Base {
	return plans.Base{Revision: 2, Checksum: strings.Repeat("ab", 32)}
}

// TestEncodeToolResultMatchesEncodingJSON: the spliced inspect view and results encoded
// through encoding/json give the same JSON value as encoding/json's encoding of the
// result object.
func TestEncodeToolResultMatchesEncodingJSON(t *testing.T) {
	// The store hands out its answer with the base already spliced in (plans.Inspected).
	view := json.RawMessage(`{"base":{"revision":2,"checksum":"` + plansBase().Checksum + `"},"nodes":[{"label":"Müller \"x\""}]}`)
	insp := inspectOut{Base: plansBase(), view: view}
	for _, c := range []struct {
		ans  toolAnswer
		want any
	}{
		// The inspect view's text copy is the view's JSON itself (the serialized structured
		// content MCP asks for), whatever text the call returned.
		{toolAnswer{result: insp}, map[string]any{"content": []Content{TextContent(string(view))},
			"structuredContent": map[string]any{"base": plansBase(), "nodes": []any{map[string]any{"label": "Müller \"x\""}}}}},
		{toolAnswer{text: "a", result: plansListOut{Plans: []PlanInfo{}}}, map[string]any{"content": []Content{TextContent("a")},
			"structuredContent": plansListOut{Plans: []PlanInfo{}}}},
		{toolAnswer{text: "plain <b>", result: noArgs{}}, map[string]any{"content": []Content{TextContent("plain <b>")}, "structuredContent": map[string]any{}}},
	} {
		got, _, err := encodeToolResult(nil, c.ans)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := json.Marshal(c.want)
		if g, w := canonJSON(t, got), canonJSON(t, want); string(g) != string(w) {
			t.Fatalf("got %s\nwant %s", g, w)
		}
	}
}

func BenchmarkEncodeInspectResult(b *testing.B) {
	raw := json.RawMessage(`{"nodes":[` + strings.Repeat(`{"line":1,"label":"Some node label here","status":"done","people":["jörg"]},`, 2000) + `{}]}`)
	res := toolAnswer{text: string(raw), result: inspectOut{Base: plansBase(), view: raw}}
	b.Run("spliced", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			encodeToolResult(nil, res)
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		var v any
		json.Unmarshal(raw, &v)
		b.ReportAllocs()
		for b.Loop() {
			json.Marshal(map[string]any{"content": []Content{TextContent(string(raw))}, "structuredContent": v})
		}
	})
}

// Every JSON-RPC answer goes out with its Content-Length and never chunked, whether
// net/http counts it (small answers) or writeRPCParts declares it, around net/http's
// buffer size, with the parts split anywhere.
func TestWriteRPCPartsDeclaresEveryLength(t *testing.T) {
	for _, n := range []int{1, 272, netHTTPCounts - 1, netHTTPCounts, netHTTPCounts + 1, 4096, 300 << 10} {
		body := bytes.Repeat([]byte("x"), n)
		for _, split := range []int{0, n / 3, n} {
			a := rpcAnswer{head: body[:split], result: body[split : split+(n-split)/2], tail: body[split+(n-split)/2:]}
			hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				writeRPCParts(w, http.StatusOK, a)
			}))
			resp, err := http.Post(hs.URL, "application/json", nil)
			if err != nil {
				t.Fatal(err)
			}
			got, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			hs.Close()
			if err != nil || !bytes.Equal(got, body) {
				t.Fatalf("%d bytes split at %d: read %d bytes, %v", n, split, len(got), err)
			}
			if resp.ContentLength != int64(n) || len(resp.TransferEncoding) != 0 || resp.Header.Get("Content-Type") != "application/json" {
				t.Errorf("%d bytes split at %d: Content-Length %d, Transfer-Encoding %v, Content-Type %q",
					n, split, resp.ContentLength, resp.TransferEncoding, resp.Header.Get("Content-Type"))
			}
		}
	}
}
