package werkbaum

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"talkd/internal/werkbaum/gctune"
	"talkd/internal/werkbaum/gen"
)

// plainGuardScript adds the method plainGuard: the guard with its status-edit count of
// nodes newly in production switched off (js/70_guard.js newlyProd), the plain path the
// write path's answer is compared with.
const plainGuardScript = `
Werkbaum.methods.plainGuard = function (a) {
  Werkbaum._guardBoxEdit(false);
  try {
    return Werkbaum.guard(a.old, a.new, { allowWarnings: !!a.allowWarnings, allowProd: !!a.allowProd });
  } finally {
    Werkbaum._guardBoxEdit(true);
  }
};`

// editPlans are the texts the equality test edits: the shared examples, generated plans,
// and texts with a byte-order mark, CRLF and CR endings, astral characters, nodes that
// share labels without ids, and no final line break.
func editPlans(t *testing.T) map[string]string {
	plans := map[string]string{
		"gen 1000":       gen.Plan(1000, 3),
		"gen 300":        gen.Plan(300, 8),
		"deep":           gen.Deep(200, 30, 2),
		"flat":           gen.Flat(200, 4),
		"small":          smallPlan,
		"same labels":    "- [^] x\n- [ ] x\n  - [ ] y\n  - [^] y\n- [ ] x\n- [ ] y #y1\n- [^] y #y1\n",
		"bom":            "\ufeff- [ ] A #a (S)\n  - [x] A1 (M) @jörg\n- [?] B #b\n",
		"no final break": "- [ ] A #a (S)\n  - [x] Müller (M)\n- [?] B 😀 #b",
		"astral":         "- [ ] 𝒜 #a\n  - [ ] 😀 child (S) @zoë\n  - [^] 😀 child (S)\n",
		"crlf":           "\ufeff- [ ] A #a (S)\r\n  - [x] A1 (M)\r\n- [?] B #b\r\n",
		"cr":             "- [ ] A #a\r  - [ ] A1\r- [ ] B\r",
	}
	dir := filepath.Join(sharedDir(t), "werkbaum", "examples")
	files, _ := filepath.Glob(filepath.Join(dir, "*.werkbaum"))
	if len(files) == 0 {
		t.Logf("no shared examples in %s; generated plans only", dir)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		plans[filepath.Base(f)] = string(b)
	}
	return plans
}

// TestEditEqualsApplyThenGuard: Edit (one call, one-row edits spliced by the host in Go,
// the guard's status-edit count of new [^] nodes) answers what Apply and then Guard with the
// plain count answer, on random verbs over many plans: the same new text byte for byte, the
// same verdict, the same failures.
func TestEditEqualsApplyThenGuard(t *testing.T) {
	e := newTestEngine(t, Options{Runtimes: 1, Timeout: time.Minute}, plainGuardScript)
	ctx := context.Background()
	statuses := []string{"done", "progress", "planned", "idea", "highrisk", "skeleton", "discarded", "prod", "prod", "neutral", "bogus"}
	sizes := []string{"XS", "S", "M", "L", "XL", "XXL", "", "huge"} // "": no size (nil)
	counts := map[string]int{}
	for name, text := range editPlans(t) {
		ins, err := e.Inspect(ctx, text, InspectOptions{Include: []string{"tree"}})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		rng := rand.New(rand.NewPCG(uint64(len(text)), 7))
		for k := 0; k < 40 && len(ins.Nodes) > 0; k++ {
			n := ins.Nodes[rng.IntN(len(ins.Nodes))]
			ref := fmt.Sprintf("line:%d", n.Line)
			var v Verb
			switch r := rng.IntN(20); {
			case r < 12:
				v = SetStatus{ID: ref, Status: statuses[rng.IntN(len(statuses))]}
			case r < 16:
				var size *string
				if s := sizes[rng.IntN(len(sizes))]; s != "" {
					size = &s
				}
				v = SetSize{ID: ref, Size: size}
			case r == 16:
				v = AddNode{Parent: ref, Line: "- [ ] added by the test (S) @jörg"}
			case r == 17:
				v = RemoveNode{ID: ref}
			case r == 18:
				v = Write{Text: strings.Replace(text, n.Label, n.Label+" edited", 1)}
			default:
				v = SetStatus{ID: "no-such-id", Status: "done"}
			}
			opts := GuardOptions{AllowWarnings: rng.IntN(4) == 0, AllowProd: rng.IntN(4) == 0}
			what := fmt.Sprintf("%s: %T %+v %+v", name, v, v, opts)

			got, gotErr := e.Edit(ctx, text, v, opts)
			want, wantErr := e.Apply(ctx, text, v)
			var verdict *GuardResult
			if wantErr == nil {
				raw, err := e.call(ctx, "plainGuard", opts, textArg{"old", text}, textArg{"new", want})
				if err != nil {
					t.Fatalf("%s: plain guard: %v", what, err)
				}
				if err := json.Unmarshal(raw, &verdict); err != nil {
					t.Fatal(err)
				}
			}
			if (gotErr != nil) != (wantErr != nil) || (gotErr != nil && gotErr.Error() != wantErr.Error()) {
				t.Fatalf("%s: Edit failed with %v, Apply with %v", what, gotErr, wantErr)
			}
			if gotErr != nil {
				if !errors.Is(gotErr, ErrBadInput) {
					t.Fatalf("%s: %v is not the caller's mistake", what, gotErr)
				}
				counts["refused by the verb"]++
				continue
			}
			if got.Text != want {
				t.Fatalf("%s: Edit's text differs from Apply's:\n%q\n%q", what, got.Text, want)
			}
			if !reflect.DeepEqual(got.Guard, verdict) {
				t.Fatalf("%s: Edit's verdict differs from Guard's:\n%+v\n%+v", what, got.Guard, verdict)
			}
			switch {
			case got.Text == text:
				counts["unchanged"]++
			case got.Guard.Refused != nil:
				counts["refused by "+got.Guard.Refused.Switch]++
			default:
				counts["applied"]++
			}
		}
	}
	t.Log(counts)
	if counts["applied"] < 300 || counts["refused by allowProd"] < 30 || counts["unchanged"] < 20 || counts["refused by the verb"] < 20 {
		t.Fatalf("too few edits of some kind: %v", counts)
	}
}

