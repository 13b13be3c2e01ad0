package test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestPlanConcurrentWriters: 8 clients × 100 logical writes against ONE plan over HTTP.
// Client i owns the node #c<i>; its logical write j appends " j" to that node's line with
// werkbaum_apply_ops (a read-modify-write of the line it read). On a conflict the client
// reads again and retries under a NEW request id, after a short random pause. At the end
// every client's line reads "0 1 … 99" (a lost update would miss a number, a doubled
// write would repeat one), exactly one request id per logical write is journalled as
// applied and the others as conflicts, the applied revisions are exactly 2…801, and the
// plan has no structural warning.
//
// The plan stays small on purpose: the engine's cost grows with the plan, and this test is
// about the store's serialisation, not the engine's speed (see BenchmarkPlan* for that).
func TestPlanConcurrentWriters(t *testing.T) {
	t.Parallel()
	const clients, writes = 8, 100
	var b strings.Builder
	b.WriteString("%% concurrency plan\n- [~] #top: Shared plan\n")
	for i := range clients {
		fmt.Fprintf(&b, "  - [ ] #c%d: Client %d wrote\n", i, i)
	}
	d, paths := startPlanDaemon(t, planFile{Key: "conc", Text: b.String()})

	// Bounded: typically 25 s on a quiet machine, about a minute under heavy load.
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Second)
	defer cancel()
	results := runAppendWriters(t, ctx, d, func(int) string { return "conc" }, clients, writes)

	// The file: every client's line holds each of its writes exactly once, in order.
	text := string(readFile(t, paths["conc"]))
	checkAppendedLines(t, text, clients, writes)

	// The journal agrees with what each client was told, and with the file.
	var all []writeAttempt
	for _, rs := range results {
		all = append(all, rs...)
	}
	appliedPer := map[string]int{}
	var revs []int
	var conflicts int
	c := newMCPClient(d)
	var mu sync.Mutex
	var jwg sync.WaitGroup
	sem := make(chan struct{}, 8)
	for _, at := range all {
		if at.state == "applied" {
			appliedPer[at.logical]++
			revs = append(revs, int(at.rev))
		} else {
			conflicts++
		}
		jwg.Add(1)
		sem <- struct{}{}
		go func() {
			defer jwg.Done()
			defer func() { <-sem }()
			a, err := c.call(ctx, "operation_get", map[string]any{"plan": "conc", "request_id": at.rid})
			var op opAnswer
			if err == nil {
				err = a.decode(&op)
			}
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				t.Errorf("operation_get %s: %v", at.rid, err)
				return
			}
			if op.State != at.state || (at.state == "applied" && op.Revision != at.rev) {
				t.Errorf("journal says %s (revision %d) for %s, the client was told %s (revision %d)", op.State, op.Revision, at.rid, at.state, at.rev)
			}
			if op.Author == nil || op.Author.Agent != "writer-"+strings.TrimPrefix(strings.Split(at.logical, ".")[0], "c") {
				t.Errorf("author of %s: %+v", at.rid, op.Author)
			}
		}()
	}
	jwg.Wait()
	if len(appliedPer) != clients*writes {
		t.Fatalf("%d logical writes applied, want %d", len(appliedPer), clients*writes)
	}
	for k, n := range appliedPer {
		if n != 1 {
			t.Errorf("%s: %d applied request ids", k, n)
		}
	}
	sort.Ints(revs)
	for k, r := range revs {
		if r != k+2 {
			t.Fatalf("applied revisions are not 2…%d: position %d has %d", clients*writes+1, k, r)
		}
	}
	last := c.read(t, "conc")
	if last.Base.Revision != uint64(clients*writes+1) || last.Text != text {
		t.Fatalf("final read: revision %d", last.Base.Revision)
	}
	var in struct {
		Nodes    []map[string]any `json:"nodes"`
		Warnings []map[string]any `json:"warnings"`
	}
	c.ok(t, "werkbaum_inspect", map[string]any{"plan": "conc", "detail": "full", "include": []string{"tree", "warnings"}}, &in)
	for _, w := range in.Warnings {
		if structuralTypes[w["type"].(string)] {
			t.Errorf("structural warning after the run: %v", w)
		}
	}
	if len(in.Nodes) != 1+clients {
		t.Errorf("inspect sees %d nodes", len(in.Nodes))
	}
	t.Logf("%d logical writes, %d conflicts retried", clients*writes, conflicts)
}

