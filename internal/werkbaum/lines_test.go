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
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/dop251/goja"
)

// lineCases is testdata/lines/cases.json, shared with js/test/lines.test.js.
type lineCases struct {
	Normalize []struct {
		Name, Text, Normalized, Checksum string
		Lines                            []string
	}
	Apply []struct {
		Name  string
		Base  string
		Ops   json.RawMessage
		Want  *string
		Error string
	}
	Diff []struct {
		Name        string
		From, To    json.RawMessage
		Want        []LineOp
		WantSummary []struct {
			Op           string
			Index, Count int
			Lines        int
		}
	}
	Rebase []struct {
		Name     string
		Ops      []LineOp
		Since    []LineOp
		Want     []LineOp
		Conflict bool
	}
	Conflict []struct {
		Name string
		A, B []LineOp
		Want bool
	}
}

func loadLineCases(t *testing.T) lineCases {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "lines", "cases.json"))
	if err != nil {
		t.Fatal(err)
	}
	var c lineCases
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatalf("cases.json: %v", err)
	}
	return c
}

// caseText reads a case's text: a JSON string, or {gen: {n, prefix, at}} (n lines
// prefix+i, line i replaced by at[i], joined with LF).
func caseText(t *testing.T, raw json.RawMessage) string {
	t.Helper()
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var g struct {
		Gen struct {
			N      int
			Prefix string
			At     map[string]string
		}
	}
	if err := json.Unmarshal(raw, &g); err != nil || g.Gen.N == 0 {
		t.Fatalf("case text %s: neither a string nor a gen spec", raw)
	}
	ls := make([]string, g.Gen.N)
	for i := range ls {
		ls[i] = g.Gen.Prefix + strconv.Itoa(i)
		if v, ok := g.Gen.At[strconv.Itoa(i)]; ok {
			ls[i] = v
		}
	}
	return strings.Join(ls, "\n")
}

