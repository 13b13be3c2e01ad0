package mirror

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"talkd/internal/werkbaum/plans"
)

// TestQueuedWritesCommitInOrder: writes queued faster than the plan's worker commits are
// committed in revision order, each listed once: a commit lists every pending write up to
// the one whose text the file holds. Enqueue itself never waits for git (the hook sleeps
// a second), and Wait returns once the queue is drained.
func TestQueuedWritesCommitInOrder(t *testing.T) {
	dir, plan := repo(t, "[ ] A\n")
	hook := filepath.Join(dir, ".git", "hooks", "pre-commit")
	if err := os.WriteFile(hook, []byte("#!/bin/sh\nsleep 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	m, err := NewMirror(MirrorOptions{})
	if err != nil {
		t.Fatal(err)
	}
	texts := []string{"[ ] A\n", "[x] A\n", "[x] A\n[ ] B\n", "[x] A\n[x] B\n"}
	var reports []func(context.Context, time.Duration) string
	start := time.Now()
	for i := 1; i < len(texts); i++ {
		if err := os.WriteFile(plan, []byte(texts[i]), 0o644); err != nil {
			t.Fatal(err)
		}
		reports = append(reports, m.Enqueue(context.Background(), plans.WriteEvent{
			Plan: "p", Path: plan, Revision: uint64(i + 1), Author: plans.Author{Client: "local", Agent: "Ada"},
			OldText: texts[i-1], NewText: texts[i],
		}, "edited"))
	}
	if d := time.Since(start); d > 500*time.Millisecond {
		t.Errorf("enqueueing three writes took %v: it waited for git", d)
	}
	if s := m.State("p"); s.Pending != 3 {
		t.Errorf("pending right after enqueueing: %+v", s)
	}
	var got []string
	for _, r := range reports {
		got = append(got, r(context.Background(), -1))
	}
	for i, g := range got {
		if !strings.HasPrefix(g, "committed ") {
			t.Fatalf("write %d: %q", i, g)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := m.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	// The file held r4's text before the first commit ran, so that commit lists all three
	// (a commit per write would have committed r4's text as r2 and found nothing for r3
	// and r4); each revision appears once, in order.
	log := gitIn(t, dir, "log", "--reverse", "--format=%B", "HEAD~1..HEAD")
	if strings.Count(log, "local (Ada) edited") != 3 || !strings.Contains(log, "r2 local (Ada) edited\nr3 local (Ada) edited\nr4 local (Ada) edited") ||
		!strings.Contains(log, "Werkbaum-Version: 4") {
		t.Errorf("mirror commit should list r2, r3, r4 in order:\n%s", log)
	}
	if n := strings.TrimSpace(gitIn(t, dir, "rev-list", "--count", "HEAD")); n != "2" {
		t.Errorf("%s commits, want the start and one mirror commit", n)
	}
	if s := m.State("p"); s.State != "committed" || s.Pending != 0 || s.Revision != 4 {
		t.Errorf("state after the queue drained: %+v", s)
	}
	if head := gitIn(t, dir, "show", "HEAD:plan.werkbaum"); head != texts[3] {
		t.Errorf("HEAD holds %q", head)
	}
}
