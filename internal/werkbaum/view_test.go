package werkbaum

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dop251/goja"
)

// viewTestPlans are the plans the view's tests compare on: small plans with non-ASCII
// names, escapes, warnings and every kind of field, generated plans, every shared example
// and every case plan of testdata/cases.
func viewTestPlans(t *testing.T) []string {
	t.Helper()
	texts := []string{smallPlan, "", "%% only a comment\n", bigPlan(300, 3), coupledPlan(5),
		"- [x] Ünïcödé \"q\" \\ #ü1 @jörg &über (M)\n  - Tab\there \u2028 x #t\n---\n#ü1\n  Desc \"q\" \u0001 \\n\n",
		"- [=] held #h :#d\n- [ ] dep #d (XXL) https://x.example/a?b=1&c=2 !!!\n  | a &taiga.x\n  | b #US-12\n",
		"[-] gone #g\n  - child (M)\n- [?] x\n  + [x] opt (S) @Müller\n"}
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
				texts = append(texts, strings.Join(c.Lines, "\n"))
			}
		}
	}
	if len(texts) < 60 {
		t.Fatalf("only %d plans", len(texts))
	}
	return texts
}

// TestHostRecordsEqualTheScriptsRecords: InspectJSON (the script's inspectParts plus the node
// records written in Go, view.go) answers byte for byte what the script's own inspect method
// writes, for every example, every case plan and generated plans, with subtree and include
// options.
func TestHostRecordsEqualTheScriptsRecords(t *testing.T) {
	ctx := context.Background()
	e := newTestEngine(t, Options{CacheEntries: -1})
	texts := viewTestPlans(t)
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
					ID      string   `json:"id,omitempty"`
					Include []string `json:"include,omitempty"`
				}{id, inc}
				want, err := e.call(ctx, "inspect", args, textArg{"text", text})
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

