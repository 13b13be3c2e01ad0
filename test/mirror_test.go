package test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The git mirror at the process boundary (issue 8): a real talkd, plan tools called over
// POST /mcp, and a throw-away repository inspected with the git command.

const mirrorPlan = `[~] #auth: Login (M)
  - [ ] #auth.token: Token check (S)
  - [ ] #auth.form: Login form (S)
`

// mirRepo is a throw-away repository holding the plan at docs/plan.werkbaum (committed)
// and two other committed files the tests change.
type mirRepo struct {
	dir, plan string
}

func newMirRepo(t *testing.T) *mirRepo {
	t.Helper()
	r := &mirRepo{dir: t.TempDir()}
	r.git(t, "init", "-q")
	r.git(t, "config", "user.name", "Plan Tester")
	r.git(t, "config", "user.email", "plans@example.org")
	r.git(t, "config", "commit.gpgsign", "false")
	r.plan = filepath.Join(r.dir, "docs", "plan.werkbaum")
	r.write(t, "docs/plan.werkbaum", mirrorPlan)
	r.write(t, "staged.txt", "staged v1\n")
	r.write(t, "unstaged.txt", "unstaged v1\n")
	r.git(t, "add", ".")
	r.git(t, "commit", "-q", "-m", "start")
	return r
}

func (r *mirRepo) write(t *testing.T, rel, text string) {
	t.Helper()
	p := filepath.Join(r.dir, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// git runs git in the repository (argv, no shell) and returns its standard output.
func (r *mirRepo) git(t *testing.T, args ...string) string {
	t.Helper()
	return r.gitIn(t, nil, args...)
}

func (r *mirRepo) gitIn(t *testing.T, stdin []byte, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = r.dir
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, stderr.String())
	}
	return string(out)
}

func (r *mirRepo) commits(t *testing.T) int {
	t.Helper()
	var n int
	fmt.Sscan(r.git(t, "rev-list", "--count", "HEAD"), &n)
	return n
}

// trailers parses the last commit's message with git interpret-trailers --parse.
func (r *mirRepo) trailers(t *testing.T) []string {
	t.Helper()
	msg := r.git(t, "log", "-1", "--format=%B")
	out := strings.TrimSpace(r.gitIn(t, []byte(msg), "interpret-trailers", "--parse"))
	if out == "" {
		return nil
	}
	return strings.Split(out, "\n")
}

// userState is everything of the user's own work that the mirror must leave alone.
func (r *mirRepo) userState(t *testing.T) string {
	t.Helper()
	return "cached:\n" + r.git(t, "diff", "--cached") + "\nworktree:\n" + r.git(t, "diff") +
		"\nstatus:\n" + r.git(t, "status", "--porcelain", "--untracked-files=all")
}

// mirDaemon serves the repository's plan as key "auth" with the mirror on.
func mirDaemon(t *testing.T, r *mirRepo, home string) *daemon {
	t.Helper()
	return startDaemon(t, daemonOptions{Home: home, Config: fmt.Sprintf(`version = 1
[[plans]]
key = "auth"
path = %q
lang = "en"
mirror = true
`, r.plan)})
}

// mirSetStatus sets a node's status through werkbaum_set_status, as agent, and returns
// the write's structured answer.
func mirSetStatus(t *testing.T, c *mcpClient, id, status, agent, requestID string) map[string]any {
	t.Helper()
	base := c.read(t, "auth").Base
	a := c.ok(t, "werkbaum_set_status", writeArgs("auth", base, requestID,
		map[string]any{"id": id, "status": status, "agent": agent}), nil)
	return a.Map
}