func newLineEngine(t testing.TB) *Engine {
	t.Helper()
	e, err := NewEngine(Options{})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func inputCode(err error) string {
	var ie *InputError
	if errors.As(err, &ie) {
		return ie.Code
	}
	if err == nil {
		return ""
	}
	return "not an input error: " + err.Error()
}

func TestLineCasesNormalize(t *testing.T) {
	c := loadLineCases(t)
	if len(c.Normalize) < 5 {
		t.Fatalf("only %d normalize cases", len(c.Normalize))
	}
	for _, n := range c.Normalize {
		if got := NormalizeLineEndings(n.Text); got != n.Normalized {
			t.Errorf("%s: NormalizeLineEndings = %q, want %q", n.Name, got, n.Normalized)
		}
		if got := DocumentChecksum(n.Text); got != n.Checksum {
			t.Errorf("%s: DocumentChecksum = %s, want %s", n.Name, got, n.Checksum)
		}
		if got := strings.Split(NormalizeLineEndings(n.Text), "\n"); !reflect.DeepEqual(got, n.Lines) {
			t.Errorf("%s: lines %q, want %q", n.Name, got, n.Lines)
		}
	}
}

func TestLineCasesApply(t *testing.T) {
	e := newLineEngine(t)
	ctx := context.Background()
	c := loadLineCases(t)
	if len(c.Apply) < 20 {
		t.Fatalf("only %d apply cases", len(c.Apply))
	}
	for _, a := range c.Apply {
		var ops []LineOp
		err := json.Unmarshal(a.Ops, &ops)
		var got string
		if err == nil {
			got, err = e.ApplyLines(ctx, a.Base, ops)
		}
		if a.Error != "" {
			if code := inputCode(err); code != a.Error {
				t.Errorf("%s: error code %q (%v), want %q", a.Name, code, err, a.Error)
			} else if !strings.Contains(err.Error(), "ops[") && !strings.Contains(err.Error(), " op") {
				t.Errorf("%s: error %q does not name the op", a.Name, err)
			}
		} else if err != nil {
			t.Errorf("%s: %v", a.Name, err)
		} else if got != *a.Want {
			t.Errorf("%s: got %q, want %q", a.Name, got, *a.Want)
		}
		// The script's own checks, without the Go host's decoding and ValidateLineOps in
		// front: a host that is not Go (the browser) relies on them.
		var args struct {
			Ops json.RawMessage `json:"ops"`
		}
		args.Ops = a.Ops
		var jsText string
		_, jsErr := e.runLines(ctx, "applyOps", args, []textArg{{"base", a.Base}}, func(_ *goja.Runtime, res *goja.Object) error {
			jsText = res.Get("text").String()
			return nil
		})
		if a.Error != "" {
			if code := inputCode(jsErr); code != a.Error {
				t.Errorf("%s: script error code %q (%v), want %q", a.Name, code, jsErr, a.Error)
			}
		} else if jsErr != nil || jsText != *a.Want {
			t.Errorf("%s: script got %q, %v", a.Name, jsText, jsErr)
		}
	}
}

func TestLineCasesDiff(t *testing.T) {
	e := newLineEngine(t)
	ctx := context.Background()
	c := loadLineCases(t)
	for _, d := range c.Diff {
		from, to := caseText(t, d.From), caseText(t, d.To)
		ops, err := e.DiffLines(ctx, from, to)
		if err != nil {
			t.Errorf("%s: %v", d.Name, err)
			continue
		}
		if d.WantSummary != nil {
			if len(ops) != len(d.WantSummary) {
				t.Errorf("%s: %d ops, want %d", d.Name, len(ops), len(d.WantSummary))
				continue
			}
			for i, w := range d.WantSummary {
				if o := ops[i]; o.Op != w.Op || o.Index != w.Index || o.Count != w.Count || len(o.Lines) != w.Lines {
					t.Errorf("%s: op %d is %s@%d count %d with %d lines, want %+v", d.Name, i, o.Op, o.Index, o.Count, len(o.Lines), w)
				}
			}
		} else if !sameOps(ops, d.Want) {
			t.Errorf("%s: got %+v, want %+v", d.Name, ops, d.Want)
		}
		got, err := e.ApplyLines(ctx, from, ops)
		if err != nil || got != NormalizeLineEndings(to) {
			t.Errorf("%s: apply(from, diff) = %q, %v", d.Name, got, err)
		}
	}
}

// sameOps compares op lists as the wire sees them (Count of an insert and Lines of a
// delete are meaningless).
func sameOps(a, b []LineOp) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		if x.Op != y.Op || x.Index != y.Index || x.removed() != y.removed() {
			return false
		}
		if x.Op != "delete" && !reflect.DeepEqual(append([]string{}, x.Lines...), append([]string{}, y.Lines...)) {
			return false
		}
	}
	return true
}

func TestLineCasesRebaseAndConflict(t *testing.T) {
	e := newLineEngine(t)
	ctx := context.Background()
	c := loadLineCases(t)
	for _, r := range c.Rebase {
		got, ok, err := e.RebaseLines(ctx, r.Ops, r.Since)
		switch {
		case err != nil:
			t.Errorf("%s: %v", r.Name, err)
		case r.Conflict && ok:
			t.Errorf("%s: rebased to %+v, want a conflict", r.Name, got)
		case !r.Conflict && !ok:
			t.Errorf("%s: conflict, want %+v", r.Name, r.Want)
		case !r.Conflict && !sameOps(got, r.Want):
			t.Errorf("%s: got %+v, want %+v", r.Name, got, r.Want)
		}
	}
	for _, k := range c.Conflict {
		for _, pair := range [][2][]LineOp{{k.A, k.B}, {k.B, k.A}} {
			_, ok, err := e.RebaseLines(ctx, pair[0], pair[1])
			if err != nil || ok == k.Want {
				t.Errorf("%s: rebase ok=%v err=%v, want conflict=%v", k.Name, ok, err, k.Want)
			}
		}
	}
}

