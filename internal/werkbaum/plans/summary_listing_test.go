package plans

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"talkd/internal/config"
	"talkd/internal/queue"
	"talkd/internal/werkbaum"
)

// TestListingWaitsOnceForAllPlans: /status and plans_list summarize every plan; while the
// engine still counts several of them (a daemon just started with large plans), the
// listing answers them "pending" after one summaryWait in all, not one per plan, and
// gives each plan's counts once they are there.
func TestListingWaitsOnceForAllPlans(t *testing.T) {
	const n = 4
	dir := t.TempDir()
	var cfg []config.Plan
	var keys []string
	for i := range n {
		key := fmt.Sprintf("p%d", i)
		path := filepath.Join(dir, key+".werkbaum")
		text := fmt.Sprintf("%%%% plan %d\n[~] #root: Release (L)\n  - [ ] #auth: Login @jörg (S)\n  - [ ] #docs: Docs @Müller (XS)\n", i)
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		cfg = append(cfg, config.Plan{Key: key, Path: path, Lang: "en"})
		keys = append(keys, key)
	}
	svc, err := New(Options{Plans: cfg, Engine: testEngine(t, werkbaum.Options{}), DB: Bolt(stateDB(t, dir)), Lanes: &queue.Lanes{}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { svc.Close() })
	svc.warming.Wait() // the start-up counts are done; the test's own entries take their place
	ctx := context.Background()
	counting := make([]*summaryEntry, n)
	for i, key := range keys {
		snap, err := svc.Read(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		// A count the engine is still working on: done is closed below.
		counting[i] = &summaryEntry{sum: snap.Base.Checksum, done: make(chan struct{})}
		svc.cache.mu.Lock()
		svc.cache.summaries[key] = counting[i]
		svc.cache.mu.Unlock()
	}

	start := time.Now()
	sums := svc.SummarizeAll(ctx, keys)
	took := time.Since(start)
	for i, sum := range sums {
		if sum.Key != keys[i] || sum.Analysis != "pending" || sum.Revision != 1 || sum.Error != "" {
			t.Errorf("summary %d while counting: %+v", i, sum)
		}
	}
	// One wait for all: well under the n waits of plans asked one after the other.
	if took < summaryWait || took >= time.Duration(n-1)*summaryWait {
		t.Errorf("a listing of %d plans being counted took %v; want one wait of %v in all", n, took, summaryWait)
	}

	for i, ent := range counting {
		ent.nodes, ent.warnings = 3+i, i
		close(ent.done)
	}
	start = time.Now()
	for i, sum := range svc.SummarizeAll(ctx, keys) {
		if sum.Analysis != "" || sum.Nodes != 3+i || sum.Warnings != i {
			t.Errorf("summary %d once counted: %+v", i, sum)
		}
	}
	if took := time.Since(start); took >= summaryWait {
		t.Errorf("a listing of counted plans waited %v", took)
	}
	if sum := svc.Summarize(ctx, "p2"); sum.Nodes != 5 || sum.Warnings != 2 {
		t.Errorf("Summarize of one plan: %+v", sum)
	}
}
