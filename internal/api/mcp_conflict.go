package api

import (
	"context"
	"fmt"
	"strings"

	"talkd/internal/werkbaum"
	"talkd/internal/werkbaum/plans"
)

// A conflict used to carry the whole current text: 67,243 characters for one changed line
// of the example plan, which Claude Code cut at 10,040 characters without a marker, so
// the model saw neither the new base's meaning nor the change. It now carries the change
// since the writer's base (line operations, as werkbaum_apply_ops takes them) and the new
// base, and the text only when that is small or the change is unknown.

const (
	// conflictTextMax is the largest current text a conflict carries beside the change.
	conflictTextMax = 3000
	// conflictChangesMax bounds the characters of the changes a conflict lists.
	conflictChangesMax = 4000
)

// conflictFailure is the tool failure of a write whose base is behind the plan.
func (pt planTools) conflictFailure(ctx context.Context, plan string, base plans.Base, c *plans.ConflictError) *ToolError {
	cur := c.Current
	e := &ToolError{Error: "conflict", Conflict: true, Base: &cur.Base}
	ops, kept, err := pt.p.ChangesSince(ctx, plan, base, cur)
	if err != nil {
		pt.s.log.Info("conflict: the change since the writer's base is unknown", "plan", plan, "revision", base.Revision, "err", err)
		kept = false
	}
	var b strings.Builder
	fmt.Fprintf(&b, "conflict: the plan changed since your base (revision %d); its base is now {\"revision\":%d,\"checksum\":\"%s\"}.",
		base.Revision, cur.Base.Revision, cur.Base.Checksum)
	if kept {
		size := 0
		for i, op := range ops {
			n := len(op.Op) + 32
			for _, l := range op.Lines {
				n += len(l) + 4
			}
			if size+n > conflictChangesMax && i > 0 {
				e.MoreChanges = len(ops) - i
				break
			}
			size += n
			e.Changes = append(e.Changes, op)
		}
		fmt.Fprintf(&b, " Changed since your base: %s.", describeOps(ops))
	}
	switch {
	case len(cur.Text) <= conflictTextMax:
		text := cur.Text
		e.Text = &text
		b.WriteString(" The current text is in text.")
	case !kept || e.MoreChanges > 0:
		b.WriteString(" Read the plan again (werkbaum_read) to see the current text.")
	}
	b.WriteString(" Redo your change on the new base under a new request_id.")
	e.Message = b.String()
	return e
}

// describeOps names the changed lines of ops (1-based, in the writer's base text).
func describeOps(ops []werkbaum.LineOp) string {
	if len(ops) == 0 {
		return "no line (the file's bytes changed, not its lines)"
	}
	var parts []string
	for i, op := range ops {
		if i == 6 {
			parts = append(parts, fmt.Sprintf("and %d more", len(ops)-i))
			break
		}
		from, to := op.Index+1, op.Index+op.Count
		where := fmt.Sprintf("line %d", from)
		if to > from {
			where = fmt.Sprintf("lines %d-%d", from, to)
		}
		switch op.Op {
		case "insert":
			parts = append(parts, fmt.Sprintf("%d lines inserted before line %d", len(op.Lines), from))
		case "delete":
			parts = append(parts, where+" deleted")
		default:
			if len(op.Lines) == 1 && op.Count == 1 {
				parts = append(parts, fmt.Sprintf("line %d is now %q", from, truncate(op.Lines[0], 120)))
			} else {
				parts = append(parts, fmt.Sprintf("%s replaced by %d lines", where, len(op.Lines)))
			}
		}
	}
	return strings.Join(parts, "; ")
}
