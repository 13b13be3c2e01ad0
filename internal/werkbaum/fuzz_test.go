package werkbaum

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// Fuzz targets. Run them with
//
//	go test -run '^$' -fuzz FuzzInspect -fuzztime 5m -parallel 1 ./internal/werkbaum
//	go test -run '^$' -fuzz FuzzVerbs   -fuzztime 5m -parallel 1 ./internal/werkbaum
//
// New failing inputs land in testdata/fuzz/<target>/ and are replayed by plain go test.

var fuzzSeeds = []string{
	"",
	"\n",
	"%% only a comment\n",
	"[~] Shop #shop (XL)\n  - [x] Discovery #disc (M)\n    - [x] Interviews (S) @maria\n  - [ ] Checkout #co (L)\n    \" the money part\n    - [/] Cart #cart (M) @tom\n  - [?] Hosting #host\n",
	"R #r\n  - A #a \\\n      (S)\n    \" short\n    - A1\n  - B #b\n---\n#a\n  long\n\n  more\n#zz\n  hidden\n",
	"Ship (XS)\n  | A (XS) :#big\n  | B (S)\n  + #big: Big (L)\n",
	"[ ] Pick\n  = [ ] One\n  =two is a label\n  + [ ] Extra\n  | Other\n",
	"Root\r\n  - [y] unknown\r\n  - [X] upper #u\r\n  \\\r\n- Kind\r\n",
	"Plan\n  - [ ] Straße #über @jörg &größe\n  - [^] Zweite #zwei @Müller :#über\n",
	"- Long \\\n    title (S) \\\n  @eva\n- Path C:\\dir\\\n- Last \\\n",
	"\" orphan\n[ ] Node\n  \" first\n\n  \" second %% gone\n  - \" not a desc\n\"quoted label\n",
}

func addExampleSeeds(f *testing.F, add func(string)) {
	dir := filepath.Join(sharedDir(f), "werkbaum", "examples")
	names, _ := filepath.Glob(filepath.Join(dir, "example-*.werkbaum"))
	for _, n := range names {
		if b, err := os.ReadFile(n); err == nil {
			add(string(b))
		}
	}
}

func fuzzEngine(f *testing.F) *Engine {
	e, err := NewEngine(Options{Runtimes: 1, CacheEntries: -1, Timeout: 10 * time.Second})
	if err != nil {
		f.Fatal(err)
	}
	return e
}

// FuzzInspect: any text inspects without an engine failure, and the view is coherent.
func FuzzInspect(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	addExampleSeeds(f, func(s string) { f.Add(s) })
	e := fuzzEngine(f)
	f.Fuzz(func(t *testing.T, text string) {
		start := time.Now()
		in, err := e.Inspect(context.Background(), text, InspectOptions{})
		if took := time.Since(start); took > 3*time.Second {
			t.Fatalf("inspect of %d bytes took %v", len(text), took)
		}
		if errors.Is(err, ErrTooLarge) {
			return
		}
		if err != nil {
			t.Fatalf("inspect failed: %v", err)
		}
		prev := 0
		for _, n := range in.Nodes {
			if n.Line <= prev || n.ParentLine >= n.Line || n.Label == "" {
				t.Fatalf("incoherent node %+v after line %d", n, prev)
			}
			prev = n.Line
		}
		for _, w := range in.Warnings {
			if w.Type == "" || w.Text == "" {
				t.Fatalf("warning without type or text: %+v", w)
			}
		}
		if in.Path == nil {
			t.Fatal("no path")
		}
		// The records Go writes (view.go) are the script's own, byte for byte.
		want, err := e.call(context.Background(), "inspect", struct{}{}, textArg{"text", text})
		if err != nil {
			t.Fatalf("the script's inspect failed: %v", err)
		}
		if !bytes.Equal(in.JSON, want) {
			t.Fatalf("InspectJSON differs from the script's inspect:\n%s\n%s", in.JSON, want)
		}
	})
}

// parsedNode is the part of the parser's node record (js/10_parse.js) the fuzz checks use.
type parsedNode struct {
	Line         int          `json:"line"`
	Cont         []int        `json:"cont"`
	LastTreeLine int          `json:"lastTreeLine"`
	Index        int          `json:"index"`
	ID           *string      `json:"id"`
	Label        string       `json:"label"`
	Box          *string      `json:"box"`
	Size         *string      `json:"size"`
	Children     []parsedNode `json:"children"`
}

type parsedDoc struct {
	Roots      []parsedNode `json:"roots"`
	DescBlocks []struct {
		Node  int   `json:"node"`
		Lines []int `json:"lines"`
	} `json:"descBlocks"`
	all []*parsedNode
}