func TestLineOpJSONIsStrict(t *testing.T) {
	for _, bad := range []string{
		`{"op":"delete","index":1}`,
		`{"op":"replace","index":1,"count":null,"lines":["x"]}`,
		`{"op":"insert","index":1}`,
		`{"op":"insert","lines":["x"]}`,
		`{"op":"insert","index":"1","lines":["x"]}`,
		`{"op":"move","index":1,"count":1}`,
		`{"index":1,"count":1}`,
		`[1]`,
	} {
		var op LineOp
		err := json.Unmarshal([]byte(bad), &op)
		if inputCode(err) != CodeBadOps {
			t.Errorf("%s: decoded to %+v, err %v; want a %s input error", bad, op, err, CodeBadOps)
		}
	}
	var ops []LineOp
	if err := json.Unmarshal([]byte(`[{"op":"insert","index":0,"lines":["@jörg"]},{"op":"delete","index":0,"count":2}]`), &ops); err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(ops)
	if err != nil {
		t.Fatal(err)
	}
	if want := `[{"op":"insert","index":0,"count":0,"lines":["@jörg"]},{"op":"delete","index":0,"count":2,"lines":[]}]`; string(b) != want {
		t.Errorf("marshal: %s, want %s", b, want)
	}
}

func TestValidateLineOpsNamesTheOp(t *testing.T) {
	err := ValidateLineOps([]LineOp{{Op: "insert", Index: 0, Lines: []string{"a"}}, {Op: "delete", Index: 4, Count: 2}, {Op: "replace", Index: 5, Count: 1, Lines: []string{"x"}}})
	if inputCode(err) != CodeBadOps || !strings.Contains(err.Error(), "ops[2]") {
		t.Fatalf("overlap: %v", err)
	}
	if err := ValidateLineOps([]LineOp{{Op: "insert", Index: 3, Lines: []string{"a"}}, {Op: "insert", Index: 3, Lines: []string{"b"}}}); err != nil {
		t.Fatalf("two inserts at one index: %v", err)
	}
	if err := ValidateLineOps([]LineOp{{Op: "delete", Index: 0, Count: -1}}); inputCode(err) != CodeBadOps || !strings.Contains(err.Error(), "ops[0]") {
		t.Fatalf("negative count: %v", err)
	}
}

// randomText makes a text of up to n lines from a small alphabet (so that lines repeat and
// the LCS has work to do), with LF, CRLF or lone CR breaks and sometimes a final break.
func randomText(r *rand.Rand, n int) string {
	words := []string{"- a", "- b", "  - [x] c @jörg", "- @Müller", "", "d", "- a"}
	breaks := []string{"\n", "\n", "\n", "\r\n", "\r"}
	var sb strings.Builder
	k := r.IntN(n + 1)
	for i := 0; i < k; i++ {
		if i > 0 {
			sb.WriteString(breaks[r.IntN(len(breaks))])
		}
		sb.WriteString(words[r.IntN(len(words))])
	}
	if r.IntN(3) == 0 {
		sb.WriteString("\n")
	}
	return sb.String()
}

func TestDiffLinesProperty(t *testing.T) {
	e := newLineEngine(t)
	ctx := context.Background()
	r := rand.New(rand.NewPCG(18, 25))
	for i := 0; i < 400; i++ {
		a, b := randomText(r, 12), randomText(r, 12)
		if i%3 == 0 { // b an edit of a: long common prefix and suffix
			b = strings.Replace(a, "- b", "- B", 1) + randomText(r, 2)
		}
		ops, err := e.DiffLines(ctx, a, b)
		if err != nil {
			t.Fatalf("diff %q %q: %v", a, b, err)
		}
		if err := ValidateLineOps(ops); err != nil {
			t.Fatalf("diff %q %q gave an invalid list %+v: %v", a, b, ops, err)
		}
		got, err := e.ApplyLines(ctx, a, ops)
		if err != nil || got != NormalizeLineEndings(b) {
			t.Fatalf("apply(%q, diff) = %q, %v; want %q (ops %+v)", a, got, err, NormalizeLineEndings(b), ops)
		}
		again, _ := e.DiffLines(ctx, a, b)
		if !reflect.DeepEqual(ops, again) {
			t.Fatalf("diff not deterministic: %+v then %+v", ops, again)
		}
	}
}

