package test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// crashPlan builds the plan of TestPlanCrashSafety: a header line the writes rewrite and
// enough nodes that a write takes a moment.
func crashPlan(header string) string {
	var b strings.Builder
	b.WriteString(header + "\n- [~] #root: Root\n")
	for i := range 40 {
		fmt.Fprintf(&b, "  - [ ] #n%d: Node %d (S) @p%d\n", i, i, i%4)
	}
	return b.String()
}

// sentWrite is one write request the crash test sent: its arguments and the exact text
// the file would have if it took effect.
type sentWrite struct {
	id, tool string
	args     map[string]any
	text     string
	answered bool // the daemon answered "applied" before it was killed
}

// TestPlanCrashSafety SIGKILLs talkd at random moments while a client writes in a loop,
// 30 rounds, restarting it on the same HOME each time. After every restart the file is
// exactly one of the texts that could exist (never torn or empty), it parses without
// structural warnings, no temp file is left, and operation_get settles the request that
// was in flight as applied (then the file is its text) or unknown (then the file is the
// text before it, and sending it again applies it). At the end every request id is
// applied or unknown, consistently with the answers and the file, and the applied ones
// carry the revisions 2, 3, … without a gap.
func TestPlanCrashSafety(t *testing.T) {
	t.Parallel()
	const rounds = 30
	dir := t.TempDir()
	path := filepath.Join(dir, "crash.werkbaum")
	initial := crashPlan("%% crash test, initial")
	if err := os.WriteFile(path, []byte(initial), 0o644); err != nil {
		t.Fatal(err)
	}
	config := plansConfig(map[string]string{"crash": path})
	home := t.TempDir()

	possible := map[string]bool{initial: true} // every text the file may hold
	var sent []*sentWrite                      // in send order
	current := initial                         // the text the next write starts from
	n := 0
	seed := uint64(time.Now().UnixNano())
	t.Logf("kill moments drawn with seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 1))
	var afterRestart = map[string]int{}

	for round := range rounds {
		d := startDaemon(t, daemonOptions{Config: config, Home: home})
		c := newMCPClient(d)

		// The file is one of the possible texts, it parses, and no temp file is left.
		r := c.read(t, "crash")
		if !possible[r.Text] {
			t.Fatalf("round %d: the file is not a text any write could have produced (%d bytes):\n%s", round, len(r.Text), r.Text)
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 1 {
			t.Fatalf("round %d: the plan folder holds %d entries", round, len(entries))
		}
		var in struct {
			Warnings []map[string]any `json:"warnings"`
			Nodes    []map[string]any `json:"nodes"`
		}
		c.ok(t, "werkbaum_inspect", map[string]any{"plan": "crash", "include": []string{"tree", "warnings"}}, &in)
		if len(in.Nodes) != 41 {
			t.Fatalf("round %d: %d nodes", round, len(in.Nodes))
		}
		for _, w := range in.Warnings {
			if structuralTypes[w["type"].(string)] {
				t.Fatalf("round %d: structural warning %v", round, w)
			}
		}

		// The request that was in flight is settled as applied or unknown, consistently
		// with the file; sending it again is safe either way.
		if len(sent) > 0 {
			last := sent[len(sent)-1]
			op := c.operation(t, "crash", last.id)
			switch {
			case op.InProgress:
				t.Fatalf("round %d: %s still in progress after a restart", round, last.id)
			case op.State == "applied":
				if r.Text != last.text {
					t.Fatalf("round %d: %s is applied but the file is not its text", round, last.id)
				}
			case op.State == "unknown":
				if last.answered {
					t.Fatalf("round %d: %s was answered applied but the journal forgot it", round, last.id)
				}
				if r.Text != current {
					t.Fatalf("round %d: %s is unknown but the file is not the text before it", round, last.id)
				}
			default:
				t.Fatalf("round %d: %s settled as %+v", round, last.id, op)
			}
			afterRestart[op.State]++
			var w writeAnswer
			c.ok(t, last.tool, last.args, &w)
			if op.State == "applied" && (!w.Replayed || w.Base.Checksum != sha([]byte(last.text))) {
				t.Fatalf("round %d: resending applied %s: %+v", round, last.id, w)
			}
			if op.State == "unknown" && (w.Replayed || !w.Changed || w.Base.Checksum != sha([]byte(last.text))) {
				t.Fatalf("round %d: resending unknown %s: %+v", round, last.id, w)
			}
			last.answered = true
			current = last.text
			if got := readFile(t, path); string(got) != current {
				t.Fatalf("round %d: the file after resending %s is not its text", round, last.id)
			}
			r = c.read(t, "crash")
		} else if r.Text != initial {
			t.Fatalf("round %d: the file changed without a write", round)
		}

		// Write in a loop until the daemon dies under us.
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		var loopErr error
		wg.Add(1)
		go func() {
			defer wg.Done()
			base := r.Base
			for ctx.Err() == nil {
				n++
				header := fmt.Sprintf("%%%% crash test, write %d", n)
				sw := &sentWrite{id: fmt.Sprintf("crash-%d", n)}
				lines := strings.SplitAfter(current, "\n")
				if n%2 == 0 {
					sw.text = header + "\n" + strings.Join(lines[1:], "")
					sw.tool = "werkbaum_write"
					sw.args = writeArgs("crash", base, sw.id, map[string]any{"text": sw.text})
				} else {
					// Line ops on the root line and the header: exactly predictable too.
					root := fmt.Sprintf("- [~] #root: Root, written by line ops %d", n)
					sw.text = header + "\n" + root + "\n" + strings.Join(lines[2:], "")
					sw.tool = "werkbaum_apply_ops"
					sw.args = writeArgs("crash", base, sw.id, map[string]any{"ops": []map[string]any{
						{"op": "replace", "index": 0, "count": 2, "lines": []string{header, root}}}})
				}
				possible[sw.text] = true
				sent = append(sent, sw)
				a, err := c.call(ctx, sw.tool, sw.args)
				if err != nil {
					return // killed (or cancelled) mid-request: settled after the restart
				}
				var w writeAnswer
				if a.IsError || a.decode(&w) != nil || !w.Changed || w.Base.Checksum != sha([]byte(sw.text)) {
					loopErr = fmt.Errorf("%s: %s %s", sw.id, a.Text, a.Structured)
					return
				}
				sw.answered = true
				current, base = sw.text, w.Base
			}
		}()
		time.Sleep(time.Duration(rng.IntN(200)) * time.Millisecond)
		d.kill(t)
		cancel()
		wg.Wait()
		if loopErr != nil {
			t.Fatalf("round %d: %v", round, loopErr)
		}
	}

	// Final audit on a fresh start: every request id is applied or unknown, answered ones
	// are applied, applied ones carry their text's checksum and consecutive revisions, and
	// the file is the last applied text.
	d := startDaemon(t, daemonOptions{Config: config, Home: home})
	c := newMCPClient(d)
	wantRev := uint64(2)
	lastApplied := initial
	var applied, unknown int
	for _, sw := range sent {
		op := c.operation(t, "crash", sw.id)
		switch op.State {
		case "applied":
			var res writeAnswer
			if err := json.Unmarshal(op.Result, &res); err != nil || res.Base.Checksum != sha([]byte(sw.text)) {
				t.Fatalf("%s: recorded result %s (%v)", sw.id, op.Result, err)
			}
			if op.Revision != wantRev {
				t.Fatalf("%s: revision %d, want %d", sw.id, op.Revision, wantRev)
			}
			wantRev++
			lastApplied = sw.text
			applied++
		case "unknown":
			if sw.answered {
				t.Fatalf("%s was answered applied but is unknown", sw.id)
			}
			unknown++
		default:
			t.Fatalf("%s: %+v", sw.id, op)
		}
	}
	if r := c.read(t, "crash"); r.Text != lastApplied || r.Base.Revision != wantRev-1 {
		t.Fatalf("final file is not the last applied write (revision %d, want %d)", r.Base.Revision, wantRev-1)
	}
	t.Logf("%d rounds, %d requests: %d applied, %d unknown; in-flight requests after a restart: %v", rounds, len(sent), applied, unknown, afterRestart)
}
