package main

import (
	"context"
	"fmt"
	"strings"
)

// planEditSpec is one node verb of talk plan beside set-status: its MCP tool, its positional
// arguments after KEY, and how its arguments and result read.
type planEditSpec struct {
	tool  string
	args  int    // positional arguments including KEY
	usage string // for the usage error
}

// planEdits are the node verbs of talk plan beside set-status, each the CLI of one MCP
// plan tool.
var planEdits = map[string]planEditSpec{
	"add":      {tool: "werkbaum_add_node", args: 3, usage: "KEY PARENT LINE (PARENT - for a new root) [--after ID]"},
	"move":     {tool: "werkbaum_move_node", args: 3, usage: "KEY ID PARENT (PARENT - for the top level) [--after ID]"},
	"remove":   {tool: "werkbaum_remove_node", args: 2, usage: "KEY ID [--discard]"},
	"set-size": {tool: "werkbaum_set_size", args: 3, usage: "KEY ID SIZE (SIZE - to remove it)"},
}

// nodeRef reads a node argument: an id with or without #, or - (or nothing) for none.
func nodeRef(s string) string {
	if s == "-" {
		return ""
	}
	return strings.TrimPrefix(s, "#")
}

// under names a parent for the output.
func under(parent string) string {
	if parent == "" {
		return "the top level"
	}
	return "#" + parent
}

func (a *app) planEdit(ctx context.Context, sub string, rest []string, after string, discard bool, g planWriteGuards) int {
	spec := planEdits[sub]
	key := rest[0]
	verb := map[string]any{}
	var done func(writeResult) string
	unchanged := func(wr writeResult, what string) string {
		if wr.Changed {
			return what
		}
		return "nothing changed"
	}
	switch sub {
	case "add":
		parent, line := nodeRef(rest[1]), rest[2]
		verb["parent"], verb["line"] = parent, line
		if after != "" {
			verb["after"] = after
		}
		done = func(wr writeResult) string {
			return unchanged(wr, fmt.Sprintf("added %q under %s", line, under(parent)))
		}
	case "move":
		id, parent := nodeRef(rest[1]), nodeRef(rest[2])
		verb["id"], verb["parent"] = id, parent
		if after != "" {
			verb["after"] = after
		}
		done = func(wr writeResult) string {
			return unchanged(wr, fmt.Sprintf("#%s moved under %s", id, under(parent)))
		}
	case "remove":
		id := nodeRef(rest[1])
		verb["id"], verb["discard"] = id, discard
		what := fmt.Sprintf("#%s deleted with its subtree", id)
		if discard {
			what = fmt.Sprintf("#%s discarded (marked [-])", id)
		}
		done = func(wr writeResult) string { return unchanged(wr, what) }
	case "set-size":
		id, size := nodeRef(rest[1]), rest[2]
		what := fmt.Sprintf("#%s size set to %s", id, size)
		if size == "-" || strings.EqualFold(size, "none") {
			verb["size"], what = nil, fmt.Sprintf("#%s size removed", id)
		} else {
			verb["size"] = size
		}
		verb["id"] = id
		done = func(wr writeResult) string { return unchanged(wr, what) }
	}
	return a.planWrite(ctx, key, spec.tool, verb, g, done)
}
