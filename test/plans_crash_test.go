package test

import (
	"context"
	"encoding/json"
	"errors"
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

// crashWriter is one of the concurrent writers of TestPlanCrashSafety: its own plan (in
// its own folder), every text that plan may hold, and the requests it sent.
type crashWriter struct {
	key, dir, path string
	initial        string
	possible       map[string]bool // every text the file may hold
	sent           []*sentWrite    // in send order
	current        string          // the text the next write starts from
	n              int
	base           planBase
	err            error // a wrong answer seen by the write loop
}

// TestPlanCrashSafety SIGKILLs talkd at random moments while eight clients write in a
// loop, each its own plan (so their journal records share the group commit), 50 rounds,
// restarting it on the same HOME (a persistent state directory) each time. After every
// restart each file is exactly one of the texts that could exist (never torn or empty), it
// parses without structural warnings, no temp file is left, and operation_get settles the
// request that was in flight as applied (then the file is its text) or unknown (then the
// file is the text before it, and sending it again applies it); a request the client saw
// answered is never unknown. At the end every request id is applied or unknown,
// consistently with the answers and the files, and each plan's applied requests carry
// the revisions 2, 3, … without a gap or a repeat: nothing acknowledged is lost, nothing
// applied twice.
func TestPlanCrashSafety(t *testing.T) {
	t.Parallel()
	const rounds, writers = 50, 8
	root := t.TempDir()
	paths := map[string]string{}
	var ws []*crashWriter
	for i := range writers {
		w := &crashWriter{key: fmt.Sprintf("crash%d", i), dir: filepath.Join(root, fmt.Sprintf("w%d", i))}
		w.path = filepath.Join(w.dir, "crash.werkbaum")
		w.initial = crashPlan(fmt.Sprintf("%%%% crash test of writer %d, initial", i))
		w.possible = map[string]bool{w.initial: true}
		w.current = w.initial
		if err := os.MkdirAll(w.dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(w.path, []byte(w.initial), 0o644); err != nil {
			t.Fatal(err)
		}
		paths[w.key] = w.path
		ws = append(ws, w)
	}
	config := plansConfig(paths)
	home := t.TempDir()

	seed := uint64(time.Now().UnixNano())
	t.Logf("kill moments drawn with seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 1))
	afterRestart := map[string]int{}

	for round := range rounds {
		d := startDaemon(t, daemonOptions{Config: config, Home: home})
		c := newMCPClient(d)
		for _, w := range ws {
			w.check(t, c, round, afterRestart)
		}

		// Write in a loop until the daemon dies under us.
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		for _, w := range ws {
			wg.Add(1)
			go func() {
				defer wg.Done()
				w.loop(ctx, c)
			}()
		}
		time.Sleep(time.Duration(rng.IntN(200)) * time.Millisecond)
		d.kill(t)
		cancel()
		wg.Wait()
		for _, w := range ws {
			if w.err != nil {
				t.Fatalf("round %d: %s: %v", round, w.key, w.err)
			}
		}
	}

	// Final audit on a fresh start.
	d := startDaemon(t, daemonOptions{Config: config, Home: home})
	c := newMCPClient(d)
	var requests, applied, unknown int
	for _, w := range ws {
		a, u := w.audit(t, c)
		requests, applied, unknown = requests+len(w.sent), applied+a, unknown+u
	}
	t.Logf("%d rounds, %d writers, %d requests: %d applied, %d unknown; in-flight requests after a restart: %v", rounds, writers, requests, applied, unknown, afterRestart)
}

// check runs after a restart: the file is one of the possible texts, it parses, no temp
// file is left, and the request that was in flight is settled truthfully; it is then sent
// again, which must replay it (applied) or apply it (unknown).
func (w *crashWriter) check(t *testing.T, c *mcpClient, round int, afterRestart map[string]int) {
	t.Helper()
	r := c.read(t, w.key)
	if !w.possible[r.Text] {
		t.Fatalf("round %d: %s: the file is not a text any write could have produced (%d bytes):\n%s", round, w.key, len(r.Text), r.Text)
	}
	if entries, _ := os.ReadDir(w.dir); len(entries) != 1 {
		t.Fatalf("round %d: %s: the plan folder holds %d entries", round, w.key, len(entries))
	}
	var in struct {
		Warnings []map[string]any `json:"warnings"`
		Nodes    []map[string]any `json:"nodes"`
	}
	c.ok(t, "werkbaum_inspect", map[string]any{"plan": w.key, "detail": "full", "include": []string{"tree", "warnings"}}, &in)
	if len(in.Nodes) != 41 {
		t.Fatalf("round %d: %s: %d nodes", round, w.key, len(in.Nodes))
	}
	for _, wa := range in.Warnings {
		if structuralTypes[wa["type"].(string)] {
			t.Fatalf("round %d: %s: structural warning %v", round, w.key, wa)
		}
	}
	if len(w.sent) == 0 {
		if r.Text != w.initial {
			t.Fatalf("round %d: %s: the file changed without a write", round, w.key)
		}
		w.base = r.Base
		return
	}
	last := w.sent[len(w.sent)-1]
	op := c.operation(t, w.key, last.id)
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
		if r.Text != w.current {
			t.Fatalf("round %d: %s is unknown but the file is not the text before it", round, last.id)
		}
	default:
		t.Fatalf("round %d: %s settled as %+v", round, last.id, op)
	}
	afterRestart[op.State]++
	var wa writeAnswer
	c.ok(t, last.tool, last.args, &wa)
	if op.State == "applied" && (!wa.Replayed || wa.Base.Checksum != sha([]byte(last.text))) {
		t.Fatalf("round %d: resending applied %s: %+v", round, last.id, wa)
	}
	if op.State == "unknown" && (wa.Replayed || !wa.Changed || wa.Base.Checksum != sha([]byte(last.text))) {
		t.Fatalf("round %d: resending unknown %s: %+v", round, last.id, wa)
	}
	last.answered = true
	w.current, w.base = last.text, wa.Base
	if got := readFile(t, w.path); string(got) != w.current {
		t.Fatalf("round %d: the file after resending %s is not its text", round, last.id)
	}
}

// loop writes until ctx ends or the daemon dies: alternately a werkbaum_write of the whole
// text and line ops on the header and the root line, each exactly predictable.
func (w *crashWriter) loop(ctx context.Context, c *mcpClient) {
	for ctx.Err() == nil {
		w.n++
		header := fmt.Sprintf("%%%% crash test of %s, write %d", w.key, w.n)
		sw := &sentWrite{id: fmt.Sprintf("%s-%d", w.key, w.n)}
		lines := strings.SplitAfter(w.current, "\n")
		if w.n%2 == 0 {
			sw.text = header + "\n" + strings.Join(lines[1:], "")
			sw.tool = "werkbaum_write"
			sw.args = writeArgs(w.key, w.base, sw.id, map[string]any{"text": sw.text})
		} else {
			root := fmt.Sprintf("- [~] #root: Root, written by line ops %d", w.n)
			sw.text = header + "\n" + root + "\n" + strings.Join(lines[2:], "")
			sw.tool = "werkbaum_apply_ops"
			sw.args = writeArgs(w.key, w.base, sw.id, map[string]any{"ops": []map[string]any{
				{"op": "replace", "index": 0, "count": 2, "lines": []string{header, root}}}})
		}
		w.possible[sw.text] = true
		w.sent = append(w.sent, sw)
		a, err := c.call(ctx, sw.tool, sw.args)
		if err != nil {
			if errors.Unwrap(err) == nil {
				// No transport error underneath: the daemon answered, with an HTTP status or
				// a JSON-RPC error, refusing a write no client could be refused here.
				w.err = fmt.Errorf("%s refused by a live daemon: %w", sw.id, err)
			}
			return // killed (or cancelled) mid-request: settled after the restart
		}
		var wa writeAnswer
		if a.IsError || a.decode(&wa) != nil || !wa.Changed || wa.Base.Checksum != sha([]byte(sw.text)) {
			w.err = fmt.Errorf("%s: %s %s", sw.id, a.Text, a.Structured)
			return
		}
		sw.answered = true
		w.current, w.base = sw.text, wa.Base
	}
}

// audit checks every request of the writer on a fresh start: applied or unknown,
// answered ones applied, applied ones carrying their text's checksum and the revisions 2,
// 3, … in send order without a gap or a repeat, and the file the last applied text.
func (w *crashWriter) audit(t *testing.T, c *mcpClient) (applied, unknown int) {
	t.Helper()
	wantRev := uint64(2)
	lastApplied := w.initial
	for _, sw := range w.sent {
		op := c.operation(t, w.key, sw.id)
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
	if r := c.read(t, w.key); r.Text != lastApplied || r.Base.Revision != wantRev-1 {
		t.Fatalf("%s: final file is not the last applied write (revision %d, want %d)", w.key, r.Base.Revision, wantRev-1)
	}
	return applied, unknown
}
