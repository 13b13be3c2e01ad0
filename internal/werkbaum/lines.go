package werkbaum

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/dop251/goja"
)

// The line rules of live documents (NOTATION.md §25, DOCUMENTS.md): the Go side of
// js/58_lines.js, the rules' source, which the browser's live client loads too. The LCS
// walk of the diff and the rebase with its conflict rule run in the scripts. The apply
// walk and the cheap steps of the diff (common prefix and suffix, one-sided middles, the
// cut-off) run here, because they are on every PATCH and feed answer and goja's string
// splitting alone costs more than the whole Go walk; the shared cases and the
// *MatchesScript tests hold the Go steps to the scripts' answers, errors included.

// Codes of the *InputError values the line rules return.
const (
	// CodeBadOps marks a malformed operation list: unknown op, negative index or count, a
	// missing count or lines, a line with a line break, unsorted or overlapping ops. A
	// document door answers it with 400.
	CodeBadOps = "badOps"
	// CodeOpOutOfRange marks a well-formed list that does not fit the base text (an op
	// reaching past the last line). A document door answers it with 422.
	CodeOpOutOfRange = "opOutOfRange"
)

// LineOp is one line operation of NOTATION §25 (DOCUMENTS.md LineOperation). Count is
// meaningless for insert, Lines for delete.
//
// Decoding is strict (UnmarshalJSON): an unknown op, a missing or fractional index, a
// missing count on delete/replace or missing lines on insert/replace fail with an
// *InputError of code CodeBadOps, so that "count absent" can never be read as "count 0".
// Encoding always writes all four fields, lines as [] rather than null.
type LineOp struct {
	Op    string   `json:"op"` // "insert" | "delete" | "replace"
	Index int      `json:"index"`
	Count int      `json:"count"`
	Lines []string `json:"lines"`
}

// removed is the number of base lines op takes away.
func (o LineOp) removed() int {
	if o.Op == "insert" {
		return 0
	}
	return o.Count
}

// lineOpJSON is LineOp's wire form without its methods (no recursion in Marshal/Unmarshal).
type lineOpJSON struct {
	Op    string   `json:"op"`
	Index int      `json:"index"`
	Count int      `json:"count"`
	Lines []string `json:"lines"`
}

// MarshalJSON writes every field; nil Lines become [] (a server that reads lines as a
// list must not see null).
func (o LineOp) MarshalJSON() ([]byte, error) {
	w := lineOpJSON(o)
	if w.Lines == nil {
		w.Lines = []string{}
	}
	return json.Marshal(w)
}

