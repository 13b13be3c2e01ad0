package test

import (
	"strings"
	"testing"
)

// bom is U+FEFF in UTF-8, the byte-order mark some editors put at the start of a file.
const bom = "\ufeff"

// bomPlan starts with a BOM directly before a node line with gate, box, size and ticket
// ref: read as text, the BOM would make that line a plain node "= [^] Login Import …"
// (issue 19).
const bomPlan = bom + `= [^] Login Import (XS) #US-241
  - [x] #p: Parser (XS) @jörg
= [ ] #ex: Export (M) @Müller
  " the file part
  - [ ] #f: Format (S)
`

// TestPlanBOMKept: a plan file that starts with a byte-order mark is read as the editor
// reads it (NOTATION.md §1: the BOM is dropped before anything else), and every write —
// node verbs, werkbaum_apply_ops and werkbaum_write, with or without a BOM in the lines
// given — leaves a file that starts with exactly one BOM and whose other lines are
// byte-identical. The base checksum stays the checksum of the file's bytes, BOM included.
func TestPlanBOMKept(t *testing.T) {
	t.Parallel()
	crlf := strings.ReplaceAll(bomPlan, "\n", "\r\n")
	d, paths := startPlanDaemon(t, planFile{Key: "bom", Text: bomPlan}, planFile{Key: "crlf", Text: crlf})
	c := newMCPClient(d)
	path := paths["bom"]

	var ins struct {
		Nodes    []map[string]any `json:"nodes"`
		Warnings []map[string]any `json:"warnings"`
	}
	c.ok(t, "werkbaum_inspect", map[string]any{"plan": "bom", "detail": "full"}, &ins)
	if len(ins.Nodes) != 4 {
		t.Fatalf("inspect: %d nodes, want 4: %v", len(ins.Nodes), ins.Nodes)
	}
	first := ins.Nodes[0]
	if first["line"] != float64(1) || first["label"] != "Login Import" || first["gate"] != "xor" ||
		first["status"] != "prod" || first["size"] != "XS" || first["ticketRef"] != "US-241" {
		t.Fatalf("the node after the BOM is misread: %v", first)
	}
	if p := ins.Nodes[1]; p["id"] != "p" || p["parentLine"] != float64(1) || !strings.Contains(strings.Join(anyStrings(p["people"]), ","), "jörg") {
		t.Fatalf("node p: %v", p)
	}
	if len(ins.Warnings) != 0 {
		t.Fatalf("warnings of the BOM plan: %v", ins.Warnings)
	}

	// Each step names the tool, its arguments (given the current text) and the whole file
	// it must leave: untouched lines keep their bytes, and the one BOM stays at the start.
	steps := []struct {
		name, tool string
		args       func(cur string) map[string]any
		want       string
	}{
		{"set_status of another node", "werkbaum_set_status",
			func(string) map[string]any { return map[string]any{"id": "ex", "status": "progress"} },
			bom + `= [^] Login Import (XS) #US-241
  - [x] #p: Parser (XS) @jörg
= [~] #ex: Export (M) @Müller
  " the file part
  - [ ] #f: Format (S)
`},
		{"set_size of the node after the BOM", "werkbaum_set_size",
			func(string) map[string]any { return map[string]any{"id": "US-241", "size": "S"} },
			bom + `= [^] Login Import (S) #US-241
  - [x] #p: Parser (XS) @jörg
= [~] #ex: Export (M) @Müller
  " the file part
  - [ ] #f: Format (S)
`},
		{"add_node", "werkbaum_add_node",
			func(string) map[string]any { return map[string]any{"parent": "ex", "line": "- [ ] #g: Gzip (XS)"} },
			bom + `= [^] Login Import (S) #US-241
  - [x] #p: Parser (XS) @jörg
= [~] #ex: Export (M) @Müller
  " the file part
  - [ ] #f: Format (S)
  - [ ] #g: Gzip (XS)
`},
		{"move_node of the first root", "werkbaum_move_node",
			func(string) map[string]any { return map[string]any{"id": "US-241", "after": "ex"} },
			bom + `= [~] #ex: Export (M) @Müller
  " the file part
  - [ ] #f: Format (S)
  - [ ] #g: Gzip (XS)
= [^] Login Import (S) #US-241
  - [x] #p: Parser (XS) @jörg
`},
		{"remove_node", "werkbaum_remove_node",
			func(string) map[string]any { return map[string]any{"id": "g", "discard": false} },
			bom + `= [~] #ex: Export (M) @Müller
  " the file part
  - [ ] #f: Format (S)
= [^] Login Import (S) #US-241
  - [x] #p: Parser (XS) @jörg
`},
		// A client that splits werkbaum_read's text gets line 1 with the BOM: replacing it
		// must not double the mark.
		{"apply_ops replacing line 1 as read (with its BOM)", "werkbaum_apply_ops",
			func(cur string) map[string]any {
				line1 := strings.SplitN(cur, "\n", 2)[0]
				return map[string]any{"ops": []map[string]any{{"op": "replace", "index": 0, "count": 1,
					"lines": []string{strings.Replace(line1, "(M)", "(L)", 1)}}}}
			},
			bom + `= [~] #ex: Export (L) @Müller
  " the file part
  - [ ] #f: Format (S)
= [^] Login Import (S) #US-241
  - [x] #p: Parser (XS) @jörg
`},
		{"apply_ops inserting before line 1", "werkbaum_apply_ops",
			func(string) map[string]any {
				return map[string]any{"ops": []map[string]any{{"op": "insert", "index": 0, "lines": []string{"%% exported"}}}}
			},
			bom + `%% exported
= [~] #ex: Export (L) @Müller
  " the file part
  - [ ] #f: Format (S)
= [^] Login Import (S) #US-241
  - [x] #p: Parser (XS) @jörg
`},
		// werkbaum_write with a text lacking the BOM keeps the file's BOM (README).
		{"write without a BOM", "werkbaum_write",
			func(cur string) map[string]any {
				return map[string]any{"text": strings.Replace(strings.TrimPrefix(cur, bom), "[ ] #f", "[x] #f", 1)}
			},
			bom + `%% exported
= [~] #ex: Export (L) @Müller
  " the file part
  - [x] #f: Format (S)
= [^] Login Import (S) #US-241
  - [x] #p: Parser (XS) @jörg
`},
		{"write with a BOM", "werkbaum_write",
			func(cur string) map[string]any {
				return map[string]any{"text": strings.Replace(cur, "%% exported", "%% exported by the editor", 1)}
			},
			bom + `%% exported by the editor
= [~] #ex: Export (L) @Müller
  " the file part
  - [x] #f: Format (S)
= [^] Login Import (S) #US-241
  - [x] #p: Parser (XS) @jörg
`},
	}
	for i, s := range steps {
		r := c.read(t, "bom")
		if !strings.HasPrefix(r.Text, bom) {
			t.Fatalf("step %d (%s): werkbaum_read lost the BOM: %q", i, s.name, r.Text)
		}
		if r.Base.Checksum != sha(readFile(t, path)) {
			t.Fatalf("step %d (%s): base checksum %s is not the file's bytes' %s", i, s.name, r.Base.Checksum, sha(readFile(t, path)))
		}
		var w writeAnswer
		c.ok(t, s.tool, writeArgs("bom", r.Base, "bom-"+s.tool+"-"+string(rune('a'+i)), s.args(r.Text)), &w)
		got := string(readFile(t, path))
		if got != s.want {
			t.Fatalf("step %d (%s): file\n%q\nwant\n%q", i, s.name, got, s.want)
		}
		if strings.HasPrefix(got, bom+bom) || strings.Count(got, bom) != 1 {
			t.Fatalf("step %d (%s): %d BOMs in the file", i, s.name, strings.Count(got, bom))
		}
		if !w.Changed || w.Base.Checksum != sha([]byte(got)) {
			t.Fatalf("step %d (%s): answer %+v, want changed and the file's checksum %s", i, s.name, w, sha([]byte(got)))
		}
	}

	// BOM and CRLF together: a node verb on line 1 and a write without the BOM keep the
	// mark and every line ending.
	r := c.read(t, "crlf")
	c.ok(t, "werkbaum_set_status", writeArgs("crlf", r.Base, "crlf-1", map[string]any{"id": "US-241", "status": "done"}), nil)
	want := strings.Replace(crlf, "= [^] Login", "= [x] Login", 1)
	if got := string(readFile(t, paths["crlf"])); got != want {
		t.Fatalf("BOM + CRLF after set_status: file\n%q\nwant\n%q", got, want)
	}
	r = c.read(t, "crlf")
	c.ok(t, "werkbaum_write", writeArgs("crlf", r.Base, "crlf-2", map[string]any{"text": strings.Replace(strings.TrimPrefix(r.Text, bom), "[ ] #f", "[~] #f", 1)}), nil)
	want = strings.Replace(want, "[ ] #f", "[~] #f", 1)
	if got := string(readFile(t, paths["crlf"])); got != want {
		t.Fatalf("BOM + CRLF after write: file\n%q\nwant\n%q", got, want)
	}
}