// randomOps makes a sorted, non-overlapping op list on a base of n lines.
func randomOps(r *rand.Rand, n int, tag string) []LineOp {
	var ops []LineOp
	cursor := 0
	for cursor <= n && r.IntN(3) != 0 {
		idx := cursor + r.IntN(n-cursor+1)
		switch kind := r.IntN(3); {
		case kind == 0:
			ops = append(ops, LineOp{Op: "insert", Index: idx, Lines: []string{tag + strconv.Itoa(len(ops)), "@jörg"}[:1+r.IntN(2)]})
			cursor = idx
		case idx < n:
			cnt := 1 + r.IntN(min(3, n-idx))
			if kind == 1 {
				ops = append(ops, LineOp{Op: "delete", Index: idx, Count: cnt})
			} else {
				ops = append(ops, LineOp{Op: "replace", Index: idx, Count: cnt, Lines: []string{tag + strconv.Itoa(len(ops))}})
			}
			cursor = idx + cnt
		default:
			return ops
		}
	}
	return ops
}

// overlapBrute is the §25 conflict rule written out case by case.
func overlapBrute(a, b []LineOp) bool {
	for _, x := range a {
		for _, y := range b {
			xs, xe, ys, ye := x.Index, x.Index+x.removed(), y.Index, y.Index+y.removed()
			switch {
			case xs == xe && ys == ye: // two points never conflict
			case xs == xe:
				if ys < xs && xs < ye {
					return true
				}
			case ys == ye:
				if xs < ys && ys < xe {
					return true
				}
			default:
				if xs < ye && ys < xe {
					return true
				}
			}
		}
	}
	return false
}

// pointTie reports two empty ranges (inserts) of both sides at one index: their order
// depends on which side came first, so the two rebase orders cannot agree there.
func pointTie(a, b []LineOp) bool {
	for _, x := range a {
		for _, y := range b {
			if x.removed() == 0 && y.removed() == 0 && x.Index == y.Index {
				return true
			}
		}
	}
	return false
}

// rowsAfter is the number of lines ops leave of n. Zero lines cannot be written: the empty
// text is one empty line (§25), so a side that deletes every line leaves a line the other
// side never saw, and the two orders differ by that line (both hosts still agree on each).
func rowsAfter(n int, ops []LineOp) int {
	for _, op := range ops {
		n += len(op.Lines) - op.removed()
	}
	return n
}

func TestRebaseLinesProperty(t *testing.T) {
	e := newLineEngine(t)
	ctx := context.Background()
	r := rand.New(rand.NewPCG(18, 1))
	checked, conflicts := 0, 0
	for i := 0; i < 1500; i++ {
		n := r.IntN(9)
		base := make([]string, n)
		for k := range base {
			base[k] = "l" + strconv.Itoa(k)
		}
		text := strings.Join(base, "\n")
		if n == 0 {
			text = ""
			n = 1 // the empty text is one empty line
		}
		A, B := randomOps(r, n, "A"), randomOps(r, n, "B")
		rb, ok, err := e.RebaseLines(ctx, B, A)
		if err != nil {
			t.Fatal(err)
		}
		ra, ok2, err := e.RebaseLines(ctx, A, B)
		if err != nil {
			t.Fatal(err)
		}
		if ok != ok2 || ok == overlapBrute(A, B) {
			t.Fatalf("A %+v B %+v: rebase ok %v/%v, brute-force conflict %v", A, B, ok, ok2, overlapBrute(A, B))
		}
		if !ok {
			conflicts++
			continue
		}
		if pointTie(A, B) || rowsAfter(n, A) == 0 || rowsAfter(n, B) == 0 {
			continue
		}
		withA, err := e.ApplyLines(ctx, text, A)
		if err != nil {
			t.Fatal(err)
		}
		withB, err := e.ApplyLines(ctx, text, B)
		if err != nil {
			t.Fatal(err)
		}
		ab, err1 := e.ApplyLines(ctx, withA, rb)
		ba, err2 := e.ApplyLines(ctx, withB, ra)
		if err1 != nil || err2 != nil || ab != ba {
			t.Fatalf("base %q A %+v B %+v: A then B' = %q (%v), B then A' = %q (%v)", text, A, B, ab, err1, ba, err2)
		}
		checked++
	}
	if checked < 300 || conflicts < 100 {
		t.Fatalf("weak generator: %d converging pairs checked, %d conflicts", checked, conflicts)
	}
	t.Logf("%d non-conflicting pairs converged, %d conflicts", checked, conflicts)
}

