package test

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// treeState records every regular file under root (bytes and mtime) so a test can prove
// that nothing was touched, created or removed.
func treeState(t testing.TB, root string) map[string]fileState {
	t.Helper()
	out := map[string]fileState{}
	err := filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if e.Type().IsRegular() {
			out[p] = stat(t, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func sameTree(t testing.TB, root string, before map[string]fileState, what string) {
	t.Helper()
	after := treeState(t, root)
	if len(after) != len(before) {
		t.Fatalf("%s: %d files before, %d after", what, len(before), len(after))
	}
	for p, s := range before {
		s.same(t, p, what+" ("+p+")")
	}
}

// TestPlanPathsConfinement: a plan configured through a symlink that points outside its
// folder is served as configured (the file the link named at start), and no argument of
// any tool reaches another file: odd plan keys are tool errors naming the key, and no
// tool takes a path.
func TestPlanPathsConfinement(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	confDir, realDir, otherDir := filepath.Join(root, "conf"), filepath.Join(root, "real"), filepath.Join(root, "other")
	for _, dir := range []string{confDir, realDir, otherDir} {
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	realPlan := filepath.Join(realDir, "plan.werkbaum")
	link := filepath.Join(confDir, "p.werkbaum")
	secret := filepath.Join(otherDir, "secret.werkbaum")
	sibling := filepath.Join(confDir, "q.werkbaum")
	for p, text := range map[string]string{
		realPlan: guardPlan,
		secret:   "- [ ] #secret: Not to be served\n",
		sibling:  "- [ ] #q: Not configured\n",
	} {
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(realPlan, link); err != nil {
		t.Fatal(err)
	}
	d := startDaemon(t, daemonOptions{Config: plansConfig(map[string]string{"p": link})})
	c := newMCPClient(d)

	r := c.read(t, "p")
	if r.Text != guardPlan {
		t.Fatalf("read through the symlink: %q", r.Text)
	}
	var w writeAnswer
	c.ok(t, "werkbaum_set_status", writeArgs("p", r.Base, "link-1", map[string]any{"id": "a", "status": "done"}), &w)
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		t.Fatalf("the configured symlink was replaced: %v %v", fi.Mode(), err)
	}
	if got := readFile(t, realPlan); !strings.Contains(string(got), "[x] #a:") || sha(got) != w.Base.Checksum {
		t.Fatalf("the link's target was not written:\n%s", got)
	}

	// Re-pointing the link later does not redirect the daemon: the plan is the file the
	// config named at start.
	if err := os.Remove(link); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, link); err != nil {
		t.Fatal(err)
	}
	secretBefore := stat(t, secret)
	r = c.read(t, "p")
	if strings.Contains(r.Text, "secret") || r.Base != w.Base {
		t.Fatalf("read after re-pointing the link: %q %+v", r.Text, r.Base)
	}
	c.ok(t, "werkbaum_set_status", writeArgs("p", r.Base, "link-2", map[string]any{"id": "b", "status": "done"}), &w)
	secretBefore.same(t, secret, "a write after re-pointing the link")
	if got := readFile(t, realPlan); !strings.Contains(string(got), "[x] #b:") {
		t.Fatalf("the configured file was not written:\n%s", got)
	}
	r = c.read(t, "p")

	// Odd plan keys, through every tool.
	badKeys := []string{"../x", "/etc/passwd", "p/../q", "p\x00", "p\x00/../q", "q", "P", "p ", " p", "./p", "p/",
		realPlan, link, secret, "..", "", "%2e%2e/p", "p\\..\\q"}
	tools := map[string]map[string]any{
		"werkbaum_read":        {},
		"werkbaum_inspect":     {"id": "a"},
		"operation_get":        {"request_id": "link-1"},
		"werkbaum_write":       {"base": r.Base, "request_id": "k", "text": "- [ ] #x: X\n"},
		"werkbaum_apply_ops":   {"base": r.Base, "request_id": "k", "ops": []map[string]any{{"op": "delete", "index": 0, "count": 1}}},
		"werkbaum_set_status":  {"base": r.Base, "request_id": "k", "id": "a", "status": "open"},
		"werkbaum_add_node":    {"base": r.Base, "request_id": "k", "parent": "", "line": "- [ ] #x: X"},
		"werkbaum_move_node":   {"base": r.Base, "request_id": "k", "id": "b", "parent": "side"},
		"werkbaum_set_size":    {"base": r.Base, "request_id": "k", "id": "a", "size": "XL"},
		"werkbaum_remove_node": {"base": r.Base, "request_id": "k", "id": "a", "discard": false},
	}
	before := treeState(t, root)
	time.Sleep(20 * time.Millisecond)
	for tool, extra := range tools {
		for _, key := range badKeys {
			args := map[string]any{"plan": key}
			for k, v := range extra {
				args[k] = v
			}
			a := c.must(t, tool, args)
			if !a.IsError {
				t.Errorf("%s with plan %q was accepted: %s", tool, key, a.Structured)
				continue
			}
			if key == "" {
				if !strings.Contains(a.Text, `"plan"`) {
					t.Errorf("%s without plan: %q", tool, a.Text)
				}
				continue
			}
			if !strings.Contains(a.Text, fmt.Sprintf("unknown plan %q", key)) {
				t.Errorf("%s with plan %q: the error does not name the plan: %q", tool, key, a.Text)
			}
			// Apart from echoing the key, the answer names no file and shows no content.
			if rest := strings.Replace(a.Text, fmt.Sprintf("%q", key), "", 1); strings.Contains(rest, realDir) || strings.Contains(rest, "Not to be served") || strings.Contains(rest, "Not configured") {
				t.Errorf("%s with plan %q leaks a path or another file: %q", tool, key, a.Text)
			}
		}
		// A path smuggled in as an extra argument is an unknown field.
		for _, field := range []string{"path", "file"} {
			args := map[string]any{"plan": "p", field: sibling}
			for k, v := range extra {
				args[k] = v
			}
			if a := c.must(t, tool, args); !a.IsError || !strings.Contains(a.Text, field) {
				t.Errorf("%s with %s: %+v", tool, field, a)
			}
		}
	}
	sameTree(t, root, before, "calls with odd plan keys")
	if op := c.operation(t, "p", "k"); op.State != "unknown" {
		t.Fatalf("a refused call reached the journal of the configured plan: %+v", op)
	}

	// Resources and prompts take plan keys too: the configured one reads the plan, odd
	// ones read nothing.
	_, _, raw := d.request(t, "POST", "/mcp", `{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"werkbaum://plan/p"}}`,
		map[string]string{"MCP-Protocol-Version": "2025-11-25"})
	if !strings.Contains(string(raw), "#side: Side (XS)") {
		t.Fatalf("resources/read werkbaum://plan/p: %s", raw)
	}
	for _, uri := range []string{"werkbaum://plan/..%2Fother%2Fsecret.werkbaum", "werkbaum://plan/%2Fetc%2Fpasswd", "werkbaum://plan/q",
		"werkbaum://plan/p%00", "werkbaum://plan/../q", "werkbaum://plan//etc/passwd", "file://" + secret, "werkbaum://" + sibling} {
		body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "resources/read", "params": map[string]any{"uri": uri}})
		_, _, raw := d.request(t, "POST", "/mcp", string(body), map[string]string{"MCP-Protocol-Version": "2025-11-25"})
		if !strings.Contains(string(raw), `"error"`) || strings.Contains(string(raw), "Not to be served") || strings.Contains(string(raw), "Not configured") {
			t.Errorf("resources/read %s: %s", uri, raw)
		}
	}
	for _, key := range []string{"../other/secret", "/etc/passwd", "q"} {
		body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "prompts/get",
			"params": map[string]any{"name": "werkbaum/review", "arguments": map[string]any{"plan": key}}})
		_, _, raw := d.request(t, "POST", "/mcp", string(body), map[string]string{"MCP-Protocol-Version": "2025-11-25"})
		if strings.Contains(string(raw), "Not to be served") || strings.Contains(string(raw), "Not configured") {
			t.Errorf("prompts/get review of %q shows another file: %s", key, raw)
		}
	}
	// Request ids are journal keys, never file names.
	r = c.read(t, "p")
	for i, id := range []string{"../../../escaped", "/tmp/escaped", filepath.Join(otherDir, "escaped")} {
		var w writeAnswer
		c.ok(t, "werkbaum_set_size", writeArgs("p", r.Base, id, map[string]any{"id": "side", "size": []string{"S", "M", "L"}[i]}), &w)
		r.Base = w.Base
	}
	after := treeState(t, root)
	if len(after) != len(before) {
		t.Fatalf("writes with path-like request ids created files: %d → %d", len(before), len(after))
	}
	if _, err := os.Stat("/tmp/escaped"); err == nil {
		t.Fatal("/tmp/escaped exists")
	}

	// No tool's input schema has an argument that could carry a path or a file name.
	for _, tool := range listTools(t, d) {
		props, _ := tool.InputSchema["properties"].(map[string]any)
		for name := range props {
			if n := strings.ToLower(name); strings.Contains(n, "path") || strings.Contains(n, "file") || strings.Contains(n, "dir") || n == "uri" {
				t.Errorf("tool %s takes %q", tool.Name, name)
			}
		}
		if tool.InputSchema["additionalProperties"] != false {
			t.Errorf("tool %s accepts unknown arguments: %v", tool.Name, tool.InputSchema)
		}
	}
}

