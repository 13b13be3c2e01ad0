package werkbaum

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// TestInspectRowsGiveTheRecordsJSON: InspectJSON (inspectRows + rowsToRecords) answers
// byte for byte what the script's own inspect method writes, for every example, every
// case plan and generated plans, with subtree and include options.
func TestInspectRowsGiveTheRecordsJSON(t *testing.T) {
	ctx := context.Background()
	e := newTestEngine(t, Options{CacheEntries: -1})
	texts := []string{smallPlan, "", "%% only a comment\n", bigPlan(300, 3), coupledPlan(5),
		"- [x] Ünïcödé \"q\" \\ #ü1 @jörg &über (M)\n  - Tab\there \u2028 x #t\n---\n#ü1\n  Desc \"q\" \u0001 \\n\n"}
	files, _ := filepath.Glob(filepath.Join(sharedDir(t), "werkbaum", "examples", "*.werkbaum"))
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		texts = append(texts, string(src))
	}
	cases, _ := filepath.Glob(filepath.Join("testdata", "cases", "*.json"))
	for _, f := range cases {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var list []struct {
			Lines []string `json:"lines"`
		}
		if json.Unmarshal(src, &list) != nil {
			continue
		}
		for _, c := range list {
			if c.Lines != nil {
				texts = append(texts, joinLines(c.Lines))
			}
		}
	}
	if len(texts) < 60 {
		t.Fatalf("only %d plans", len(texts))
	}
	compared := 0
	for _, text := range texts {
		var in Inspection
		all, err := e.InspectJSON(ctx, text, InspectOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(all, &in); err != nil {
			t.Fatal(err)
		}
		ids := []string{""}
		for _, n := range in.Nodes {
			if n.ID != "" && len(ids) < 4 {
				ids = append(ids, n.ID)
			}
		}
		for _, id := range ids {
			for _, inc := range [][]string{nil, {"tree"}, {"path", "warnings"}, {"warnings"}} {
				args := struct {
					Text    string   `json:"text"`
					ID      string   `json:"id,omitempty"`
					Include []string `json:"include,omitempty"`
				}{text, id, inc}
				want, err := e.call(ctx, "inspect", args)
				if err != nil {
					t.Fatal(err)
				}
				got, err := e.InspectJSON(ctx, text, InspectOptions{ID: id, Include: inc})
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, want) {
					t.Fatalf("id %q include %v: InspectJSON differs from the script's inspect:\n%s\n%s", id, inc, got, want)
				}
				compared++
			}
		}
	}
	t.Logf("%d views compared", compared)
}

func joinLines(lines []string) string {
	var b bytes.Buffer
	for i, l := range lines {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(l)
	}
	return b.String()
}

func TestRowsToRecordsRejectsMalformedRows(t *testing.T) {
	for _, raw := range []string{`{"nodes":[[1,2]]}`, `{"nodes":[[1`, `{"nodes":[{"line":1}]}`, `{"nodes":["x"]}`} {
		if _, err := rowsToRecords([]byte(raw)); err == nil {
			t.Errorf("%s: no error", raw)
		}
	}
	for _, raw := range []string{`{"warnings":[]}`, `{"nodes":[]}`, `{"nodes":[],"path":{"a":1}}`} {
		got, err := rowsToRecords([]byte(raw))
		if err != nil || string(got) != raw {
			t.Errorf("%s: %s %v, want it unchanged", raw, got, err)
		}
	}
}