// TestLineRulesAt2MiB: texts at the engine's input limit work within the default
// deadline, through the cut-off too.
func TestLineRulesAt2MiB(t *testing.T) {
	e := newLineEngine(t)
	ctx := context.Background()
	var sb strings.Builder
	for i := 0; sb.Len() < DefaultMaxInputBytes-100; i++ {
		fmt.Fprintf(&sb, "- [ ] task %d @jörg (S)\n", i)
	}
	a := sb.String()
	lines := strings.Split(a, "\n")
	mid := len(lines) / 2
	b := strings.Replace(a, lines[mid]+"\n", "- [x] changed @Müller\n", 1)
	ops, err := e.DiffLines(ctx, a, b)
	if err != nil {
		t.Fatal(err)
	}
	if len(ops) != 1 || ops[0].Op != "replace" || ops[0].Index != mid || ops[0].Count != 1 {
		t.Fatalf("one changed line: %+v", ops)
	}
	got, err := e.ApplyLines(ctx, a, ops)
	if err != nil || got != b {
		t.Fatalf("apply one line: %v (equal %v)", err, got == b)
	}
	// Changes at both ends: the middle is the whole text, far past the cut-off.
	c := "first\n" + strings.Join(lines[1:len(lines)-2], "\n") + "\nlast\n"
	ops, err = e.DiffLines(ctx, a, c)
	if err != nil {
		t.Fatal(err)
	}
	if len(ops) != 1 || ops[0].Op != "replace" || ops[0].Index != 0 {
		t.Fatalf("cut-off: %d ops, first %s@%d", len(ops), ops[0].Op, ops[0].Index)
	}
	got, err = e.ApplyLines(ctx, a, ops)
	if err != nil || got != c {
		t.Fatalf("apply the cut-off replace: %v (equal %v)", err, got == c)
	}
}

// scriptApply runs the script's applyOps (js/58_lines.js) on the whole base.
func scriptApply(t *testing.T, e *Engine, base string, ops []LineOp) (string, error) {
	t.Helper()
	if ops == nil {
		ops = []LineOp{}
	}
	args := struct {
		Ops []LineOp `json:"ops"`
	}{ops}
	var text string
	_, err := e.runLines(context.Background(), "applyOps", args, []textArg{{"base", base}}, func(_ *goja.Runtime, res *goja.Object) error {
		text = res.Get("text").String()
		return nil
	})
	return text, err
}

