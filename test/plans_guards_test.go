package test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"
)

// guardPlan has no warnings at all, so every warning a write brings is new.
const guardPlan = `- [ ] #root: Root
  - [ ] #a: Alpha (S) @anna
  - [ ] #b: Beta (S) @ben
- [ ] #side: Side (XS)
`

// fileState is a plan file's bytes and modification time, to prove a call left it alone.
type fileState struct {
	data  []byte
	mtime time.Time
}

func stat(t testing.TB, path string) fileState {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fileState{data: readFile(t, path), mtime: fi.ModTime()}
}

// same fails the test if the file's bytes or mtime changed since s.
func (s fileState) same(t testing.TB, path, what string) {
	t.Helper()
	now := stat(t, path)
	if !bytes.Equal(now.data, s.data) || !now.mtime.Equal(s.mtime) {
		t.Fatalf("%s touched the file (bytes equal %v, mtime %v → %v)", what, bytes.Equal(now.data, s.data), s.mtime, now.mtime)
	}
}

// TestPlanStaleBaseAndRetries: a stale base is refused with the current text and base; a
// retried request id answers the recorded result and does not touch the file; a reused id
// with other arguments is refused.
func TestPlanStaleBaseAndRetries(t *testing.T) {
	t.Parallel()
	d, paths := startPlanDaemon(t, planFile{Key: "g", Text: guardPlan})
	c := newMCPClient(d)
	path := paths["g"]

	r1 := c.read(t, "g")
	var w writeAnswer
	args := writeArgs("g", r1.Base, "retry-1", map[string]any{"id": "a", "status": "done"})
	c.ok(t, "werkbaum_set_status", args, &w)
	after := stat(t, path)

	t.Run("stale base", func(t *testing.T) {
		a := c.must(t, "werkbaum_set_status", writeArgs("g", r1.Base, "stale-1", map[string]any{"id": "b", "status": "done"}))
		if !a.IsError || a.Map["conflict"] != true || a.Map["text"] != string(after.data) {
			t.Fatalf("stale write: %+v", a)
		}
		var cur struct {
			Base planBase `json:"base"`
		}
		if err := a.decode(&cur); err != nil || cur.Base != w.Base {
			t.Fatalf("conflict base %+v, want %+v (%v)", cur.Base, w.Base, err)
		}
		if !strings.Contains(a.Text, "conflict") || !strings.Contains(a.Text, "new request_id") {
			t.Errorf("conflict text %q", a.Text)
		}
		after.same(t, path, "a stale write")
	})

	t.Run("retry answers the recorded result", func(t *testing.T) {
		time.Sleep(20 * time.Millisecond) // a rewrite now would show in the mtime
		var again writeAnswer
		a := c.ok(t, "werkbaum_set_status", args, &again)
		if !again.Replayed || again.Base != w.Base || again.Revision != w.Revision || !again.Changed {
			t.Fatalf("retry: %+v, first %+v", again, w)
		}
		if !strings.Contains(a.Text, "already applied") {
			t.Errorf("retry text %q", a.Text)
		}
		// Key order and the agent label do not make it another request.
		reordered := map[string]any{"status": "done", "id": "a", "request_id": "retry-1", "base": map[string]any{"checksum": r1.Base.Checksum, "revision": r1.Base.Revision}, "plan": "g", "agent": "other-name"}
		c.ok(t, "werkbaum_set_status", reordered, &again)
		if !again.Replayed || again.Base != w.Base {
			t.Fatalf("reordered retry: %+v", again)
		}
		after.same(t, path, "a retried request")
		if rr := c.read(t, "g"); rr.Base != w.Base {
			t.Fatalf("base after retries %+v, want %+v", rr.Base, w.Base)
		}
	})

	t.Run("reused id with other arguments", func(t *testing.T) {
		for name, other := range map[string]map[string]any{
			"other node":   writeArgs("g", r1.Base, "retry-1", map[string]any{"id": "b", "status": "done"}),
			"current base": writeArgs("g", w.Base, "retry-1", map[string]any{"id": "a", "status": "done"}),
		} {
			a := c.must(t, "werkbaum_set_status", other)
			if !a.IsError || !strings.Contains(a.Text, "request_id") || !strings.Contains(a.Text, "other arguments") {
				t.Fatalf("%s: %+v", name, a)
			}
		}
		// Another tool under the same id is another request too.
		a := c.must(t, "werkbaum_set_size", writeArgs("g", w.Base, "retry-1", map[string]any{"id": "a", "size": "M"}))
		if !a.IsError || !strings.Contains(a.Text, "other arguments") {
			t.Fatalf("other tool: %+v", a)
		}
		after.same(t, path, "a reused request id")
		if op := c.operation(t, "g", "retry-1"); op.State != "applied" || op.Revision != w.Revision {
			t.Fatalf("the reuse changed the journal: %+v", op)
		}
	})

	t.Run("bad arguments", func(t *testing.T) {
		long := strings.Repeat("x", 257)
		for name, bad := range map[string]map[string]any{
			"no base":          {"plan": "g", "request_id": "bad-1", "id": "a", "status": "done"},
			"short checksum":   {"plan": "g", "base": map[string]any{"revision": 1, "checksum": "abc"}, "request_id": "bad-2", "id": "a", "status": "done"},
			"no request_id":    {"plan": "g", "base": w.Base, "id": "a", "status": "done"},
			"long request_id":  {"plan": "g", "base": w.Base, "request_id": long, "id": "a", "status": "done"},
			"unknown status":   {"plan": "g", "base": w.Base, "request_id": "bad-3", "id": "a", "status": "finished"},
			"unknown argument": {"plan": "g", "base": w.Base, "request_id": "bad-4", "id": "a", "status": "done", "path": path},
		} {
			a := c.must(t, "werkbaum_set_status", bad)
			if !a.IsError || a.Text == "" {
				t.Errorf("%s: %+v", name, a)
			}
		}
		after.same(t, path, "writes with bad arguments")
	})

	t.Run("a write that changes nothing", func(t *testing.T) {
		time.Sleep(20 * time.Millisecond)
		var same writeAnswer
		// #a is done already; a 256-byte request id (128 × "ä") is the longest allowed.
		id := strings.Repeat("ä", 128)
		c.ok(t, "werkbaum_set_status", writeArgs("g", w.Base, id, map[string]any{"id": "a", "status": "x"}), &same)
		if same.Changed || same.Base != w.Base || same.Revision != w.Revision {
			t.Fatalf("no-op write: %+v", same)
		}
		after.same(t, path, "a write that changes nothing")
		if op := c.operation(t, "g", id); op.State != "applied" || op.Revision != w.Revision {
			t.Fatalf("operation of a no-op write: %+v", op)
		}
	})

	t.Run("a rejected request stays rejected", func(t *testing.T) {
		bad := writeArgs("g", w.Base, "rejected-1", map[string]any{"id": "nope", "status": "done"})
		first := c.must(t, "werkbaum_set_status", bad)
		again := c.must(t, "werkbaum_set_status", bad)
		if !first.IsError || !again.IsError || !strings.Contains(again.Text, "not done again") {
			t.Fatalf("first %+v\nagain %+v", first, again)
		}
		after.same(t, path, "a rejected request")
	})
}

