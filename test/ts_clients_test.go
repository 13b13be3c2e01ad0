package test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The official TypeScript MCP clients as real peers: the SDK v1 (@modelcontextprotocol/sdk)
// and the v2 client (@modelcontextprotocol/client), the clients most hosts embed, run the
// plan workflow against a real talkd, over Streamable HTTP and through `talk mcp`, in each
// protocol era they speak; and the MCP Inspector's CLI lists the tools with --strict. The
// scripts live in test/clients (a Node project of its own, installed by `npm ci` in
// .ci/run); without its node_modules these tests skip, so `go test ./...` on a fresh clone
// still passes.

// tsCombos are the client × transport × era combinations the workflow runs in: v1 speaks
// only the 2025 era, the v2 client also the 2026 era when pinned to it.
var tsCombos = []struct{ sdk, transport, era string }{
	{"v1", "http", "2025"}, {"v1", "stdio", "2025"},
	{"v2", "http", "2025"}, {"v2", "stdio", "2025"},
	{"v2", "http", "2026"}, {"v2", "stdio", "2026"},
}

// workflowPlan is the plan every workflow run starts from (workflow.mjs relies on it: #a
// and #b planned, no warnings, so that every warning a write brings is new).
const workflowPlan = "- [ ] #root: Root\n  - [ ] #a: Alpha (S) @jörg\n  - [ ] #b: Beta (S) @Müller\n- [ ] #side: Side (XS)\n"

// tsClientsDir is test/clients, or skips the test when its packages are not installed.
func tsClientsDir(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(repoRoot(), "test", "clients")
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@modelcontextprotocol", "sdk")); err != nil {
		t.Skipf("the TypeScript clients are not installed (run: cd test/clients && npm ci): %v", err)
	}
	if _, err := exec.LookPath("node"); err != nil {
		t.Skipf("no node on PATH: %v", err)
	}
	return dir
}

// runNode runs one client script with node and fails the test if it exits non-zero (every
// script prints one line per check and exits 1 if any failed).
func runNode(t *testing.T, node, dir string, env []string, script string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, append([]string{script}, args...)...)
	cmd.Dir = dir
	cmd.Env = env
	cmd.WaitDelay = 5 * time.Second
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Errorf("node %s %s: %v\n%s", script, strings.Join(args, " "), err, out)
	} else {
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		t.Logf("%s", lines[len(lines)-1])
	}
	return string(out)
}

// nodeEnv is the environment of a client script: an isolated HOME, the daemon's URL and
// the talk binary (for the stdio transport), plus extra variables.
func nodeEnv(t *testing.T, d *daemon, extra ...string) []string {
	_, talk := binaries(t)
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "TALK_URL=" + d.URL, "TALK_BIN=" + talk, "NO_COLOR=1"}
	return append(env, extra...)
}

// TestTSClientsWorkflow: each client in each transport and era runs the whole write
// workflow on a plan of its own (workflow.mjs: read, write, same-id retry, stale-base
// conflict, redo, guard refusal, unknown node, operation_get in each state).
func TestTSClientsWorkflow(t *testing.T) {
	t.Parallel()
	dir := tsClientsDir(t)
	var files []planFile
	for _, c := range tsCombos {
		files = append(files, planFile{Key: c.sdk + c.transport + c.era, Text: workflowPlan})
	}
	d, paths := startPlanDaemon(t, files...)
	for _, c := range tsCombos {
		key := c.sdk + c.transport + c.era
		t.Run(c.sdk+"/"+c.transport+"/"+c.era, func(t *testing.T) {
			t.Parallel()
			runNode(t, "node", dir, nodeEnv(t, d), "workflow.mjs",
				"--sdk", c.sdk, "--transport", c.transport, "--era", c.era, "--plan", key, "--path", paths[key])
		})
	}
}

// TestTSClientsSharedMode: in shared mode each client, transport and era reads and writes
// with a writer's token, reads but may not write with a read-only one, and fails within
// 2 s with a wrong one (shared.mjs). The runs share the plan, so they run one at a time.
func TestTSClientsSharedMode(t *testing.T) {
	t.Parallel()
	dir := tsClientsDir(t)
	planPath := filepath.Join(t.TempDir(), "plan.werkbaum")
	if err := os.WriteFile(planPath, []byte(sharedPlan), 0o644); err != nil {
		t.Fatal(err)
	}
	d := startDaemon(t, daemonOptions{Config: sharedConfig(planPath), Env: sharedEnv()})
	for _, c := range tsCombos {
		t.Run(c.sdk+"/"+c.transport+"/"+c.era, func(t *testing.T) {
			runNode(t, "node", dir, nodeEnv(t, d, "TOK_WRITER="+sharedTokens["writer"], "TOK_READER="+sharedTokens["reader"]),
				"shared.mjs", "--sdk", c.sdk, "--transport", c.transport, "--era", c.era, "--plan", "p", "--path", planPath)
		})
	}
	text := string(readFile(t, planPath))
	for _, c := range tsCombos {
		if n := strings.Count(text, "#"+c.sdk+c.transport+c.era+":"); n != 1 {
			t.Errorf("the writer of %s/%s/%s is in the plan %d times, want once:\n%s", c.sdk, c.transport, c.era, n, text)
		}
	}
}