// TestSpliceRow: the rows spliceRow counts are the parser's (LF only, one leading BOM
// outside row 0), and a row past the end is an error, not a panic.
func TestSpliceRow(t *testing.T) {
	for _, c := range []struct {
		text    string
		row     int
		content string
		want    string
	}{
		{"a\nb\nc\n", 1, "B", "a\nB\nc\n"},
		{"a\nb\nc", 2, "C", "a\nb\nC"},
		{"a\nb\n", 2, "x", "a\nb\nx"},
		{"\ufeffa\nb", 0, "Ä", "\ufeffÄ\nb"},
		{"", 0, "x", "x"},
		{"jörg\n😀 Müller\n", 1, "zoë", "jörg\nzoë\n"},
	} {
		got, err := spliceRow(c.text, c.row, c.content)
		if err != nil || got != c.want {
			t.Errorf("spliceRow(%q, %d, %q) = %q, %v; want %q", c.text, c.row, c.content, got, err, c.want)
		}
	}
	if _, err := spliceRow("a\nb", 2, "x"); err == nil {
		t.Error("row 2 of a two-row text: no error")
	}
}

// BenchmarkGuardStatusEdit pays for the guard's status-edit count of nodes newly in
// production (js/70_guard.js newlyProd): the guard of a set_status on the 10,000-node plan
// whose analyses are remembered, so that what is left is the guard's own work; "plain" is
// the count over both documents.
//
//	go test ./internal/werkbaum -run '^$' -bench GuardStatusEdit -benchtime 200x
func BenchmarkGuardStatusEdit(b *testing.B) {
	e := newTestEngine(b, Options{Runtimes: 1}, plainGuardScript)
	ctx := context.Background()
	text := gen.Plan(10000, 1)
	next, err := e.Apply(ctx, text, SetStatus{ID: "area0", Status: "highrisk"})
	if err != nil {
		b.Fatal(err)
	}
	// Both texts' analyses are made once, before the timing.
	if _, err := e.Guard(ctx, text, next, GuardOptions{}); err != nil {
		b.Fatal(err)
	}
	for _, method := range []string{"guard", "plainGuard"} {
		name := map[string]string{"guard": "statusEdit", "plainGuard": "plain"}[method]
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				if _, err := e.call(ctx, method, GuardOptions{}, textArg{"old", text}, textArg{"new", next}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkEditStatus10k is the engine's part of a set_status on a 10,000-node plan (issue
// 33's write target): Edit of a status edit whose old text the daemon has analysed, each
// write on the text the last one made, with the daemon's collector settings. cpu-ms/op
// counts every thread (the collector's too).
//
//	WERKBAUM_JS_PROFILE=/tmp/x.prof go test -run '^$' -bench EditStatus10k -benchtime 40x ./internal/werkbaum
//	go tool pprof -top /tmp/x.prof
func BenchmarkEditStatus10k(b *testing.B) {
	stop := gctune.Apply(os.Getenv)
	defer stop()
	e, err := NewEngine(Options{Runtimes: 1})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	text := gen.Plan(10000, 1)
	ids := regexp.MustCompile(`#(t\d+)\b`).FindAllStringSubmatch(text, 400)
	if _, err := e.InspectJSON(ctx, text, InspectOptions{}); err != nil { // the daemon has analysed the old text
		b.Fatal(err)
	}
	sts := []string{"done", "progress", "planned"}
	b.ResetTimer()
	prof := startJSProfile(b)
	cpu0 := cpuNow()
	for i := 0; i < b.N; i++ {
		id := ids[(i*7)%len(ids)][1]
		ed, err := e.Edit(ctx, text, SetStatus{ID: id, Status: sts[i%3]}, GuardOptions{AllowProd: true, AllowWarnings: true})
		if err != nil {
			b.Fatal(err)
		}
		text = ed.Text
	}
	b.ReportMetric(float64(cpuNow()-cpu0)/float64(b.N)/1e6, "cpu-ms/op")
	prof()
}