// TestPlanGuards: a new structural warning is refused and then allowed with allowWarnings;
// a node newly in production is refused and allowed with allowProd; a content warning is
// written and reported as added.
func TestPlanGuards(t *testing.T) {
	t.Parallel()
	d, paths := startPlanDaemon(t, planFile{Key: "g", Text: guardPlan})
	c := newMCPClient(d)
	path := paths["g"]

	type refusalAnswer struct {
		Refused  bool             `json:"refused"`
		Switch   string           `json:"switch"`
		Reason   string           `json:"reason"`
		Warnings []map[string]any `json:"warnings"`
		Lines    []int            `json:"lines"`
	}
	structural := []struct {
		name, tool string
		args       map[string]any
		warning    string
	}{
		{"duplicateId", "werkbaum_add_node", map[string]any{"parent": "root", "line": "- [ ] #a: Another alpha (XS)"}, "duplicateId"},
		{"mixedGate", "werkbaum_add_node", map[string]any{"parent": "root", "line": "| [ ] #alt: An alternative (XS)"}, "mixedGate"},
		{"unknownStatus", "werkbaum_apply_ops", map[string]any{"ops": []map[string]any{{"op": "insert", "index": 3, "lines": []string{"  - [%] #odd: Odd box"}}}}, "unknownStatus"},
	}
	for i, st := range structural {
		t.Run(st.name, func(t *testing.T) {
			r := c.read(t, "g")
			before := stat(t, path)
			a := c.must(t, st.tool, writeArgs("g", r.Base, "struct-"+st.name, st.args))
			var ref refusalAnswer
			if err := a.decode(&ref); err != nil || !a.IsError || !ref.Refused || ref.Switch != "allowWarnings" ||
				!slices.Contains(warningTypes(ref.Warnings), st.warning) || !strings.Contains(a.Text, "allowWarnings") {
				t.Fatalf("refusal: %+v (%v)", a, err)
			}
			before.same(t, path, "a refused write")
			if op := c.operation(t, "g", "struct-"+st.name); op.State != "rejected" {
				t.Fatalf("operation of a refused write: %+v", op)
			}
			if !strings.Contains(a.Text, "new request_id") {
				t.Errorf("the refusal does not say that the retry needs a new request_id: %q", a.Text)
			}
			allowed := st.args
			allowed["allowWarnings"] = true
			// The same request_id with the switch is another request, refused as reused.
			if re := c.must(t, st.tool, writeArgs("g", r.Base, "struct-"+st.name, allowed)); !re.IsError || !strings.Contains(re.Text, "other arguments") {
				t.Fatalf("same request_id with allowWarnings: %+v", re)
			}
			var w writeAnswer
			c.ok(t, st.tool, writeArgs("g", r.Base, "struct-allowed-"+st.name, allowed), &w)
			if !w.Changed || w.Revision != r.Base.Revision+1 || !slices.Contains(warningTypes(w.Added), st.warning) ||
				w.WarningCount < 1 || w.Base.Checksum != sha(readFile(t, path)) {
				t.Fatalf("allowed write: %+v", w)
			}
			// A later write that keeps the old warning is not refused again: only new
			// structural warnings block.
			var w2 writeAnswer
			c.ok(t, "werkbaum_set_status", writeArgs("g", w.Base, "struct-after-"+st.name, map[string]any{"id": "side", "status": []string{"~", " ", "/"}[i]}), &w2)
			if len(w2.Added) != 0 || w2.WarningCount != w.WarningCount {
				t.Fatalf("write after an allowed warning: %+v", w2)
			}
		})
	}

	t.Run("allowProd", func(t *testing.T) {
		r := c.read(t, "g")
		before := stat(t, path)
		a := c.must(t, "werkbaum_set_status", writeArgs("g", r.Base, "prod-1", map[string]any{"id": "b", "status": "prod"}))
		var ref refusalAnswer
		if err := a.decode(&ref); err != nil || !a.IsError || !ref.Refused || ref.Switch != "allowProd" || !strings.Contains(a.Text, "allowProd") || len(ref.Lines) != 1 {
			t.Fatalf("refusal: %+v (%v)", a, err)
		}
		before.same(t, path, "a refused [^]")
		var w writeAnswer
		c.ok(t, "werkbaum_set_status", writeArgs("g", r.Base, "prod-2", map[string]any{"id": "b", "status": "prod", "allowProd": true}), &w)
		if !strings.Contains(string(readFile(t, path)), "  - [^] #b: Beta (S) @ben\n") || !w.Changed {
			t.Fatalf("allowed [^]: %+v\n%s", w, readFile(t, path))
		}
		// Already in production: changing the same node's label keeps [^] without the switch.
		var w2 writeAnswer
		c.ok(t, "werkbaum_set_size", writeArgs("g", w.Base, "prod-3", map[string]any{"id": "b", "size": "M"}), &w2)
		if !strings.Contains(string(readFile(t, path)), "  - [^] #b: Beta (M) @ben\n") {
			t.Fatalf("set_size on a [^] node:\n%s", readFile(t, path))
		}
	})

	t.Run("content warning written and reported", func(t *testing.T) {
		r := c.read(t, "g")
		var w writeAnswer
		a := c.ok(t, "werkbaum_add_node", writeArgs("g", r.Base, "content-1", map[string]any{"parent": "side", "line": "- [ ] #dep: Needs a ghost (XS) :#ghost"}), &w)
		if !w.Changed || !slices.Contains(warningTypes(w.Added), "unknownDep") || !strings.Contains(a.Text, "new warning") {
			t.Fatalf("content warning: %+v %q", w, a.Text)
		}
		var found bool
		for _, wn := range w.Added {
			if wn["type"] == "unknownDep" && wn["id"] == "ghost" && wn["line"] != nil && wn["text"] != "" {
				found = true
			}
		}
		if !found {
			t.Fatalf("added lacks the unknownDep warning with id, line and text: %v", w.Added)
		}
		if !strings.Contains(string(readFile(t, path)), "#dep: Needs a ghost (XS) :#ghost") {
			t.Fatal("the content-warning write is not in the file")
		}
		// Removing the cause reports the warning as removed.
		var w2 writeAnswer
		c.ok(t, "werkbaum_remove_node", writeArgs("g", w.Base, "content-2", map[string]any{"id": "dep", "discard": false}), &w2)
		if !slices.Contains(warningTypes(w2.Removed), "unknownDep") {
			t.Fatalf("removed: %+v", w2)
		}
	})
}