func TestMirrorCommitsOnlyThePlanFile(t *testing.T) {
	t.Parallel()
	r := newMirRepo(t)
	// The user's own work in progress: a staged change, an unstaged change, a new staged
	// file and an untracked one.
	r.write(t, "staged.txt", "staged v2\n")
	r.git(t, "add", "staged.txt")
	r.write(t, "unstaged.txt", "unstaged v2\n")
	r.write(t, "added.txt", "new and staged\n")
	r.git(t, "add", "added.txt")
	r.write(t, "untracked.txt", "untracked\n")
	before := r.userState(t)
	startCommits := r.commits(t)

	d := mirDaemon(t, r, "")
	c := newMCPClient(d)
	res := mirSetStatus(t, c, "auth.token", "done", "Claude Code", "m1")
	rev := uint64(res["revision"].(float64))
	if m, _ := res["mirror"].(string); !strings.HasPrefix(m, "committed ") {
		t.Fatalf("write result mirror = %q, want committed …", res["mirror"])
	}
	if n := r.commits(t); n != startCommits+1 {
		t.Fatalf("%d commits after one agent write, want %d", n, startCommits+1)
	}
	if files := strings.TrimSpace(r.git(t, "show", "--name-only", "--format=", "HEAD")); files != "docs/plan.werkbaum" {
		t.Fatalf("the commit holds %q, want only docs/plan.werkbaum", files)
	}
	if committed := r.git(t, "show", "HEAD:docs/plan.werkbaum"); committed != string(readFile(t, r.plan)) ||
		!strings.Contains(committed, "[x] #auth.token") {
		t.Fatalf("committed plan differs from the file:\n%s", committed)
	}
	subject := strings.TrimSpace(r.git(t, "log", "-1", "--format=%s"))
	if want := fmt.Sprintf("auth: revision %d via Claude Code", rev); subject != want {
		t.Errorf("subject %q, want %q", subject, want)
	}
	body := r.git(t, "log", "-1", "--format=%b")
	if want := fmt.Sprintf("r%d local (Claude Code) set #auth.token to done", rev); !strings.Contains(body, want) {
		t.Errorf("body lacks %q:\n%s", want, body)
	}
	if strings.Contains(body, "outside talkd") {
		t.Errorf("no hand edit happened, but the body says so:\n%s", body)
	}
	wantTrailers := []string{"Werkbaum-Changed-By: local (Claude Code)", fmt.Sprintf("Werkbaum-Version: %d", rev)}
	if got := r.trailers(t); strings.Join(got, "\n") != strings.Join(wantTrailers, "\n") {
		t.Errorf("trailers %q, want %q", got, wantTrailers)
	}
	if after := r.userState(t); after != before {
		t.Fatalf("the user's index or work tree changed:\nbefore:\n%s\nafter:\n%s", before, after)
	}

	// A write that changes nothing makes no commit.
	res = mirSetStatus(t, c, "auth.token", "done", "Claude Code", "m2")
	if res["changed"] != false {
		t.Fatalf("setting the same status again changed the plan: %v", res)
	}
	if n := r.commits(t); n != startCommits+1 {
		t.Fatalf("an unchanged write made a commit (%d commits)", n)
	}

	// plans_list and /status name the last mirror commit.
	head := strings.TrimSpace(r.git(t, "rev-parse", "HEAD"))
	var list struct {
		Plans []struct {
			Key    string         `json:"key"`
			Mirror map[string]any `json:"mirror"`
		} `json:"plans"`
	}
	c.ok(t, "plans_list", map[string]any{}, &list)
	if len(list.Plans) != 1 || list.Plans[0].Mirror["commit"] != head || list.Plans[0].Mirror["state"] != "committed" {
		t.Fatalf("plans_list mirror: %+v (HEAD %s)", list.Plans, head)
	}
	_, status := d.getJSON(t, "/status")
	if !strings.Contains(fmt.Sprint(status["plans"]), head) {
		t.Fatalf("/status plans do not name the mirror commit %s: %v", head, status["plans"])
	}
}

func TestMirrorCommitsHandEditsWithANote(t *testing.T) {
	t.Parallel()
	r := newMirRepo(t)
	d := mirDaemon(t, r, "")
	c := newMCPClient(d)
	// The user edits the plan by hand and does not commit.
	r.write(t, "docs/plan.werkbaum", mirrorPlan+"  - [ ] #auth.reset: Password reset (S)\n")
	res := mirSetStatus(t, c, "auth.form", "done", "Codex", "h1")
	if m, _ := res["mirror"].(string); !strings.HasPrefix(m, "committed ") {
		t.Fatalf("mirror = %q", res["mirror"])
	}
	committed := r.git(t, "show", "HEAD:docs/plan.werkbaum")
	if !strings.Contains(committed, "#auth.reset") || !strings.Contains(committed, "[x] #auth.form") {
		t.Fatalf("the commit lacks the hand edit or the agent's change:\n%s", committed)
	}
	body := r.git(t, "log", "-1", "--format=%b")
	rev := uint64(res["revision"].(float64))
	if want := fmt.Sprintf("Also in this commit: changes made to the file outside talkd before r%d.", rev); !strings.Contains(body, want) {
		t.Fatalf("body lacks the note %q:\n%s", want, body)
	}
	if st := strings.TrimSpace(r.git(t, "status", "--porcelain")); st != "" {
		t.Fatalf("work tree not clean after the commit: %q", st)
	}
}

