package api

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestEncodeToolResultMatchesEncodingJSON: the spliced encoding is the same JSON value as
// encoding/json's for raw structured content, and plain values still go through json.
func TestEncodeToolResultMatchesEncodingJSON(t *testing.T) {
	raw := json.RawMessage(`{"base":{"revision":2},"nodes":[{"label":"Müller \"x\""}]}`)
	for _, res := range []ToolResult{
		JSONResult(raw, string(raw)),
		{Content: []Content{TextContent("conflict")}, StructuredContent: raw, IsError: true},
		JSONResult(map[string]any{"a": 1}, "a"),
		TextResult("plain"),
	} {
		got, err := encodeToolResult(res)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := json.Marshal(res)
		var g, w any
		if json.Unmarshal(got, &g) != nil || json.Unmarshal(want, &w) != nil {
			t.Fatalf("not JSON: %s", got)
		}
		gb, _ := json.Marshal(g)
		wb, _ := json.Marshal(w)
		if string(gb) != string(wb) {
			t.Fatalf("got %s\nwant %s", got, want)
		}
	}
}

func BenchmarkEncodeInspectResult(b *testing.B) {
	raw := json.RawMessage(`{"nodes":[` + strings.Repeat(`{"line":1,"label":"Some node label here","status":"done","people":["jörg"]},`, 2000) + `{}]}`)
	res := JSONResult(raw, string(raw))
	b.Run("spliced", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			encodeToolResult(res)
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			json.Marshal(res)
		}
	})
}