func parseDoc(t *testing.T, e *Engine, text string) *parsedDoc {
	t.Helper()
	raw, err := e.call(context.Background(), "parse", map[string]string{"text": text})
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	var d parsedDoc
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatalf("parse result: %v", err)
	}
	var walk func(ns []parsedNode)
	walk = func(ns []parsedNode) {
		for i := range ns {
			d.all = append(d.all, &ns[i])
			walk(ns[i].Children)
		}
	}
	walk(d.Roots)
	return &d
}

func subtreeLast(n *parsedNode) int {
	for len(n.Children) > 0 {
		n = &n.Children[len(n.Children)-1]
	}
	return n.Index
}

// ref addresses a node: its id when it is the first holder, else its line.
func (d *parsedDoc) ref(n *parsedNode) string {
	if n.ID != nil {
		for _, m := range d.all {
			if m.ID != nil && *m.ID == *n.ID {
				if m == n {
					return *n.ID
				}
				break
			}
		}
	}
	return "line:" + itoa(n.Line)
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }

var fuzzStatuses = []string{"done", "x", "progress", "prod", "^", "idea", "discarded", "neutral", " ", "highrisk", "geplant"}
var fuzzSizes = []string{"XS", "S", "M", "L", "XL", "XXL", ""}

// FuzzVerbs: every verb on any node of any text either fails with an input error or returns
// a text that parses, changes only the lines the verb owns (byte for byte, endings
// included) and has the node count the verb promises.
func FuzzVerbs(f *testing.F) {
	for i, s := range fuzzSeeds {
		for k := uint8(0); k < 7; k++ {
			f.Add(s, uint(i*3+int(k)), k, "- [ ] Added #new (S)")
		}
	}
	addExampleSeeds(f, func(s string) { f.Add(s, uint(17), uint8(3), "- x") })
	e := fuzzEngine(f)
	f.Fuzz(func(t *testing.T, text string, pick uint, kind uint8, arg string) {
		if len(text) > 64<<10 || len(arg) > 4<<10 {
			return
		}
		ctx := context.Background()
		if !utf8.ValidString(text) {
			// Edits refuse invalid UTF-8 instead of rewriting it as U+FFFD.
			_, err := e.Apply(ctx, text, SetStatus{ID: "x", Status: "x"})
			var ie *InputError
			if !errors.As(err, &ie) || ie.Code != "badEncoding" {
				t.Fatalf("invalid UTF-8 text: got %v, want badEncoding", err)
			}
			return
		}
		if !utf8.ValidString(arg) {
			arg = strings.ToValidUTF8(arg, "?")
		}
		d := parseDoc(t, e, text)
		kind %= 7
		if kind == 5 {
			fuzzApplyOps(t, e, text, pick, arg)
			return
		}
		if kind == 6 {
			fuzzWrite(t, e, text, arg)
			return
		}
		if len(d.all) == 0 {
			if _, err := e.Apply(ctx, text, AddNode{Line: arg}); err != nil && !errors.Is(err, ErrBadInput) {
				t.Fatalf("addNode on an empty plan: %v", err)
			}
			return
		}
		n := d.all[int(pick%uint(len(d.all)))]
		other := d.all[int((pick/7)%uint(len(d.all)))]
		ref := d.ref(n)
		sub := subtreeLast(n) - n.Index + 1
		lines := physicalLines(text)
		endsOpen := !endsWithBreak(text)
		var owns []int
		var verb Verb
		wantNodes := len(d.all)
		lastMoved := false // the verb moves or removes the text's last line
		block := func() {
			for l := n.Line; l <= n.LastTreeLine; l++ {
				owns = append(owns, l)
			}
			lastMoved = n.LastTreeLine == lines
			// When the block goes, a lone CR ending before it may meet an empty LF line
			// after it; the two would read as one CRLF break, so the line before the block
			// gets a CRLF ending instead (js/60_edit.js joinRows).
			if n.Line > 1 && strings.Contains(text, "\r") {
				owns = append(owns, n.Line-1)
			}
		}
		switch kind {
		case 0:
			verb = SetStatus{ID: ref, Status: fuzzStatuses[int(pick/3)%len(fuzzStatuses)]}
			owns = []int{n.Line}
		case 1:
			s := fuzzSizes[int(pick/3)%len(fuzzSizes)]
			var sp *string
			if s != "" {
				sp = &s
			}
			verb = SetSize{ID: ref, Size: sp}
			owns = append([]int{n.Line}, n.Cont...)
		case 2:
			verb = AddNode{Parent: ref, Line: arg}
			wantNodes++
		case 3:
			parent := d.ref(other)
			if other.Index >= n.Index && other.Index <= subtreeLast(n) {
				parent = "" // to the roots instead of under itself
			}
			verb = MoveNode{ID: ref, Parent: parent}
			block()
		case 4:
			discard := pick%2 == 0
			verb = RemoveNode{ID: ref, Discard: discard}
			if discard {
				owns = []int{n.Line}
			} else {
				block()
				for _, b := range d.DescBlocks {
					if b.Node >= n.Index && b.Node <= subtreeLast(n) {
						owns = append(owns, b.Lines...)
					}
				}
				wantNodes -= sub
			}
		}
		if endsOpen {
			owns = append(owns, lines) // the last line may gain a line ending
		}
		out, err := e.Apply(ctx, text, verb)
		if err != nil {
			var ie *InputError
			if !errors.As(err, &ie) {
				t.Fatalf("%#v: engine failure: %v", verb, err)
			}
			switch ie.Code {
			case "unsupportedLine", "badLine", "badStatus", "badSize":
				return
			}
			t.Fatalf("%#v: unexpected input error %s: %s", verb, ie.Code, ie.Message)
		}
		assertUntouchedEnd(t, "verb", text, out, owns, endsOpen)
		nd := parseDoc(t, e, out)
		if len(nd.all) != wantNodes {
			t.Fatalf("%#v: %d nodes after, want %d\nbefore %q\nafter  %q", verb, len(nd.all), wantNodes, text, out)
		}
		// The final line break is kept, except that deleting everything leaves "". A moved
		// line keeps its own ending, so a text may now end with a lone CR instead of a LF.
		// A blank last line without a final break is the same bytes as a final break, so a
		// text may seem to gain one when a move or delete leaves a blank line last (the one
		// before a moved last line, or a moved block's blank continuation line); a move
		// keeps every physical line instead, which is the stronger check.
		if kind == 3 {
			if physicalLines(out) != lines {
				t.Fatalf("%#v: %d physical lines after, want %d\nbefore %q\nafter  %q", verb, physicalLines(out), lines, text, out)
			}
		} else if endsWithBreak(out) != endsWithBreak(text) && text != "" && out != "" &&
			!(lastMoved && !endsWithBreak(text)) {
			t.Fatalf("%#v: final newline changed: %q → %q", verb, text, out)
		}
	})
}