// TestTSClientsConcurrentWriters: 20 TypeScript SDK v1 clients write at once and each
// redoes on conflict until applied (writers.mjs): 20 applied, each node exactly once.
func TestTSClientsConcurrentWriters(t *testing.T) {
	t.Parallel()
	dir := tsClientsDir(t)
	d, paths := startPlanDaemon(t, planFile{Key: "w", Text: "- [ ] #root: Root\n  - [ ] #a: Alpha (S) @jörg\n- [ ] #side: Side (XS)\n"})
	runNode(t, "node", dir, nodeEnv(t, d), "writers.mjs", "--plan", "w", "--path", paths["w"], "--writers", "20")
	// The file, checked here too: the script could not have written it itself.
	text := string(readFile(t, paths["w"]))
	for i := range 20 {
		if n := strings.Count(text, fmt.Sprintf("#w%d: Writer %d of Jörg", i, i)); n != 1 {
			t.Errorf("writer %d's node is in the plan %d times, want once", i, n)
		}
	}
}

// TestInspectorStrictToolsList: the MCP Inspector's CLI (run on the Node ≥ 22 it needs,
// installed from npm in test/clients/inspector) lists talkd's tools over HTTP and through
// `talk mcp` with --strict: exit 0, every tool listed, and not one portability warning.
func TestInspectorStrictToolsList(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(repoRoot(), "test", "clients", "inspector")
	bin := filepath.Join(dir, "node_modules", ".bin")
	node := filepath.Join(bin, "node")
	launcher := filepath.Join(dir, "node_modules", "@modelcontextprotocol", "inspector", "clients", "launcher", "build", "index.js")
	for _, p := range []string{node, launcher} {
		if _, err := os.Stat(p); err != nil {
			t.Skipf("the MCP Inspector is not installed (run: cd test/clients/inspector && npm ci): %v", err)
		}
	}
	_, talk := binaries(t)
	d, _ := startPlanDaemon(t, planFile{Key: "p", Text: workflowPlan}) // the plan tools exist only with a plan
	targets := map[string][]string{
		"http":  {d.URL + "/mcp"},
		"stdio": {"--transport", "stdio", talk, "mcp", "--url", d.URL},
	}
	for name, target := range targets {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			args := append([]string{launcher, "--cli"}, target...)
			args = append(args, "--method", "tools/list", "--strict")
			cmd := exec.CommandContext(ctx, node, args...)
			cmd.Dir = t.TempDir()
			// The Inspector's own children must find the Node ≥ 22 first.
			cmd.Env = []string{"PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH"), "HOME=" + t.TempDir(), "NO_COLOR=1"}
			cmd.WaitDelay = 5 * time.Second
			var stdout, stderr syncBuffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			var exit *exec.ExitError
			if err != nil && !errors.As(err, &exit) {
				t.Fatalf("inspector: %v\n%s", err, stderr.String())
			}
			if err != nil {
				t.Errorf("inspector --strict exited with %v (6 = an error-severity portability problem):\n%s", err, stderr.String())
			}
			for _, bad := range []string{"Warning:", "Error:"} {
				if strings.Contains(stderr.String(), bad) {
					t.Errorf("inspector --strict reports problems:\n%s", stderr.String())
					break
				}
			}
			var list struct {
				Tools []struct {
					Name string `json:"name"`
				} `json:"tools"`
			}
			if err := json.Unmarshal([]byte(stdout.String()), &list); err != nil {
				t.Fatalf("inspector stdout is not the tools/list result: %v\n%s", err, stdout.String())
			}
			got := map[string]bool{}
			for _, tool := range list.Tools {
				got[tool.Name] = true
			}
			for _, want := range []string{"speak", "plans_list", "werkbaum_read", "werkbaum_inspect", "werkbaum_write", "werkbaum_apply_ops",
				"werkbaum_set_status", "werkbaum_add_node", "werkbaum_move_node", "werkbaum_set_size", "werkbaum_remove_node", "operation_get"} {
				if !got[want] {
					t.Errorf("the inspector does not list %s: %v", want, got)
				}
			}
			if testing.Verbose() {
				t.Logf("inspector stderr:\n%s", stderr.String())
			}
		})
	}
}
