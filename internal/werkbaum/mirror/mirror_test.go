package mirror

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.etcd.io/bbolt"

	"talkd/internal/werkbaum/plans"
)

// repo makes a throw-away repository with a committed plan file and returns the plan path.
func repo(t *testing.T, text string) (dir, plan string) {
	t.Helper()
	dir = t.TempDir()
	gitIn(t, dir, "init", "-q")
	gitIn(t, dir, "config", "user.name", "Test")
	gitIn(t, dir, "config", "user.email", "test@example.org")
	gitIn(t, dir, "config", "commit.gpgsign", "false")
	plan = filepath.Join(dir, "plan.werkbaum")
	if err := os.WriteFile(plan, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	gitIn(t, dir, "add", "plan.werkbaum")
	gitIn(t, dir, "commit", "-q", "-m", "start")
	return dir, plan
}

func gitIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// agentWrite writes text to the plan as the store would and tells the mirror.
func agentWrite(t *testing.T, m *Mirror, plan string, rev uint64, agent, text string) string {
	t.Helper()
	old, err := os.ReadFile(plan)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(plan, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return m.Commit(context.Background(), plans.WriteEvent{
		Plan: "p", Path: plan, Revision: rev, Author: plans.Author{Client: "local", Agent: agent},
		OldText: string(old), NewText: text,
	}, "edited")
}

func TestPendingWritesSurviveARestart(t *testing.T) {
	dir, plan := repo(t, "[ ] A\n")
	db, err := bbolt.Open(filepath.Join(t.TempDir(), "state.db"), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	m, err := NewMirror(MirrorOptions{DB: db})
	if err != nil {
		t.Fatal(err)
	}
	lock := filepath.Join(dir, ".git", "index.lock")
	if err := os.WriteFile(lock, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if got := agentWrite(t, m, plan, 2, "Ada", "[x] A\n"); !strings.HasPrefix(got, "failed: ") || !strings.Contains(got, "index.lock") {
		t.Fatalf("commit with index.lock present: %q", got)
	}
	if s := m.State("p"); s.State != "failed" || s.Pending != 1 || s.Error == "" {
		t.Fatalf("state after failure: %+v", s)
	}
	os.Remove(lock)

	// A new Mirror on the same database (a daemon restart) still knows the pending write.
	m2, err := NewMirror(MirrorOptions{DB: db})
	if err != nil {
		t.Fatal(err)
	}
	if got := agentWrite(t, m2, plan, 3, "Bob", "[x] A\n[ ] B\n"); !strings.HasPrefix(got, "committed ") {
		t.Fatalf("retry: %q", got)
	}
	msg := gitIn(t, dir, "log", "-1", "--format=%B")
	for _, want := range []string{"p: revision 3 via Bob", "r2 local (Ada) edited", "r3 local (Bob) edited",
		"Werkbaum-Changed-By: local (Ada)\nWerkbaum-Changed-By: local (Bob)\nWerkbaum-Version: 3"} {
		if !strings.Contains(msg, want) {
			t.Errorf("commit message lacks %q:\n%s", want, msg)
		}
	}
	if strings.Contains(msg, "outside talkd") {
		t.Errorf("no outside change happened, yet the message says so:\n%s", msg)
	}
	s := m2.State("p")
	if s.State != "committed" || s.Pending != 0 || s.Revision != 3 || s.Commit != strings.TrimSpace(gitIn(t, dir, "rev-parse", "HEAD")) {
		t.Fatalf("state after commit: %+v", s)
	}
}

func TestHangingHookTimesOut(t *testing.T) {
	dir, plan := repo(t, "[ ] A\n")
	hook := filepath.Join(dir, ".git", "hooks", "pre-commit")
	if err := os.WriteFile(hook, []byte("#!/bin/sh\nsleep 30\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	m, err := NewMirror(MirrorOptions{Timeout: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	got := agentWrite(t, m, plan, 2, "Ada", "[x] A\n")
	if !strings.HasPrefix(got, "failed: ") || !strings.Contains(got, "timed out") {
		t.Fatalf("hanging hook: %q", got)
	}
	// The bound is the timeout plus the pipe grace (WaitDelay), not the hook's 30 s.
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("the commit took %s despite the timeout", d)
	}
}

func TestInheritedGitDirIsIgnored(t *testing.T) {
	dir, plan := repo(t, "[ ] A\n")
	other, _ := repo(t, "other\n")
	t.Setenv("GIT_DIR", filepath.Join(other, ".git"))
	t.Setenv("GIT_INDEX_FILE", filepath.Join(other, ".git", "index"))
	m, err := NewMirror(MirrorOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := agentWrite(t, m, plan, 2, "Ada", "[x] A\n"); !strings.HasPrefix(got, "committed ") {
		t.Fatalf("commit: %q", got)
	}
	os.Unsetenv("GIT_DIR")
	os.Unsetenv("GIT_INDEX_FILE")
	if n := strings.TrimSpace(gitIn(t, dir, "rev-list", "--count", "HEAD")); n != "2" {
		t.Errorf("plan repository has %s commits, want 2", n)
	}
	if n := strings.TrimSpace(gitIn(t, other, "rev-list", "--count", "HEAD")); n != "1" {
		t.Errorf("the repository named by GIT_DIR got a commit (%s commits)", n)
	}
}

func TestUntrackedPlanIsAdded(t *testing.T) {
	dir := t.TempDir()
	gitIn(t, dir, "init", "-q")
	gitIn(t, dir, "config", "user.name", "Test")
	gitIn(t, dir, "config", "user.email", "test@example.org")
	plan := filepath.Join(dir, "plan.werkbaum")
	if err := os.WriteFile(plan, []byte("[ ] A\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := NewMirror(MirrorOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := agentWrite(t, m, plan, 2, "Ada", "[x] A\n"); !strings.HasPrefix(got, "committed ") {
		t.Fatalf("first commit on an unborn branch: %q", got)
	}
	if files := strings.TrimSpace(gitIn(t, dir, "show", "--name-only", "--format=", "HEAD")); files != "plan.werkbaum" {
		t.Fatalf("commit holds %q", files)
	}
}

// BenchmarkCommit measures one mirror commit (four git calls) of a small plan: the time an
// agent write with mirror = true spends after the file is written.
func BenchmarkCommit(b *testing.B) {
	dir := b.TempDir()
	for _, args := range [][]string{{"init", "-q"}, {"config", "user.name", "B"}, {"config", "user.email", "b@example.org"}, {"config", "commit.gpgsign", "false"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	plan := filepath.Join(dir, "plan.werkbaum")
	m, err := NewMirror(MirrorOptions{})
	if err != nil {
		b.Fatal(err)
	}
	old := ""
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		text := fmt.Sprintf("[x] Step %d\n", i)
		if err := os.WriteFile(plan, []byte(text), 0o644); err != nil {
			b.Fatal(err)
		}
		got := m.Commit(context.Background(), plans.WriteEvent{Plan: "p", Path: plan, Revision: uint64(i + 2),
			Author: plans.Author{Client: "local", Agent: "bench"}, OldText: old, NewText: text}, "edited")
		if !strings.HasPrefix(got, "committed ") {
			b.Fatalf("commit %d: %s", i, got)
		}
		old = text
	}
}