func TestMirrorFailureNeverFailsTheWrite(t *testing.T) {
	t.Parallel()
	r := newMirRepo(t)
	home := t.TempDir()
	d := mirDaemon(t, r, home)
	c := newMCPClient(d)
	start := r.commits(t)

	// A pre-commit hook that refuses: the write stands, the result says the mirror failed.
	hook := filepath.Join(r.dir, ".git", "hooks", "pre-commit")
	if err := os.WriteFile(hook, []byte("#!/bin/sh\necho 'refused by the test hook' >&2\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	res := mirSetStatus(t, c, "auth.token", "done", "Claude Code", "f1")
	first := uint64(res["revision"].(float64))
	if m, _ := res["mirror"].(string); !strings.HasPrefix(m, "failed") || !strings.Contains(m, "refused by the test hook") {
		t.Fatalf("mirror = %q, want failed … with the hook's words", res["mirror"])
	}
	if !strings.Contains(string(readFile(t, r.plan)), "[x] #auth.token") {
		t.Fatal("the write was rolled back by the failed commit")
	}
	if n := r.commits(t); n != start {
		t.Fatalf("a refused commit still made a commit (%d)", n)
	}
	var list struct {
		Plans []struct {
			Mirror map[string]any `json:"mirror"`
		} `json:"plans"`
	}
	c.ok(t, "plans_list", map[string]any{}, &list)
	if m := list.Plans[0].Mirror; m["state"] != "failed" || m["pending"] != float64(1) {
		t.Fatalf("plans_list mirror after the failure: %v", m)
	}

	// The hook is gone: the next write, by another agent, commits both writes.
	os.Remove(hook)
	res = mirSetStatus(t, c, "auth.form", "progress", "Codex", "f2")
	second := uint64(res["revision"].(float64))
	if m, _ := res["mirror"].(string); !strings.HasPrefix(m, "committed ") {
		t.Fatalf("retry: mirror = %q", res["mirror"])
	}
	if n := r.commits(t); n != start+1 {
		t.Fatalf("%d commits, want %d (both writes in one)", n, start+1)
	}
	want := []string{"Werkbaum-Changed-By: local (Claude Code)", "Werkbaum-Changed-By: local (Codex)", fmt.Sprintf("Werkbaum-Version: %d", second)}
	if got := r.trailers(t); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("trailers %q, want %q", got, want)
	}
	body := r.git(t, "log", "-1", "--format=%b")
	for _, line := range []string{
		fmt.Sprintf("r%d local (Claude Code) set #auth.token to done", first),
		fmt.Sprintf("r%d local (Codex) set #auth.form to progress", second),
	} {
		if !strings.Contains(body, line) {
			t.Errorf("body lacks %q:\n%s", line, body)
		}
	}

	// An index.lock left by another git process fails the commit; the pending write
	// survives a daemon restart and goes into the next commit.
	lock := filepath.Join(r.dir, ".git", "index.lock")
	if err := os.WriteFile(lock, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	res = mirSetStatus(t, c, "auth.form", "done", "Codex", "f3")
	third := uint64(res["revision"].(float64))
	if m, _ := res["mirror"].(string); !strings.HasPrefix(m, "failed") || !strings.Contains(m, "index.lock") {
		t.Fatalf("mirror with index.lock = %q", res["mirror"])
	}
	if code := d.terminate(t); code != 0 {
		t.Fatalf("talkd exit code %d", code)
	}
	os.Remove(lock)
	d = mirDaemon(t, r, home)
	c = newMCPClient(d)
	res = mirSetStatus(t, c, "auth", "done", "Codex", "f4")
	if m, _ := res["mirror"].(string); !strings.HasPrefix(m, "committed ") {
		t.Fatalf("after restart: mirror = %q", res["mirror"])
	}
	body = r.git(t, "log", "-1", "--format=%b")
	if !strings.Contains(body, fmt.Sprintf("r%d local (Codex) set #auth.form to done", third)) {
		t.Fatalf("the write pending across the restart is missing:\n%s", body)
	}
	if n := r.commits(t); n != start+2 {
		t.Fatalf("%d commits, want %d", n, start+2)
	}
}

func TestMirrorOutsideARepository(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	plan := filepath.Join(dir, "plan.werkbaum")
	if err := os.WriteFile(plan, []byte(mirrorPlan), 0o644); err != nil {
		t.Fatal(err)
	}
	// GIT_CEILING_DIRECTORIES keeps git from finding a repository above the temp folder.
	d := startDaemon(t, daemonOptions{Env: map[string]string{"GIT_CEILING_DIRECTORIES": filepath.Dir(dir)}, Config: fmt.Sprintf(`version = 1
[[plans]]
key = "auth"
path = %q
mirror = true
`, plan)})
	c := newMCPClient(d)
	res := mirSetStatus(t, c, "auth.token", "done", "Claude Code", "n1")
	if m, _ := res["mirror"].(string); !strings.HasPrefix(m, "failed") || !strings.Contains(m, "not in a git work tree") {
		t.Fatalf("mirror = %q", res["mirror"])
	}
	if !strings.Contains(string(readFile(t, plan)), "[x] #auth.token") {
		t.Fatal("the write did not stand")
	}
}

// TestMirrorSlowHookNeverHoldsTheLane: a pre-commit hook that sleeps 3 s does not hold up
// the plan's writes (the commit runs in the mirror's worker, outside the write lane: before,
// every write waited for its hook). The first write's answer says the commit is still
// running, the later ones answer at once; in the end every write is in a mirror commit,
// in order, and the plan's HEAD holds the file as written.
func TestMirrorSlowHookNeverHoldsTheLane(t *testing.T) {
	t.Parallel()
	r := newMirRepo(t)
	hook := filepath.Join(r.dir, ".git", "hooks", "pre-commit")
	if err := os.WriteFile(hook, []byte("#!/bin/sh\nsleep 3\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	d := mirDaemon(t, r, t.TempDir())
	c := newMCPClient(d)
	start := r.commits(t)

	var revisions []uint64
	writes := []struct{ id, status string }{{"auth.token", "done"}, {"auth.form", "progress"}, {"auth.form", "done"}, {"auth", "done"}}
	began := time.Now()
	for i, w := range writes {
		t0 := time.Now()
		res := mirSetStatus(t, c, w.id, w.status, "Claude Code", fmt.Sprintf("slow-%d", i))
		took := time.Since(t0)
		revisions = append(revisions, uint64(res["revision"].(float64)))
		m, _ := res["mirror"].(string)
		t.Logf("write %d: %v, mirror %q", i, took, m)
		if !strings.HasPrefix(m, "queued") {
			t.Errorf("write %d: mirror = %q, want queued … (the hook sleeps 3 s)", i, m)
		}
	}
	// Four writes behind a 3 s hook took 12 s and more before; one answer may wait the
	// report's second, the others none.
	if took := time.Since(began); took > 2500*time.Millisecond {
		t.Errorf("four writes took %v: the hook held the write lane", took)
	}

	// Wait for the worker: every write committed, nothing pending.
	deadline := time.Now().Add(30 * time.Second)
	var m map[string]any
	for {
		var list struct {
			Plans []struct {
				Mirror map[string]any `json:"mirror"`
			} `json:"plans"`
		}
		c.ok(t, "plans_list", map[string]any{}, &list)
		m = list.Plans[0].Mirror
		if m["state"] == "committed" && m["pending"] == float64(0) && m["revision"] == float64(revisions[len(revisions)-1]) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the mirror did not catch up: %v", m)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if got, want := r.git(t, "show", "HEAD:docs/plan.werkbaum"), string(readFile(t, r.plan)); got != want {
		t.Fatalf("HEAD holds\n%s\nthe file\n%s", got, want)
	}
	// Every revision is listed once, in order, over the mirror's commits.
	log := r.git(t, "log", "--reverse", "--format=%B", fmt.Sprintf("HEAD~%d..HEAD", r.commits(t)-start))
	last := -1
	for _, rev := range revisions {
		i := strings.Index(log, fmt.Sprintf("r%d ", rev))
		if i < 0 || i < last {
			t.Fatalf("revision %d missing or out of order in the mirror commits:\n%s", rev, log)
		}
		last = i
	}
	if n := r.commits(t) - start; n < 1 || n > len(writes) {
		t.Errorf("%d mirror commits for %d writes", n, len(writes))
	}
}
