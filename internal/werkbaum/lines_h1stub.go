package werkbaum

// TEMPORARY (h1): a Go stand-in for h0's line rules (lines.go) with the agreed
// signatures, so the document store builds and its tests run before h0's branch is
// merged. Removed in the merge of h0.

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
)

type LineOp struct {
	Op    string   `json:"op"`
	Index int      `json:"index"`
	Count int      `json:"count"`
	Lines []string `json:"lines"`
}

func NormalizeLineEndings(text string) string {
	return strings.ReplaceAll(strings.ReplaceAll(text, "\r\n", "\n"), "\r", "\n")
}

func DocumentChecksum(text string) string {
	h := sha256.Sum256([]byte(NormalizeLineEndings(text)))
	return "sha256:" + hex.EncodeToString(h[:])
}

func removed(op LineOp) int {
	if op.Op == "insert" {
		return 0
	}
	return op.Count
}

func ValidateLineOps(ops []LineOp) error {
	end := 0
	for i, op := range ops {
		switch op.Op {
		case "insert", "delete", "replace":
		default:
			return &InputError{Code: "badOps", Message: fmt.Sprintf("ops[%d]: unknown op %q", i, op.Op)}
		}
		if op.Index < 0 || op.Count < 0 {
			return &InputError{Code: "badOps", Message: fmt.Sprintf("ops[%d]: negative number", i)}
		}
		if op.Index < end {
			return &InputError{Code: "badOps", Message: fmt.Sprintf("ops[%d]: unsorted or overlapping", i)}
		}
		end = op.Index + removed(op)
	}
	return nil
}

func (e *Engine) ApplyLines(ctx context.Context, base string, ops []LineOp) (string, error) {
	if err := ValidateLineOps(ops); err != nil {
		return "", err
	}
	lines := strings.Split(NormalizeLineEndings(base), "\n")
	var out []string
	cur := 0
	for i, op := range ops {
		end := op.Index + removed(op)
		if end > len(lines) || op.Index > len(lines) {
			return "", &InputError{Code: "badOps", Message: fmt.Sprintf("ops[%d]: index %d is past the end (%d lines)", i, op.Index, len(lines))}
		}
		out = append(out, lines[cur:op.Index]...)
		if op.Op != "delete" {
			out = append(out, op.Lines...)
		}
		cur = end
	}
	out = append(out, lines[cur:]...)
	return strings.Join(out, "\n"), nil
}

func (e *Engine) DiffLines(ctx context.Context, from, to string) ([]LineOp, error) {
	a := strings.Split(NormalizeLineEndings(from), "\n")
	b := strings.Split(NormalizeLineEndings(to), "\n")
	p := 0
	for p < len(a) && p < len(b) && a[p] == b[p] {
		p++
	}
	sa, sb := len(a), len(b)
	for sa > p && sb > p && a[sa-1] == b[sb-1] {
		sa--
		sb--
	}
	ma, mb := a[p:sa], b[p:sb]
	if len(ma) == 0 && len(mb) == 0 {
		return []LineOp{}, nil
	}
	if len(ma) == 0 {
		return []LineOp{{Op: "insert", Index: p, Lines: mb}}, nil
	}
	if len(mb) == 0 {
		return []LineOp{{Op: "delete", Index: p, Count: len(ma)}}, nil
	}
	return []LineOp{{Op: "replace", Index: p, Count: len(ma), Lines: mb}}, nil
}

func (e *Engine) RebaseLines(ctx context.Context, ops, since []LineOp) ([]LineOp, bool, error) {
	conflict := func(x, y LineOp) bool {
		xs, xe := x.Index, x.Index+removed(x)
		ys, ye := y.Index, y.Index+removed(y)
		switch {
		case x.Op == "insert" && y.Op == "insert":
			return false
		case x.Op == "insert":
			return ys < xs && xs < ye
		case y.Op == "insert":
			return xs < ys && ys < xe
		}
		return xs < ye && ys < xe
	}
	out := make([]LineOp, 0, len(ops))
	for _, op := range ops {
		shift := 0
		for _, o := range since {
			if conflict(op, o) {
				return nil, false, nil
			}
			if o.Index+removed(o) <= op.Index && !(o.Op == "insert" && o.Index == op.Index && op.Op != "insert" && false) {
				shift += len(o.Lines)*boolInt(o.Op != "delete") - removed(o)
			}
		}
		n := op
		n.Index += shift
		out = append(out, n)
	}
	return out, true, nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
