package werkbaum

// TEMPORARY (branch h2): the shared design's line-op type of h0 (lines.go), so the
// document doors build before h0's line rules are merged. Deleted in the merge of h0.

import "fmt"

// LineOp is one line operation of NOTATION §25 (DOCUMENTS.md LineOperation).
type LineOp struct {
	Op    string   `json:"op"`
	Index int      `json:"index"`
	Count int      `json:"count"`
	Lines []string `json:"lines"`
}

// ValidateLineOps is a stand-in for h0's check: known op, no negative numbers, sorted,
// non-overlapping.
func ValidateLineOps(ops []LineOp) error {
	cursor := 0
	for i, op := range ops {
		removed := 0
		switch op.Op {
		case "insert":
		case "delete", "replace":
			removed = op.Count
		default:
			return &InputError{Code: "badOp", Message: fmt.Sprintf("ops[%d]: unknown op %q", i, op.Op)}
		}
		if op.Index < 0 || op.Count < 0 {
			return &InputError{Code: "badOp", Message: fmt.Sprintf("ops[%d]: negative number", i)}
		}
		if op.Index < cursor {
			return &InputError{Code: "badOp", Message: fmt.Sprintf("ops[%d]: unsorted or overlapping", i)}
		}
		cursor = op.Index + removed
	}
	return nil
}