// scriptDiff runs the script's computeOps on the whole texts.
func scriptDiff(t *testing.T, e *Engine, from, to string) []LineOp {
	t.Helper()
	var ops []LineOp
	_, err := e.runLines(context.Background(), "computeOps", struct{}{}, []textArg{{"from", from}, {"to", to}}, func(vm *goja.Runtime, res *goja.Object) error {
		var err error
		ops, err = readLineOps(vm, res.Get("ops"))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return ops
}

// TestApplyLinesMatchesScript: the Go walk of ApplyLines gives the script's answer —
// text, error code and message — on random bases and op lists, valid or not.
func TestApplyLinesMatchesScript(t *testing.T) {
	e := newLineEngine(t)
	ctx := context.Background()
	r := rand.New(rand.NewPCG(18, 7))
	bad := 0
	for i := 0; i < 600; i++ {
		base := randomText(r, 8)
		n := len(strings.Split(NormalizeLineEndings(base), "\n"))
		ops := randomOps(r, n, "x")
		if len(ops) > 0 && r.IntN(3) == 0 { // push one op past the end, or out of order
			k := r.IntN(len(ops))
			if r.IntN(2) == 0 {
				ops[k].Index += n + 1
			} else {
				ops[k].Index = max(0, ops[k].Index-2)
			}
		}
		got, err := e.ApplyLines(ctx, base, ops)
		want, jsErr := scriptApply(t, e, base, ops)
		if (err == nil) != (jsErr == nil) || (err != nil && err.Error() != jsErr.Error()) || got != want {
			t.Fatalf("base %q ops %+v: Go %q, %v; script %q, %v", base, ops, got, err, want, jsErr)
		}
		if err != nil {
			bad++
		}
	}
	if bad < 50 {
		t.Fatalf("only %d failing lists compared", bad)
	}
}

// TestDiffLinesMatchesScript: the Go steps of DiffLines (strip, one-sided middles, the
// cut-off) give the script's computeOps on the whole texts.
func TestDiffLinesMatchesScript(t *testing.T) {
	e := newLineEngine(t)
	ctx := context.Background()
	r := rand.New(rand.NewPCG(18, 9))
	for i := 0; i < 400; i++ {
		a, b := randomText(r, 10), randomText(r, 10)
		switch i % 4 {
		case 0:
			b = a + randomText(r, 2)
		case 1:
			b = randomText(r, 2) + a
		case 2:
			b = strings.Replace(a, "d", "e", 1)
		}
		got, err := e.DiffLines(ctx, a, b)
		if err != nil {
			t.Fatal(err)
		}
		if want := scriptDiff(t, e, a, b); !reflect.DeepEqual(got, want) {
			t.Fatalf("%q -> %q: Go %+v, script %+v", a, b, got, want)
		}
	}
}

// FuzzLineRules: for any two texts, DiffLines equals the script's computeOps on the whole
// texts and ApplyLines(a, DiffLines(a, b)) is b normalised. The seeds run in every
// go test; `go test -fuzz FuzzLineRules` searches further.
func FuzzLineRules(f *testing.F) {
	for _, s := range [][2]string{
		{"", ""}, {"a", ""}, {"", "a\n"}, {"a\r\nb", "a\nb\n"}, {"x\rx\r", "x\n\nx"},
		{"- @jörg\n- @Müller", "- @Müller\n- @jörg"}, {"a\nb\nc\nd", "a\nx\nc\ny"}, {"\n\n", "\n"},
	} {
		f.Add(s[0], s[1])
	}
	e := newLineEngine(f)
	f.Fuzz(func(t *testing.T, a, b string) {
		if !utf8.ValidString(a) || !utf8.ValidString(b) || len(a) > 4096 || len(b) > 4096 {
			t.Skip()
		}
		ctx := context.Background()
		ops, err := e.DiffLines(ctx, a, b)
		if err != nil {
			t.Fatal(err)
		}
		if want := scriptDiff(t, e, a, b); !reflect.DeepEqual(ops, want) {
			t.Fatalf("%q -> %q: Go %+v, script %+v", a, b, ops, want)
		}
		got, err := e.ApplyLines(ctx, a, ops)
		if err != nil || got != NormalizeLineEndings(b) {
			t.Fatalf("apply(%q, %+v) = %q, %v; want %q", a, ops, got, err, NormalizeLineEndings(b))
		}
	})
}