// TestHostRecordsRefuseMalformedParts: parts that do not have the shape view.go reads give an
// engine error, never a panic or a half-written view.
func TestHostRecordsRefuseMalformedParts(t *testing.T) {
	vm := goja.New()
	for _, src := range []string{
		`({json: '{"warnings":[]}', tree: true, lo: 0, hi: 0})`,
		`({json: '{"nodes":[]}', tree: true, lo: 0, hi: 1, all: [], m: {}, path: {}})`,
		`({json: '{"nodes":[]}', tree: true, lo: 0, hi: 1, all: [1], m: {inView: [true], eff: [0], assumed: [0], taiga: [null], ticket: [null]}, path: {inSet: [0], station: [0]}, rankKeys: ['a'], sizes: ['S']})`,
		`({json: '{"nodes":[]}', tree: true, lo: 0, hi: 1, all: [{line: 1, parent: 5}], m: {inView: [true], eff: [0], assumed: [0], taiga: [null], ticket: [null]}, path: {inSet: [0], station: [0]}, rankKeys: ['a'], sizes: ['S']})`,
		`({json: '{"nodes":[]}', tree: true, lo: 0, hi: 1, all: [{line: 1, parent: -1, status: {key: 'x', rank: 10}, tags: [], marks: [], deps: []}], m: {inView: [true], eff: [9], assumed: [0], taiga: [null], ticket: [null]}, path: {inSet: [0], station: [0]}, rankKeys: ['a'], sizes: ['S']})`,
		`({json: '{"nodes":[]}', tree: true, lo: 0, hi: 1, all: [{line: 1, parent: -1, deps: []}], m: {inView: [true], eff: [0], assumed: [0], taiga: [null], ticket: [null]}, path: {inSet: [0], station: [0]}, rankKeys: ['a'], sizes: ['S']})`,
	} {
		v, err := vm.RunString(src)
		if err != nil {
			t.Fatal(err)
		}
		for _, outlined := range []bool{false, true} {
			out, o, err := writeInspectParts(v.(*goja.Object), outlined)
			if !errors.Is(err, errParts) || o != nil {
				t.Errorf("%s (outlined %v): got %q, %v, %v; want errParts", src, outlined, out, o, err)
			}
		}
	}
	// The outline of parts whose values decoding the view would refuse.
	for _, src := range []string{
		`({json: '{"nodes":[]}', tree: true, lo: 0, hi: 1, all: [{line: 1, parent: -1, id: 7, tags: [], marks: [], deps: []}], m: {inView: [false], eff: [0], assumed: [0], taiga: [null], ticket: [null]}, path: {inSet: [0], station: [0]}, rankKeys: ['a'], sizes: ['S']})`,
		`({json: '{"nodes":[]}', tree: true, lo: 0, hi: 1, all: [{line: 1, parent: -1, depth: 0.5, tags: [], marks: [], deps: []}], m: {inView: [false], eff: [0], assumed: [0], taiga: [null], ticket: [null]}, path: {inSet: [0], station: [0]}, rankKeys: ['a'], sizes: ['S']})`,
		`({json: '{"nodes":[]}', tree: true, lo: 0, hi: 1, all: [{line: 1, parent: -1, tags: [1], marks: [], deps: []}], m: {inView: [false], eff: [0], assumed: [0], taiga: [null], ticket: [null]}, path: {inSet: [0], station: [0]}, rankKeys: ['a'], sizes: ['S']})`,
		`({json: '{"nodes":[],"warnings":{}}', tree: true, lo: 0, hi: 0, all: [], m: {inView: [], eff: [], assumed: [], taiga: [], ticket: []}, path: {inSet: [], station: []}, rankKeys: ['a'], sizes: ['S']})`,
	} {
		v, err := vm.RunString(src)
		if err != nil {
			t.Fatal(err)
		}
		if out, _, err := writeInspectParts(v.(*goja.Object), false); err != nil {
			t.Errorf("%s: the view alone failed: %v", src, err)
		} else if _, err := DecodeOutline(out); err == nil {
			t.Errorf("%s: the view %s decodes to an outline", src, out)
		}
		out, o, err := writeInspectParts(v.(*goja.Object), true)
		if !errors.Is(err, errParts) || o != nil {
			t.Errorf("%s (outlined): got %q, %v, %v; want errParts", src, out, o, err)
		}
	}
	// A view without the tree is the parts' JSON as it is.
	v, _ := vm.RunString(`({json: '{"warnings":[],"path":{"cost":1}}', tree: false})`)
	out, _, err := writeInspectParts(v.(*goja.Object), false)
	if err != nil || string(out) != `{"warnings":[],"path":{"cost":1}}` {
		t.Errorf("no tree: %s %v", out, err)
	}
}

// TestAppendJSONStringMatchesStringify: Go's quoting of view.go writes what JSON.stringify
// writes, for every ASCII character and some others.
func TestAppendJSONStringMatchesStringify(t *testing.T) {
	vm := goja.New()
	var b strings.Builder
	for c := 0; c < 128; c++ {
		b.WriteByte(byte(c))
	}
	for _, s := range []string{b.String(), "ü @jörg &über — \u2028\u2029 <>&", "", `"\`, "a\x7fb"} {
		vm.Set("s", s)
		want, err := vm.RunString(`JSON.stringify(s)`)
		if err != nil {
			t.Fatal(err)
		}
		if got := string(appendJSONString(nil, s)); got != want.String() {
			t.Errorf("%q: got %s, want %s", s, got, want)
		}
	}
}

// TestAppendJSNumberMatchesJavaScript: numbers are written as JSON.stringify writes them.
func TestAppendJSNumberMatchesJavaScript(t *testing.T) {
	vm := goja.New()
	for _, x := range []float64{0, 1, -1, 3, 0.5, 0.1, 1.0 / 3, 123456789012, 1e20, 1e21, 1.5e22, 1e-6, 1e-7, 2.5e-9, -4e-7, 1 << 53} {
		vm.Set("x", x)
		want, err := vm.RunString(`JSON.stringify(x)`)
		if err != nil {
			t.Fatal(err)
		}
		if got := string(appendJSNumber(nil, x)); got != want.String() {
			t.Errorf("%v: got %s, want %s", x, got, want)
		}
	}
}