type listedTool struct {
	Name        string         `json:"name"`
	InputSchema map[string]any `json:"inputSchema"`
	Annotations map[string]any `json:"annotations"`
}

// listTools returns tools/list of the daemon.
func listTools(t testing.TB, d *daemon) []listedTool {
	t.Helper()
	_, _, raw := d.request(t, "POST", "/mcp", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, map[string]string{"MCP-Protocol-Version": "2025-11-25"})
	var env struct {
		Result struct {
			Tools []listedTool `json:"tools"`
		} `json:"result"`
	}
	if err := json.Unmarshal(raw, &env); err != nil || len(env.Result.Tools) == 0 {
		t.Fatalf("tools/list: %v %s", err, raw)
	}
	return env.Result.Tools
}

// TestPlanFileMissingNamesNoPath: when the configured file is moved away, every tool
// answers a tool error that names the plan but not the file's path (clients in shared mode
// learn nothing of the daemon's folders); the daemon's log names the path for its owner.
// Once the file is back, the plan is served again.
func TestPlanFileMissingNamesNoPath(t *testing.T) {
	t.Parallel()
	d, paths := startPlanDaemon(t, planFile{Key: "gone", Text: guardPlan})
	c := newMCPClient(d)
	path := paths["gone"]
	r := c.read(t, "gone")
	if err := os.Rename(path, path+".moved"); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Dir(path)
	for tool, args := range map[string]map[string]any{
		"werkbaum_read":       {"plan": "gone"},
		"werkbaum_inspect":    {"plan": "gone"},
		"werkbaum_set_status": writeArgs("gone", r.Base, "gone-1", map[string]any{"id": "a", "status": "done"}),
	} {
		a := c.must(t, tool, args)
		if !a.IsError || !strings.Contains(a.Text, `"gone"`) || !strings.Contains(a.Text, "missing") || strings.Contains(a.Text, dir) {
			t.Errorf("%s on a missing file: %q", tool, a.Text)
		}
	}
	var list struct {
		Plans []map[string]any `json:"plans"`
	}
	c.ok(t, "plans_list", map[string]any{}, &list)
	if e, _ := list.Plans[0]["error"].(string); e == "" || strings.Contains(e, dir) {
		t.Errorf("plans_list row of a missing file: %v", list.Plans[0])
	}
	if !strings.Contains(d.logs(), path) {
		t.Errorf("the daemon's log does not name the missing file's path")
	}
	if err := os.Rename(path+".moved", path); err != nil {
		t.Fatal(err)
	}
	// The same text again; the revision moved on twice: its document recorded the
	// deletion and the return as versions (one counter). A base is checked by its
	// checksum, so an agent's base from before still writes.
	if again := c.read(t, "gone"); again.Base.Checksum != r.Base.Checksum || again.Base.Revision != r.Base.Revision+2 {
		t.Fatalf("after the file came back: %+v, want the checksum of %+v two revisions on", again.Base, r.Base)
	}
	// The write that failed while the file was missing was never journalled.
	if op := c.operation(t, "gone", "gone-1"); op.State != "unknown" {
		t.Fatalf("operation of the failed write: %+v", op)
	}
}