// UnmarshalJSON decodes one operation strictly (see LineOp).
func (o *LineOp) UnmarshalJSON(b []byte) error {
	var raw struct {
		Op    *string         `json:"op"`
		Index json.RawMessage `json:"index"`
		Count json.RawMessage `json:"count"`
		Lines json.RawMessage `json:"lines"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return &InputError{Code: CodeBadOps, Message: fmt.Sprintf("a line operation must be an object {op, index, count, lines}: %v", err)}
	}
	if raw.Op == nil {
		return &InputError{Code: CodeBadOps, Message: `a line operation has no "op" (insert, replace or delete)`}
	}
	op := *raw.Op
	if op != "insert" && op != "replace" && op != "delete" {
		return &InputError{Code: CodeBadOps, Message: fmt.Sprintf("op must be insert, replace or delete, not %q", op)}
	}
	var out LineOp
	out.Op = op
	if err := wholeNumber(raw.Index, &out.Index); err != nil {
		return &InputError{Code: CodeBadOps, Message: fmt.Sprintf("%s op: index %v", op, err)}
	}
	if op != "insert" {
		if err := wholeNumber(raw.Count, &out.Count); err != nil {
			return &InputError{Code: CodeBadOps, Message: fmt.Sprintf("%s op at index %d: count %v", op, out.Index, err)}
		}
	}
	if op != "delete" {
		if isAbsent(raw.Lines) {
			return &InputError{Code: CodeBadOps, Message: fmt.Sprintf("%s op at index %d has no lines (a list of strings)", op, out.Index)}
		}
		if err := json.Unmarshal(raw.Lines, &out.Lines); err != nil {
			return &InputError{Code: CodeBadOps, Message: fmt.Sprintf("%s op at index %d: lines must be a list of strings", op, out.Index)}
		}
		if out.Lines == nil {
			out.Lines = []string{}
		}
	}
	*o = out
	return nil
}

func isAbsent(raw json.RawMessage) bool {
	return len(raw) == 0 || bytes.Equal(bytes.TrimSpace(raw), []byte("null"))
}

// wholeNumber decodes a required JSON integer; the error completes "index …"/"count …".
func wholeNumber(raw json.RawMessage, dst *int) error {
	if isAbsent(raw) {
		return fmt.Errorf("is missing")
	}
	if err := json.Unmarshal(raw, dst); err != nil {
		return fmt.Errorf("must be a whole number, not %s", raw)
	}
	return nil
}

// NormalizeLineEndings turns CRLF, then every lone CR, into LF (NOTATION §25 normalise).
// Nothing else changes: a byte-order mark stays, trailing blanks and the final LF stay.
func NormalizeLineEndings(text string) string {
	if strings.IndexByte(text, '\r') < 0 {
		return text
	}
	return strings.ReplaceAll(strings.ReplaceAll(text, "\r\n", "\n"), "\r", "\n")
}

// DocumentChecksum is the checksum a ContentPatch carries: "sha256:" + lowercase hex of
// the SHA-256 of NormalizeLineEndings(text). It is NotationChecksum; the name says where
// the document doors use it.
func DocumentChecksum(text string) string {
	return NotationChecksum(text)
}

// ValidateLineOps checks an operation list without a base text: a known op, index and
// count ≥ 0, no line containing a line break, sorted by index and none starting inside the
// range of the one before (two inserts at one index are allowed). A failure is an
// *InputError of code CodeBadOps naming the op ("ops[2]: …"): a malformed request (400).
// The scripts' apply makes the same checks (js/58_lines.js validateOps) for hosts without
// this one; the shared cases in testdata/lines hold both to one answer.
func ValidateLineOps(ops []LineOp) error {
	return validateLineOps("ops", ops)
}

func validateLineOps(name string, ops []LineOp) error {
	cursor := 0
	for i, op := range ops {
		where := fmt.Sprintf("%s[%d]", name, i)
		if op.Op != "insert" && op.Op != "replace" && op.Op != "delete" {
			return &InputError{Code: CodeBadOps, Message: fmt.Sprintf("%s: op must be insert, replace or delete, not %q", where, op.Op)}
		}
		if op.Index < 0 {
			return &InputError{Code: CodeBadOps, Message: fmt.Sprintf("%s: index must be a whole number ≥ 0", where)}
		}
		if op.Op != "insert" && op.Count < 0 {
			return &InputError{Code: CodeBadOps, Message: fmt.Sprintf("%s (%s): count must be a whole number ≥ 0", where, op.Op)}
		}
		if op.Op != "delete" {
			for j, l := range op.Lines {
				if strings.ContainsAny(l, "\r\n") {
					return &InputError{Code: CodeBadOps, Message: fmt.Sprintf("%s: lines[%d] contains a line break; give one array entry per line", where, j)}
				}
			}
		}
		if op.Index < cursor {
			return &InputError{Code: CodeBadOps, Message: fmt.Sprintf("%s: ops must be sorted by index and must not overlap (index %d < %d)", where, op.Index, cursor)}
		}
		cursor = op.Index + op.removed()
	}
	return nil
}

// checkOpsInput checks the size and encoding of the lines an op list brings in.
func (e *Engine) checkOpsInput(name string, ops []LineOp) error {
	n := 0
	for i, op := range ops {
		if op.Op == "delete" {
			continue
		}
		for j, l := range op.Lines {
			n += len(l) + 1
			if err := checkUTF8(fmt.Sprintf("%s[%d] line %d", name, i, j), l); err != nil {
				return err
			}
		}
	}
	return e.checkSize("the lines of "+name, n)
}

// ApplyLines applies ops strictly to the normalised base and returns the new text (with
// LF line endings). A malformed list fails with CodeBadOps, one that does not fit the base
// with CodeOpOutOfRange, both as *InputError naming the op ("ops[2]: range 9…9 is outside
// the text (7 lines, indices 0…6)").
//
// The walk runs here in Go, not in the scripts: it is the simplest of the rules (copy,
// insert, skip) and it is on every PATCH, where goja's string splitting alone cost 0.6 ms
// on a 65 KB plan (ten times the whole Go walk). The script's applyOps (js/58_lines.js)
// stays the rule for the other hosts; the shared cases and TestApplyLinesMatchesScript
// hold both to one answer, errors included.
func (e *Engine) ApplyLines(ctx context.Context, base string, ops []LineOp) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", fmt.Errorf("werkbaum apply lines: %w", err)
	}
	if err := e.checkSize("base text", len(base)); err != nil {
		return "", err
	}
	if err := checkUTF8("the base text", base); err != nil {
		return "", err
	}
	if err := ValidateLineOps(ops); err != nil {
		return "", err
	}
	if err := e.checkOpsInput("ops", ops); err != nil {
		return "", err
	}
	return applyLineOps(NormalizeLineEndings(base), ops)
}

// applyLineOps is §25's strict apply over a normalised base whose ops ValidateLineOps
// accepted: a cursor walk that copies the base's lines between ops as whole substrings.
func applyLineOps(base string, ops []LineOp) (string, error) {
	sc := lineScanner{text: base}
	var out strings.Builder
	grow := len(base)
	for _, op := range ops {
		for _, l := range op.Lines {
			grow += len(l) + 1
		}
	}
	out.Grow(grow)
	first := true
	emit := func(s string) {
		if !first {
			out.WriteByte('\n')
		}
		first = false
		out.WriteString(s)
	}
	cursor := 0
	for i, op := range ops {
		end := op.Index + op.removed()
		from := sc.start(cursor)
		to := sc.start(op.Index)
		if to < 0 || sc.start(end) < 0 {
			n := strings.Count(base, "\n") + 1
			return "", &InputError{Code: CodeOpOutOfRange, Message: fmt.Sprintf(
				"ops[%d]: range %d…%d is outside the text (%d lines, indices 0…%d)", i, op.Index, end, n, n-1)}
		}
		if op.Index > cursor {
			emit(base[from : to-1])
		}
		if op.Op != "delete" {
			for _, l := range op.Lines {
				emit(l)
			}
		}
		cursor = end
	}
	if from := sc.start(cursor); from <= len(base) {
		emit(base[from:])
	}
	return out.String(), nil
}

// lineScanner finds where lines start in a text, moving forward only. Line k starts after
// the k-th LF; the line after the last one "starts" at len(text)+1, so that the lines
// [f, t) are always text[start(f) : start(t)-1].
type lineScanner struct {
	text string
	line int // the line whose start is off
	off  int
}

// start returns the offset at which line k starts (len(text)+1 for k == number of lines),
// or -1 when the text has fewer than k lines. k never decreases between calls.
func (s *lineScanner) start(k int) int {
	for s.line < k {
		if s.off > len(s.text) {
			return -1
		}
		i := strings.IndexByte(s.text[s.off:], '\n')
		if i < 0 {
			s.off = len(s.text) + 1
		} else {
			s.off += i + 1
		}
		s.line++
	}
	if s.off > len(s.text)+1 {
		return -1
	}
	return s.off
}

// DiffLines is computeOps of §25 on the normalised texts: ops that turn from into
// NormalizeLineEndings(to). Deterministic; above 1,000,000 compared line pairs it is one
// replace of the differing middle.
//
// The cheap steps of computeOps run here — strip the common prefix and suffix lines, one
// insert or delete when a side's middle is empty, the cut-off — and only the middle goes
// to the script's LCS walk (js/58_lines.js computeOps, which strips nothing more: the
// middles' first and last lines differ). A one-line change of a large plan therefore
// costs the script a two-line diff, not two splits of the whole text. The shared cases
// and TestDiffLinesMatchesScript hold the result to the script's computeOps on the whole
// texts.
func (e *Engine) DiffLines(ctx context.Context, from, to string) ([]LineOp, error) {
	if err := e.checkSize("old text", len(from)); err != nil {
		return nil, err
	}
	if err := e.checkSize("new text", len(to)); err != nil {
		return nil, err
	}
	if err := checkUTF8("the old text", from); err != nil {
		return nil, err
	}
	if err := checkUTF8("the new text", to); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("werkbaum diff lines: %w", err)
	}
	a := strings.Split(NormalizeLineEndings(from), "\n")
	b := strings.Split(NormalizeLineEndings(to), "\n")
	limit := min(len(a), len(b))
	p := 0
	for p < limit && a[p] == b[p] {
		p++
	}
	s := 0
	for s < limit-p && a[len(a)-1-s] == b[len(b)-1-s] {
		s++
	}
	midA, midB := a[p:len(a)-s], b[p:len(b)-s]
	n, m := len(midA), len(midB)
	switch {
	case n == 0 && m == 0:
		return []LineOp{}, nil
	case n == 0:
		return []LineOp{{Op: "insert", Index: p, Lines: slices.Clone(midB)}}, nil
	case m == 0:
		return []LineOp{{Op: "delete", Index: p, Count: n, Lines: []string{}}}, nil
	case n*m > lcsLimit:
		return []LineOp{{Op: "replace", Index: p, Count: n, Lines: slices.Clone(midB)}}, nil
	}
	var ops []LineOp
	_, err := e.runLines(ctx, "computeOps", struct{}{}, []textArg{{"from", strings.Join(midA, "\n")}, {"to", strings.Join(midB, "\n")}}, func(vm *goja.Runtime, res *goja.Object) error {
		var err error
		ops, err = readLineOps(vm, res.Get("ops"))
		return err
	})
	if err != nil {
		return nil, err
	}
	for i := range ops {
		ops[i].Index += p
	}
	return ops, nil
}

// lcsLimit is the cut-off of §25 (js/58_lines.js LCS_LIMIT): above this product of the
// middles' line counts the diff is one replace of the whole middle.
const lcsLimit = 1000000

// RebaseLines shifts ops, made on some base, over since, the ops applied to that base
// meanwhile (§25): ok is false when any op of ops conflicts with one of since, and then
// nothing is rebased. The rebased ops share their Lines with ops. Malformed lists fail
// with CodeBadOps naming "ops[i]" or "since[i]".
func (e *Engine) RebaseLines(ctx context.Context, ops, since []LineOp) (rebased []LineOp, ok bool, err error) {
	if err := validateLineOps("ops", ops); err != nil {
		return nil, false, err
	}
	if err := validateLineOps("since", since); err != nil {
		return nil, false, err
	}
	// The rebase needs only each op's place and how many lines it inserts: the lines go in
	// as empty strings (no text crosses into the script) and come back from ops.
	args := struct {
		Ops   []LineOp `json:"ops"`
		Since []LineOp `json:"since"`
	}{skeleton(ops), skeleton(since)}
	_, err = e.runLines(ctx, "rebase", args, nil, func(vm *goja.Runtime, res *goja.Object) error {
		ok = res.Get("ok").ToBoolean()
		if !ok {
			return nil
		}
		moved, err := readLineOps(vm, res.Get("ops"))
		if err != nil {
			return err
		}
		if len(moved) != len(ops) {
			return fmt.Errorf("rebase returned %d ops for %d", len(moved), len(ops))
		}
		rebased = make([]LineOp, len(ops))
		for i, m := range moved {
			rebased[i] = ops[i]
			rebased[i].Index = m.Index
		}
		return nil
	})
	if err != nil {
		return nil, false, err
	}
	return rebased, ok, nil
}

// skeleton copies ops with every line replaced by "" (same count).
func skeleton(ops []LineOp) []LineOp {
	out := make([]LineOp, len(ops))
	for i, op := range ops {
		out[i] = LineOp{Op: op.Op, Index: op.Index, Count: op.Count}
		if op.Op != "delete" {
			out[i].Lines = make([]string, len(op.Lines))
		}
	}
	return out
}

// runLines calls Werkbaum.doc._host(method, argsJSON, texts…) through the engine's call
// machinery (pool, deadline, input errors) and hands the answer object to read. The
// script returns a JSON string only for a failure, which run turns into *InputError.
func (e *Engine) runLines(ctx context.Context, method string, args any, texts []textArg, read func(*goja.Runtime, *goja.Object) error) (json.RawMessage, error) {
	return e.run(ctx, "doc."+method, args, texts, func(rt *jsRuntime, callArgs []goja.Value) ([]byte, error) {
		host, err := docHost(rt.vm)
		if err != nil {
			return nil, err
		}
		callArgs[0] = rt.vm.ToValue(method)
		res, err := host(goja.Undefined(), callArgs...)
		if err != nil {
			return nil, err
		}
		obj, isObj := res.(*goja.Object)
		if !isObj { // the JSON failure answer
			return []byte(res.String()), nil
		}
		if err := read(rt.vm, obj); err != nil {
			return nil, fmt.Errorf("%w: doc.%s: %v", ErrEngine, method, err)
		}
		return []byte("{}"), nil
	})
}

// docHost finds Werkbaum.doc._host in a runtime (a few property reads per call).
func docHost(vm *goja.Runtime) (goja.Callable, error) {
	ns := vm.Get("Werkbaum")
	if ns == nil || goja.IsUndefined(ns) {
		return nil, fmt.Errorf("%w: no Werkbaum namespace", ErrEngine)
	}
	doc := ns.ToObject(vm).Get("doc")
	if doc == nil || goja.IsUndefined(doc) {
		return nil, fmt.Errorf("%w: no Werkbaum.doc (js/58_lines.js not loaded)", ErrEngine)
	}
	fn, ok := goja.AssertFunction(doc.ToObject(vm).Get("_host"))
	if !ok {
		return nil, fmt.Errorf("%w: Werkbaum.doc._host is not a function", ErrEngine)
	}
	return fn, nil
}

// readLineOps reads the script's op array property by property (no JSON in between).
func readLineOps(vm *goja.Runtime, v goja.Value) ([]LineOp, error) {
	if v == nil || goja.IsUndefined(v) || goja.IsNull(v) {
		return nil, fmt.Errorf("no ops in the answer")
	}
	arr := v.ToObject(vm)
	n := int(arr.Get("length").ToInteger())
	ops := make([]LineOp, n)
	for i := range n {
		o := arr.Get(strconv.Itoa(i)).ToObject(vm)
		op := LineOp{
			Op:    o.Get("op").String(),
			Index: int(o.Get("index").ToInteger()),
		}
		if op.Op != "insert" {
			op.Count = int(o.Get("count").ToInteger())
		}
		if lv := o.Get("lines"); lv != nil && !goja.IsUndefined(lv) && !goja.IsNull(lv) {
			la := lv.ToObject(vm)
			m := int(la.Get("length").ToInteger())
			op.Lines = make([]string, m)
			for j := range m {
				op.Lines[j] = la.Get(strconv.Itoa(j)).String()
			}
		}
		if op.Lines == nil {
			op.Lines = []string{}
		}
		ops[i] = op
	}
	return ops, nil
}