// TestDocumentPatchKeepsOneBOM is issue 34's seventh point: an editor's PATCH whose new
// line 0 starts with U+FEFF, on a plan file that has a BOM, leaves a file with exactly one
// BOM (the document's content leaves the file's BOM out, and the write puts it back); the
// document reads without a BOM, and a PATCH of line 0 without one keeps the file's.
func TestDocumentPatchKeepsOneBOM(t *testing.T) {
	t.Parallel()
	d, paths := startPlanDaemon(t, planFile{Key: "bom", Text: bomPlan})
	docPath := docPathOf(t, d, newMCPClient(d), "bom")
	c := newDocHTTP(d, nil)
	ed := newDocEditor(c, docPath, "editor-bom", "Jörg")
	ctx := t.Context()
	for i, line := range []string{bom + "= [^] Login Import (S) #US-241", "= [^] Login Import (M) #US-241", bom + bom + "= [^] Login Import (L) #US-241"} {
		if err := ed.load(ctx); err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(ed.shadow, bom) {
			t.Fatalf("step %d: the document's content starts with a BOM: %q", i, ed.shadow[:12])
		}
		a, err := ed.patch(ctx, []docOp{{Op: "replace", Index: 0, Count: 1, Lines: []string{line}}}, false)
		if err != nil || a.Status != 200 {
			t.Fatalf("step %d: PATCH: %v %s", i, err, a)
		}
		got := string(readFile(t, paths["bom"]))
		// One BOM is dropped from the line given: a line with two keeps its second (text
		// the editor typed), and the file's own BOM stays in front.
		want := bom + strings.TrimPrefix(line, bom) + strings.TrimPrefix(bomPlan, bom+"= [^] Login Import (XS) #US-241")
		if got != want {
			t.Errorf("step %d: the file reads %q…, want %q…", i, got[:min(len(got), 40)], want[:min(len(want), 40)])
		}
	}
}
