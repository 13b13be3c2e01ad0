package test

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"testing"
)

// editLine is the engine's debug line for each write's verb and guards: old_text_known says
// whether the runtime's memo held the analysis of the text the write started from.
var editLine = regexp.MustCompile(`"werkbaum: edit" verb=\S+ old_text_known=(true|false)`)

// TestWriteAfterAPauseStartsFromTheLastText is an agent's rhythm: write, think for a few
// seconds, write again. The second write comes after the engine's memo trim (2 s) and the
// daemon's idle release (3 s), and still finds the analysis of the text the first one made
// (the memo keeps each plan's current text until the daemon has been idle for 20 s), so it does
// not analyse that text again. A third write sets the status back, to a text the memo found
// rather than made, and after the next pause finds that one. Each write's answer and file
// equal a fresh daemon's doing the same write on the same text. Once the daemon has been idle
// for 20 s it drops what it kept, and the next write analyses its old text again. The small
// plan names people with non-ASCII letters.
func TestWriteAfterAPauseStartsFromTheLastText(t *testing.T) {
	t.Parallel() // mostly waiting for its daemon's idle stages
	plans, node, d, paths := rhythmDaemon(t)
	c := newMCPClient(d)
	ctx := context.Background()

	write := func(c *mcpClient, key string, base planBase, id, status string) writeAnswer {
		t.Helper()
		a, err := c.call(ctx, "werkbaum_set_status", writeArgs(key, base, id, map[string]any{"id": node[key], "status": status}))
		if err != nil {
			t.Fatal(err)
		}
		var w writeAnswer
		if err := a.decode(&w); err != nil {
			t.Fatal(err)
		}
		if a.IsError || !w.Changed {
			t.Fatalf("%s: set_status %s changed nothing: %s", key, status, a.Text)
		}
		return w
	}
	// pauseThenWrite waits for the idle shed after the write before (sheds: the count before
	// it), runs the write f and returns its answer and what its edit line says.
	pauseThenWrite := func(key string, sheds int, f func() writeAnswer) (writeAnswer, string) {
		t.Helper()
		waitLogged(t, d, "idle shed", shedLine, sheds)
		mark := len(d.logs())
		w := f()
		m := editLine.FindAllStringSubmatch(d.logs()[mark:], -1)
		if len(m) != 1 {
			t.Fatalf("%s: %d edit lines logged for one write, want 1", key, len(m))
		}
		return w, m[0][1]
	}
	// sameAsFresh checks that a fresh daemon serving before makes the answer w and the file
	// text after of the same write.
	sameAsFresh := func(key, before, status string, w writeAnswer, after string) {
		t.Helper()
		fresh, freshPaths := startPlanDaemon(t, planFile{Key: key, Text: before})
		fc := newMCPClient(fresh)
		var r readAnswer
		a, err := fc.call(ctx, "werkbaum_read", map[string]any{"plan": key})
		if err != nil || a.decode(&r) != nil {
			t.Fatalf("%s: read on a fresh daemon: %v", key, err)
		}
		fw := write(fc, key, r.Base, "fresh", status)
		got, _ := os.ReadFile(freshPaths[key])
		if string(got) != after {
			t.Errorf("%s: after set_status %s the file differs from a fresh daemon's", key, status)
		}
		if fw.Base.Checksum != w.Base.Checksum || fw.WarningCount != w.WarningCount || len(fw.Added) != len(w.Added) || len(fw.Removed) != len(w.Removed) {
			t.Errorf("%s: set_status %s answered %+v, a fresh daemon %+v", key, status, w, fw)
		}
		fresh.terminate(t)
	}

	for _, p := range plans {
		var r readAnswer
		a, err := c.call(ctx, "werkbaum_read", map[string]any{"plan": p.Key})
		if err != nil || a.decode(&r) != nil {
			t.Fatalf("%s: read: %v", p.Key, err)
		}
		sheds := len(shedLine.FindAllString(d.logs(), -1))
		first := write(c, p.Key, r.Base, "keep-1-"+p.Key, "done")
		afterFirst, _ := os.ReadFile(paths[p.Key])

		second, known := pauseThenWrite(p.Key, sheds, func() writeAnswer {
			return write(c, p.Key, first.Base, "keep-2-"+p.Key, "progress")
		})
		if known != "true" {
			t.Errorf("%s: the write after a pause analysed the text the write before it made again", p.Key)
		}
		afterSecond, _ := os.ReadFile(paths[p.Key])
		sameAsFresh(p.Key, string(afterFirst), "progress", second, string(afterSecond))

		sheds = len(shedLine.FindAllString(d.logs(), -1))
		third := write(c, p.Key, second.Base, "keep-3-"+p.Key, "done") // back to the first write's text
		if third.Base.Checksum != first.Base.Checksum {
			t.Fatalf("%s: setting the status back made checksum %s, want the first write's %s", p.Key, third.Base.Checksum, first.Base.Checksum)
		}
		fourth, known := pauseThenWrite(p.Key, sheds, func() writeAnswer {
			return write(c, p.Key, third.Base, "keep-4-"+p.Key, "progress")
		})
		if known != "true" {
			t.Errorf("%s: the write after a pause did not find the text the write before it came back to", p.Key)
		}
		if p.Key != "small" {
			continue
		}
		// The agent has stopped: 20 s idle, the daemon drops what it kept, and the next
		// write analyses its old text again.
		waitLogged(t, d, "drop of the kept analyses", droppedLine, len(droppedLine.FindAllString(d.logs(), -1)))
		mark := len(d.logs())
		write(c, p.Key, fourth.Base, "keep-5-"+p.Key, "done")
		if m := editLine.FindAllStringSubmatch(d.logs()[mark:], -1); len(m) != 1 || m[0][1] != "false" {
			t.Errorf("%s: after the drop the write's edit lines say %v, want one with old_text_known=false", p.Key, m)
		}
	}
}

