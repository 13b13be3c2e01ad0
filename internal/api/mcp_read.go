package api

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"talkd/internal/werkbaum/plans"
)

// werkbaum_read answers the base first and the text in pages a model can take in. Its
// text copy was the bare plan: the content-only hosts (Vercel's AI SDK, OpenAI's Agents
// SDK, Gemini CLI) hand their model only that, so the model had no base to write with;
// and Claude Code swapped the 65 KB example plan for a file and a 2 KB preview, with the
// base as the last key of the file (../shared/mcp/HOSTS.md). Now the text opens with the
// base, and a read without an end stops at about readBudget characters and names the line
// to go on from; a range (from, to) or a node's subtree (id) reads a part.

// readBudget bounds the plan text of a read that names no end: about 6,000 tokens, so the
// answer is neither cut nor swapped for a file by a host (Claude Code warns from 10,000).
const readBudget = 24000

type readIn struct {
	Plan string `json:"plan" desc:"plan key"`
	From int    `json:"from,omitempty" minimum:"1" desc:"first line (1-based)"`
	To   int    `json:"to,omitempty" minimum:"1" desc:"last line (default: a page)"`
	ID   string `json:"id,omitempty" desc:"a node id: its subtree's lines"`
}

// readOut is werkbaum_read's answer: the base first, then where the text stands in the
// plan. From 1 to Lines, Text is the whole plan exactly as stored.
type readOut struct {
	Base  plans.Base `json:"base"`
	Lines int        `json:"lines" desc:"lines of the whole plan"`
	From  int        `json:"from" desc:"first line of text"`
	To    int        `json:"to" desc:"last line of text (0 for an empty plan)"`
	Text  string     `json:"text" desc:"lines from to to, as stored"`
	More  string     `json:"more,omitempty" desc:"how to read the rest, when text is not the whole plan"`
}

// separatorLine is the notation's separator (NOTATION.md §2): a node's subtree never
// reaches past it.
var separatorLine = regexp.MustCompile(`^[ \t]*-{3,}[ \t]*(%%.*)?$`)

func (pt planTools) read(ctx context.Context, caller Caller, in readIn, _ json.RawMessage) (readOut, string, *ToolError) {
	if err := planArg(caller, pt.p, in.Plan, false); err != nil {
		return readOut{}, "", toolErrorOf(err)
	}
	out, terr := pt.readPage(ctx, in)
	if terr != nil {
		return readOut{}, "", terr
	}
	return out, readText(in.Plan, out), nil
}

// readPage is the part of the plan a read names (in: a page from a line, a range or a
// subtree), with the base; the caller has checked the plan's grant. The tool and the plan
// resource (werkbaum://plan/{key}) answer the same pages.
func (pt planTools) readPage(ctx context.Context, in readIn) (readOut, *ToolError) {
	if in.From < 0 || in.To < 0 || (in.To > 0 && in.From > in.To) {
		return readOut{}, toolErrorOf(fieldError("from", `fields "from" and "to" must be lines with from ≤ to`))
	}
	if in.ID != "" && (in.From > 0 || in.To > 0) {
		return readOut{}, toolErrorOf(fieldError("id", `field "id" reads a subtree: leave out "from" and "to"`))
	}
	snap, err := pt.p.Read(ctx, in.Plan)
	if err != nil {
		return readOut{}, planFailure(err)
	}
	lines := lineStarts(snap.Text)
	from, to := max(in.From, 1), in.To
	if in.ID != "" {
		id := strings.TrimPrefix(in.ID, "#")
		got, err := pt.p.Outline(ctx, in.Plan)
		if err != nil {
			return readOut{}, planFailure(err)
		}
		m := compactModelOf(got.Outline)
		if got.Base != snap.Base {
			// The plan changed between the two calls: the lines would not be the node's.
			return readOut{}, &ToolError{Error: "failed", Message: "the plan changed while it was read; read again"}
		}
		var ok bool
		if from, to, ok = m.subtreeLines(id, snap.Text, lines); !ok {
			return readOut{}, toolErrorOf(fieldError("id", fmt.Sprintf("no node has the id %q; werkbaum_inspect lists the ids", id)))
		}
	}
	out := readOut{Base: snap.Base, Lines: len(lines)}
	if len(lines) == 0 {
		out.Text = snap.Text
		return out, nil
	}
	if from > len(lines) {
		return readOut{}, toolErrorOf(fieldError("from", fmt.Sprintf("the plan has %d lines; from %d is past its end", len(lines), from)))
	}
	end := func(line int) int { // the byte offset after line (1-based), its newline included
		if line >= len(lines) {
			return len(snap.Text)
		}
		return lines[line]
	}
	if to == 0 {
		// As many whole lines as fit the budget, at least one.
		to = from
		for to < len(lines) && end(to+1)-lines[from-1] <= readBudget {
			to++
		}
	}
	to = min(to, len(lines))
	out.From, out.To, out.Text = from, to, snap.Text[lines[from-1]:end(to)]
	if to < len(lines) && in.ID == "" {
		out.More = fmt.Sprintf("lines %d to %d follow: call werkbaum_read with from %d", to+1, len(lines), to+1)
	}
	return out, nil
}

// readText is the read's text copy: the base and the place first, then the lines.
func readText(plan string, r readOut) string {
	var b strings.Builder
	b.Grow(len(r.Text) + 400)
	fmt.Fprintf(&b, "plan %s, base {\"revision\":%d,\"checksum\":\"%s\"} (pass it unchanged to a write)\n", plan, r.Base.Revision, r.Base.Checksum)
	switch {
	case r.Lines == 0:
		b.WriteString("the plan is empty\n")
	case r.From == 1 && r.To == r.Lines:
		fmt.Fprintf(&b, "the whole plan, %d lines:\n", r.Lines)
	default:
		fmt.Fprintf(&b, "lines %d to %d of %d:\n", r.From, r.To, r.Lines)
	}
	b.WriteString(r.Text)
	if r.More != "" {
		if !strings.HasSuffix(r.Text, "\n") {
			b.WriteByte('\n')
		}
		b.WriteString("more: " + r.More + "\n")
	}
	return b.String()
}

// lineStarts returns the byte offset of each physical line's start; a final newline
// starts no line (as an editor counts them).
func lineStarts(text string) []int {
	if text == "" {
		return nil
	}
	starts := []int{0}
	for i := 0; i < len(text)-1; i++ {
		if text[i] == '\n' {
			starts = append(starts, i+1)
		}
	}
	return starts
}

// subtreeLines is the line range of a node's subtree: its line to the line before the
// next node outside it, or, for the tree's last subtree, to the last line before the
// separator (trailing blank lines left out).
func (m *compactModel) subtreeLines(id, text string, starts []int) (from, to int, ok bool) {
	i, ok := m.index[id]
	if !ok {
		return 0, 0, false
	}
	from = m.nodes[i].Line
	if next := i + 1 + m.below[i]; next < len(m.nodes) {
		to = m.nodes[next].Line - 1
	} else {
		to = len(starts)
		for l := m.nodes[i+m.below[i]].Line + 1; l <= len(starts); l++ {
			line := text[starts[l-1]:]
			if nl := strings.IndexByte(line, '\n'); nl >= 0 {
				line = line[:nl]
			}
			if separatorLine.MatchString(strings.TrimRight(line, "\r")) {
				to = l - 1
				break
			}
		}
	}
	for to > from {
		line := text[starts[to-1]:]
		if nl := strings.IndexByte(line, '\n'); nl >= 0 {
			line = line[:nl]
		}
		if strings.TrimSpace(line) != "" {
			break
		}
		to--
	}
	return from, to, true
}