// TestPlanTwoKeysOneFile: two plan keys configured on the same file (e.g. for different
// grants) share one write lane, so writers through both keys never overwrite each other:
// 4 clients per key × 25 appends, each exactly once in the file, each journalled as
// applied exactly once under the key it was sent to.
func TestPlanTwoKeysOneFile(t *testing.T) {
	t.Parallel()
	const clients, writes = 8, 25
	var b strings.Builder
	b.WriteString("%% one file, two keys\n- [~] #top: Shared plan\n")
	for i := range clients {
		fmt.Fprintf(&b, "  - [ ] #c%d: Client %d wrote\n", i, i)
	}
	path := filepath.Join(t.TempDir(), "shared.werkbaum")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	d := startDaemon(t, daemonOptions{Config: plansConfig(map[string]string{"one": path, "two": path})})
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	keyOf := func(i int) string { return []string{"one", "two"}[i%2] }
	results := runAppendWriters(t, ctx, d, keyOf, clients, writes)

	checkAppendedLines(t, string(readFile(t, path)), clients, writes)
	c := newMCPClient(d)
	for i, rs := range results {
		applied := map[string]int{}
		for _, at := range rs {
			if op := c.operation(t, keyOf(i), at.rid); op.State != at.state {
				t.Errorf("%s under %s: journal %s, answered %s", at.rid, keyOf(i), op.State, at.state)
			}
			if at.state == "applied" {
				applied[at.logical]++
			}
		}
		for j := range writes {
			if n := applied[fmt.Sprintf("c%d.%d", i, j)]; n != 1 {
				t.Errorf("c%d.%d applied %d times", i, j, n)
			}
		}
	}
}

// writeAttempt is one request of an append writer and what it was answered.
type writeAttempt struct {
	rid     string
	state   string // applied or conflict, as the write answered
	logical string // "c<i>.<j>"
	rev     uint64
}

// checkAppendedLines checks the plan text runAppendWriters leaves: two lines, then one
// line per client holding each of its writes exactly once, in order.
func checkAppendedLines(t *testing.T, text string, clients, writes int) {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	if len(lines) != 2+clients {
		t.Fatalf("the plan has %d lines, want %d:\n%s", len(lines), 2+clients, text)
	}
	var want strings.Builder
	for j := range writes {
		fmt.Fprintf(&want, " %d", j)
	}
	for i := range clients {
		if got, exp := lines[2+i], fmt.Sprintf("  - [ ] #c%d: Client %d wrote%s", i, i, want.String()); got != exp {
			t.Errorf("line of client %d:\n%s\nwant\n%s", i, got, exp)
		}
	}
}

// runAppendWriters runs clients goroutines; client i appends " j" for j = 0…writes-1 to
// its own line "  - [ ] #c<i>: Client <i> wrote" of the plan planOf(i), one
// werkbaum_apply_ops per logical write, retrying a conflict with a fresh read, a new
// request id and a random pause. It returns every client's attempts in order.
func runAppendWriters(t *testing.T, ctx context.Context, d *daemon, planOf func(int) string, clients, writes int) [][]writeAttempt {
	t.Helper()
	results := make([][]writeAttempt, clients)
	errs := make(chan error, clients)
	var wg sync.WaitGroup
	for i := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := appendWriter(ctx, d, planOf(i), i, writes, &results[i]); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	return results
}

func appendWriter(ctx context.Context, d *daemon, plan string, i, writes int, out *[]writeAttempt) error {
	c := newMCPClient(d)
	c.headers = map[string]string{"X-Talk-Agent": fmt.Sprintf("writer-%d", i)}
	rng := rand.New(rand.NewPCG(uint64(i), 7))
	prefix := fmt.Sprintf("  - [ ] #c%d: Client %d wrote", i, i)
	for j := range writes {
		logical := fmt.Sprintf("c%d.%d", i, j)
		for try := 0; ; try++ {
			if try > 500 {
				return fmt.Errorf("%s: still conflicting after %d tries", logical, try)
			}
			ra, err := c.call(ctx, "werkbaum_read", map[string]any{"plan": plan})
			if err != nil || ra.IsError {
				return fmt.Errorf("%s: read: %v %v", logical, err, ra)
			}
			var snap readAnswer
			if err := ra.decode(&snap); err != nil {
				return err
			}
			index, line := -1, ""
			for k, l := range strings.Split(snap.Text, "\n") {
				if strings.HasPrefix(l, prefix) {
					index, line = k, l
				}
			}
			if index < 0 {
				return fmt.Errorf("%s: my line is gone:\n%s", logical, snap.Text)
			}
			rid := fmt.Sprintf("%s/try%d", logical, try)
			a, err := c.call(ctx, "werkbaum_apply_ops", writeArgs(plan, snap.Base, rid, map[string]any{
				"ops": []map[string]any{{"op": "replace", "index": index, "count": 1, "lines": []string{fmt.Sprintf("%s %d", line, j)}}}}))
			if err != nil {
				return fmt.Errorf("%s: %w", rid, err)
			}
			if a.IsError {
				if a.Map["conflict"] != true {
					return fmt.Errorf("%s: not a conflict: %s %s", rid, a.Text, a.Structured)
				}
				*out = append(*out, writeAttempt{rid: rid, state: "conflict", logical: logical})
				// Optimistic writers that all retry at once can starve one of them; a
				// random pause, growing with the tries, lets everyone through.
				time.Sleep(time.Duration(rng.IntN(5<<min(try, 5))) * time.Millisecond)
				continue
			}
			var w writeAnswer
			if err := a.decode(&w); err != nil || !w.Changed || w.Replayed || len(w.Added) != 0 {
				return fmt.Errorf("%s: answer %+v (%v)", rid, w, err)
			}
			*out = append(*out, writeAttempt{rid: rid, state: "applied", logical: logical, rev: w.Revision})
			break
		}
	}
	return nil
}