// droppedLine is the daemon's debug line once it has been idle for modelKeep (20 s) and
// dropped the analyses its engine kept (cmd/talkd idle.go dropModels).
var droppedLine = regexp.MustCompile(`"idle: dropped the kept analyses" runtimes=(\d+)`)

// TestTwoPlansInTurnKeepTheirTexts: two agents on two plans, each thinking between its
// writes, so that the plans' writes take turns with pauses between them past the memo trim
// and the idle release. Each write still finds the analysis of the text its plan's write
// before made (the trim keeps the current text of each plan worked on last, not only the
// text used last), and each answer's base is the file's text.
func TestTwoPlansInTurnKeepTheirTexts(t *testing.T) {
	t.Parallel() // mostly waiting for its daemon's idle stages
	plans, node, d, paths := rhythmDaemon(t)
	c := newMCPClient(d)
	ctx := context.Background()
	bases := map[string]planBase{}
	for _, p := range plans {
		var r readAnswer
		a, err := c.call(ctx, "werkbaum_read", map[string]any{"plan": p.Key})
		if err != nil || a.decode(&r) != nil {
			t.Fatalf("%s: read: %v", p.Key, err)
		}
		bases[p.Key] = r.Base
	}
	statuses := [2]string{"done", "progress"}
	sheds := -1
	for round := range 3 {
		for _, p := range plans {
			if sheds >= 0 {
				waitLogged(t, d, "idle shed", shedLine, sheds) // the pause after the write before
			}
			mark := len(d.logs())
			id := fmt.Sprintf("turn-%d-%s", round, p.Key)
			a, err := c.call(ctx, "werkbaum_set_status", writeArgs(p.Key, bases[p.Key], id, map[string]any{"id": node[p.Key], "status": statuses[round%2]}))
			if err != nil {
				t.Fatal(err)
			}
			var w writeAnswer
			if err := a.decode(&w); err != nil || a.IsError || !w.Changed {
				t.Fatalf("%s round %d: set_status: %s (%v)", p.Key, round, a.Text, err)
			}
			if got, _ := os.ReadFile(paths[p.Key]); sha(got) != w.Base.Checksum {
				t.Fatalf("%s round %d: the answer's base is not the file's text", p.Key, round)
			}
			bases[p.Key] = w.Base
			sheds = len(shedLine.FindAllString(d.logs(), -1))
			m := editLine.FindAllStringSubmatch(d.logs()[mark:], -1)
			if len(m) != 1 {
				t.Fatalf("%s round %d: %d edit lines for one write, want 1", p.Key, round, len(m))
			}
			// The first write of each plan starts from the text the daemon analysed at its
			// start; every later one from the text its own write before made, with the
			// other plan's write and two pauses in between.
			if m[0][1] != "true" {
				t.Errorf("%s round %d: the write after the other plan's turn analysed its old text again", p.Key, round)
			}
		}
	}
}
