package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"talkd/internal/werkbaum/vocab"
)

func (a *app) planInspect(ctx context.Context, key, id string) int {
	args := map[string]any{"plan": key, "detail": "full"}
	if id != "" {
		args["id"] = id
	}
	res, err := a.callTool(ctx, "werkbaum_inspect", args)
	if err != nil {
		return a.failPlan(err)
	}
	if a.opts.json {
		a.printResult(res)
		return exitOK
	}
	var doc inspectDoc
	if err := json.Unmarshal(res.StructuredContent, &doc); err != nil {
		return a.fail(fmt.Errorf("werkbaum_inspect answered unexpected JSON: %w", err))
	}
	writeInspect(a.stdout, key, id, &doc)
	return exitOK
}

// box is the status box of an inspect status (an English key of NOTATION.md §9, from the
// notation's vocabulary); a key this talk does not know (a newer daemon) is shown as
// [key], no box as blanks.
func box(status *string) string {
	if status == nil || *status == "" {
		return "   "
	}
	if b, ok := vocab.Notation.Box(*status); ok {
		return b
	}
	return "[" + *status + "]"
}

// statusLegend lists each box with its key and German key: "[?] idea (idee), [ ] planned
// (geplant), …", wrapped for the help text.
func statusLegend(v vocab.Vocabulary) string {
	var b strings.Builder
	col := len("Status boxes: ")
	for i, st := range v.Statuses {
		item := "[" + st.Code + "] " + st.Key
		if st.German != st.Key {
			item += " (" + st.German + ")"
		}
		if i < len(v.Statuses)-1 {
			item += ","
		}
		if i > 0 {
			if col+1+len(item) > 90 {
				b.WriteString("\n  ")
				col = 2
			} else {
				b.WriteString(" ")
				col++
			}
		}
		b.WriteString(item)
		col += len(item)
	}
	return b.String()
}

// writeInspect renders the inspect view for people: the tree with statuses, the warnings
// with line numbers, the cheapest path's stations and loads.
func writeInspect(w io.Writer, key, id string, doc *inspectDoc) {
	title := "plan " + key
	if id != "" {
		title += ", subtree #" + id
	}
	fmt.Fprintf(w, "%s: revision %d, %s, %s\n", title, doc.Base.Revision, count(len(doc.Nodes), "node"), count(len(doc.Warnings), "warning"))
	byLine := map[int]node{}
	minDepth := -1
	for _, n := range doc.Nodes {
		byLine[n.Line] = n
		if minDepth < 0 || n.Depth < minDepth {
			minDepth = n.Depth
		}
	}
	if len(doc.Nodes) > 0 {
		fmt.Fprintln(w)
	}
	for _, n := range doc.Nodes {
		fmt.Fprintf(w, "%5d  %s%s\n", n.Line, strings.Repeat("  ", n.Depth-minDepth), nodeLine(n))
	}
	if len(doc.Warnings) > 0 {
		fmt.Fprintf(w, "\nwarnings:\n")
		for _, wa := range doc.Warnings {
			fmt.Fprintf(w, "  %s\n", wa)
		}
	}
	p := doc.Path
	if p == nil {
		return
	}
	kind := "exact"
	if !p.Exact {
		kind = "approximate"
	}
	fmt.Fprintf(w, "\ncheapest path (%s): cost %s, %s, %s\n", kind, num(p.Cost), count(len(p.Needed), "needed node"), count(len(p.Stations), "station"))
	for _, l := range p.Stations {
		if n, ok := byLine[l]; ok {
			fmt.Fprintf(w, "  station line %-4d %s\n", l, nodeLine(n))
		} else {
			fmt.Fprintf(w, "  station line %d\n", l)
		}
	}
	if len(p.AssigneeLoads) > 0 || p.UnassignedLoad > 0 {
		names := make([]string, 0, len(p.AssigneeLoads))
		for name := range p.AssigneeLoads {
			names = append(names, name)
		}
		sort.Slice(names, func(i, j int) bool {
			if p.AssigneeLoads[names[i]] != p.AssigneeLoads[names[j]] {
				return p.AssigneeLoads[names[i]] > p.AssigneeLoads[names[j]]
			}
			return names[i] < names[j]
		})
		var loads []string
		for _, name := range names {
			loads = append(loads, name+" "+num(p.AssigneeLoads[name]))
		}
		if p.UnassignedLoad > 0 {
			loads = append(loads, "unassigned "+num(p.UnassignedLoad))
		}
		fmt.Fprintf(w, "  loads: %s\n", strings.Join(loads, ", "))
	}
	if o := p.OverloadedAssignee; o != nil {
		fmt.Fprintf(w, "  overloaded: %s carries %d%% of the work (%d of %d stations)\n", o.Tag, o.Share, o.Stations, o.TotalStations)
	}
}

// nodeLine is one node: box, label, id, size, people, deps and markers.
func nodeLine(n node) string {
	var b strings.Builder
	b.WriteString(box(n.Status) + " " + n.Label)
	if n.ID != "" {
		b.WriteString("  #" + n.ID)
	}
	switch {
	case n.Size != nil && *n.Size != "":
		b.WriteString("  (" + *n.Size + ")")
	case n.AssumedSize != nil && *n.AssumedSize != "":
		b.WriteString("  (~" + *n.AssumedSize + ")")
	}
	for _, p := range n.People {
		b.WriteString(" @" + strings.TrimPrefix(p, "@"))
	}
	if len(n.Deps) > 0 {
		b.WriteString("  needs " + strings.Join(n.Deps, ", "))
	}
	var marks []string
	if n.EffectiveStatus != nil && *n.EffectiveStatus != "" && (n.Status == nil || *n.EffectiveStatus != *n.Status) {
		marks = append(marks, "effectively "+*n.EffectiveStatus)
	}
	if n.Optional {
		marks = append(marks, "optional")
	}
	if n.Gate == "or" || n.Gate == "xor" {
		marks = append(marks, n.Gate+"-alternative")
	}
	if n.Focus {
		marks = append(marks, "focus")
	}
	if n.Station {
		marks = append(marks, "station")
	}
	if n.InView != nil && !*n.InView {
		marks = append(marks, "under a discarded root")
	}
	if len(marks) > 0 {
		b.WriteString("  [" + strings.Join(marks, ", ") + "]")
	}
	return b.String()
}

// num prints a load or cost without noise: 13, 6.7.
func num(f float64) string {
	return strconv.FormatFloat(float64(int64(f*10+0.5))/10, 'f', -1, 64)
}