// physicalLines counts the physical lines of text (LF, CRLF and a lone CR break, §25).
func physicalLines(text string) int {
	return strings.Count(text, "\n") + strings.Count(text, "\r") - strings.Count(text, "\r\n") + 1
}

// endsWithBreak reports whether text ends with a line break (LF, CRLF or a lone CR, §25).
func endsWithBreak(text string) bool {
	return strings.HasSuffix(text, "\n") || strings.HasSuffix(text, "\r")
}

func fuzzApplyOps(t *testing.T, e *Engine, text string, pick uint, arg string) {
	base := strings.Split(strings.NewReplacer("\r\n", "\n", "\r", "\n").Replace(text), "\n")
	idx := int(pick % uint(len(base)+1))
	cnt := int((pick / 5) % 3)
	if idx+cnt > len(base) {
		cnt = len(base) - idx
	}
	ins := strings.Split(strings.NewReplacer("\r", "", "\n", "\x00").Replace(arg), "\x00")
	op := Op{Op: "replace", Index: idx, Count: &cnt, Lines: ins}
	out, err := e.Apply(context.Background(), text, ApplyOps{Ops: []Op{op}})
	if err != nil {
		t.Fatalf("applyOps %+v: %v", op, err)
	}
	want := append(append(append([]string{}, base[:idx]...), ins...), base[idx+cnt:]...)
	got := strings.Split(strings.NewReplacer("\r\n", "\n", "\r", "\n").Replace(out), "\n")
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("applyOps %+v: got %q want %q", op, got, want)
	}
	var owns []int
	for l := idx + 1; l <= idx+cnt; l++ {
		owns = append(owns, l)
	}
	if idx > 0 {
		owns = append(owns, idx) // may become or stop being the last line
	}
	owns = append(owns, len(base))
	assertUntouched(t, "applyOps", text, out, owns)
}

func fuzzWrite(t *testing.T, e *Engine, text, newText string) {
	out, err := e.Apply(context.Background(), text, Write{Text: newText})
	if err != nil {
		t.Fatalf("write: %v", err)
	}
	norm := strings.NewReplacer("\r\n", "\n", "\r", "\n")
	if norm.Replace(out) != norm.Replace(newText) {
		t.Fatalf("write: content %q, want %q", out, newText)
	}
}