// TestPlanHandEditDetected: a file edited by hand between a read and a write is detected
// (the write conflicts and carries the hand-edited text with a new revision) and the next
// read sees the new revision; a write on it then succeeds.
func TestPlanHandEditDetected(t *testing.T) {
	t.Parallel()
	d, paths := startPlanDaemon(t, planFile{Key: "h", Text: guardPlan})
	c := newMCPClient(d)
	path := paths["h"]

	r := c.read(t, "h")
	edited := strings.Replace(guardPlan, "#side: Side (XS)", "#side: Side, edited by hand (XS)", 1)
	if err := os.WriteFile(path, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	before := stat(t, path)
	a := c.must(t, "werkbaum_set_status", writeArgs("h", r.Base, "hand-1", map[string]any{"id": "a", "status": "done"}))
	var conflict struct {
		Conflict bool     `json:"conflict"`
		Base     planBase `json:"base"`
		Text     string   `json:"text"`
	}
	if err := a.decode(&conflict); err != nil || !a.IsError || !conflict.Conflict || conflict.Text != edited ||
		conflict.Base.Checksum != sha([]byte(edited)) || conflict.Base.Revision != r.Base.Revision+1 {
		t.Fatalf("write over a hand edit: %+v (%v)", a, err)
	}
	before.same(t, path, "the conflicting write")
	r2 := c.read(t, "h")
	if r2.Text != edited || r2.Base != conflict.Base {
		t.Fatalf("read after the hand edit: %+v", r2.Base)
	}
	var w writeAnswer
	c.ok(t, "werkbaum_set_status", writeArgs("h", r2.Base, "hand-2", map[string]any{"id": "a", "status": "done"}), &w)
	want := strings.Replace(edited, "[ ] #a:", "[x] #a:", 1)
	if got := readFile(t, path); string(got) != want || w.Revision != r2.Base.Revision+1 {
		t.Fatalf("write on the new base: %+v\n%s", w, got)
	}

	// A second hand edit, seen first by a read rather than a write, also gets a revision.
	if err := os.WriteFile(path, []byte(want+"- [ ] #late: Added by hand\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if r3 := c.read(t, "h"); r3.Base.Revision != w.Revision+1 || !strings.HasSuffix(r3.Text, "#late: Added by hand\n") {
		t.Fatalf("read after the second hand edit: %+v", r3.Base)
	}
}

// TestPlanHandEditDuringWrite: a person saves the plan while an agent's write is in the
// engine (a 2,001-node plan takes the engine a while). Whatever the order, the person's
// edit must survive: the write either came first (and the edit replaced it), or it notices
// the edit and answers a conflict carrying it — it never renames its text over the edit.
func TestPlanHandEditDuringWrite(t *testing.T) {
	t.Parallel()
	d, paths := startPlanDaemon(t, planFile{Key: "big", Text: plan2000})
	c := newMCPClient(d)
	path := paths["big"]
	for round := range 3 {
		r := c.read(t, "big")
		done := make(chan *toolAnswer, 1)
		go func() {
			a, err := c.call(context.Background(), "werkbaum_set_status", writeArgs("big", r.Base, fmt.Sprintf("during-%d", round),
				map[string]any{"id": "e20.t20", "status": []string{"skeleton", "progress", "skeleton"}[round]}))
			if err != nil {
				a = &toolAnswer{IsError: true, Text: err.Error()}
			}
			done <- a
		}()
		time.Sleep(time.Duration(50+100*round) * time.Millisecond)
		edit := fmt.Sprintf("%%%% edited by hand during a write, round %d\n", round)
		edited := edit + strings.SplitN(r.Text, "\n", 2)[1]
		if err := os.WriteFile(path, []byte(edited), 0o644); err != nil {
			t.Fatal(err)
		}
		a := <-done
		got := string(readFile(t, path))
		if !strings.HasPrefix(got, edit) {
			t.Fatalf("round %d: the hand edit was overwritten by the write (answer: %s)", round, a.Text)
		}
		if a.Map["conflict"] == true {
			// The conflict carries the change since the writer's base: the edited line.
			if changes, _ := json.Marshal(a.Map["changes"]); !strings.Contains(string(changes), strings.TrimSuffix(edit, "\n")) {
				t.Fatalf("round %d: the conflict does not carry the edited line: %s", round, changes)
			}
			if op := c.operation(t, "big", fmt.Sprintf("during-%d", round)); op.State != "conflict" {
				t.Fatalf("round %d: journal %+v for a write answered as a conflict", round, op)
			}
		}
		t.Logf("round %d: conflict %v, error %v: %.80s", round, a.Map["conflict"], a.IsError, a.Text)
	}
}
