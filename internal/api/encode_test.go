package api

import (
	"encoding/json"
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
		got, err := encodeToolResult(c.ans)
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
			encodeToolResult(res)
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
