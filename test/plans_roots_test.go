package test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// rootPlan is the text of the plans below the test root (non-ASCII names on purpose).
const rootPlan = "%% notes\n[~] #root: Notes (M)\n  - [ ] #a: Ask @jörg (S)\n  - [ ] #b: Book @Müller (XS)\n"

// rootTree makes a root folder with plans, a folder beside it with a plan no agent may
// reach, and symlinks below the root that lead out. It returns the root and the outside.
func rootTree(t *testing.T) (root, outside string) {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	root, outside = filepath.Join(base, "notes"), filepath.Join(base, "outside")
	for p, text := range map[string]string{
		filepath.Join(root, "a.werkbaum"):                rootPlan,
		filepath.Join(root, "sub", "dir", "b.werkbaum"):  rootPlan,
		filepath.Join(root, ".hidden", "h.werkbaum"):     rootPlan,
		filepath.Join(root, "readme.txt"):                "not a plan\n",
		filepath.Join(outside, "secret.werkbaum"):        "- [ ] #secret: Not to be served\n",
		filepath.Join(outside, "dir", "secret.werkbaum"): "- [ ] #secret: Not to be served\n",
	} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for link, target := range map[string]string{
		filepath.Join(root, "out.werkbaum"):   filepath.Join(outside, "secret.werkbaum"),
		filepath.Join(root, "outdir"):         outside,
		filepath.Join(root, "alias.werkbaum"): "a.werkbaum",
	} {
		if err := os.Symlink(target, link); err != nil {
			t.Fatal(err)
		}
	}
	return root, outside
}

func rootsConfig(root string) string {
	return "version = 1\n[[roots]]\nname = \"notes\"\npath = \"" + root + "\"\nlang = \"de\"\n"
}

// An agent reads and writes plans below a root through MCP, plans_list, /status and
// `talk plans` list them; every attempt to leave the root is a tool error that says why,
// leaves a log line, and changes nothing outside.
func TestRootPlansThroughMCP(t *testing.T) {
	t.Parallel()
	root, outside := rootTree(t)
	d := startDaemon(t, daemonOptions{Config: rootsConfig(root)})
	c := newMCPClient(d)

	var list struct {
		Plans []struct {
			Key, Access, Lang string
			Revision          uint64
		} `json:"plans"`
	}
	c.ok(t, "plans_list", map[string]any{}, &list)
	var keys []string
	for _, p := range list.Plans {
		keys = append(keys, p.Key)
		if p.Access != "write" || p.Lang != "de" || p.Revision != 1 {
			t.Errorf("plans_list row %+v", p)
		}
	}
	if got, want := strings.Join(keys, " "), "notes:a.werkbaum notes:sub/dir/b.werkbaum"; got != want {
		t.Fatalf("plans_list keys %q, want %q", got, want)
	}

	for _, key := range []string{"notes:a.werkbaum", "notes:sub/dir/b.werkbaum"} {
		r := c.read(t, key)
		if r.Text != rootPlan || r.Base.Revision != 1 {
			t.Fatalf("read %s: %+v", key, r)
		}
		var w writeAnswer
		c.ok(t, "werkbaum_set_status", writeArgs(key, r.Base, "w1", map[string]any{"id": "a", "status": "done"}), &w)
		if !w.Changed || w.Revision != 2 {
			t.Fatalf("write %s: %+v", key, w)
		}
		path := filepath.Join(root, filepath.FromSlash(strings.TrimPrefix(key, "notes:")))
		if got := readFile(t, path); !strings.Contains(string(got), "[x] #a: Ask @jörg") || sha(got) != w.Base.Checksum {
			t.Fatalf("file of %s after the write:\n%s", key, got)
		}
		if op := c.operation(t, key, "w1"); op.State != "applied" || op.Revision != 2 {
			t.Fatalf("operation_get %s: %+v", key, op)
		}
	}

	before := treeState(t, outside)
	r := c.read(t, "notes:a.werkbaum")
	refused := map[string]string{
		"notes:../outside/secret.werkbaum":        `".." segment`,
		"notes:sub/../../outside/secret.werkbaum": `".." segment`,
		"notes:" + outside + "/secret.werkbaum":   "absolute",
		`notes:..\outside\secret.werkbaum`:        "backslash",
		"notes:out.werkbaum":                      "symlink",
		"notes:outdir/secret.werkbaum":            "symlink",
		"notes:outdir/dir/secret.werkbaum":        "symlink",
		"notes:alias.werkbaum":                    "symlink",
		"notes:%2e%2e/outside/secret.werkbaum":    "no folder %2e%2e",
		"notes:.hidden/h.werkbaum":                "hidden",
		"notes:readme.txt":                        ".werkbaum",
		"notes:missing.werkbaum":                  "no file missing.werkbaum",
		"notes:a.werkbaum\x00":                    "NUL",
	}
	for key, want := range refused {
		for tool, args := range map[string]map[string]any{
			"werkbaum_read":       {"plan": key},
			"werkbaum_inspect":    {"plan": key},
			"operation_get":       {"plan": key, "request_id": "w1"},
			"werkbaum_set_status": writeArgs(key, r.Base, "bad", map[string]any{"id": "a", "status": "done"}),
		} {
			a := c.must(t, tool, args)
			if !a.IsError || !strings.Contains(a.Text, want) || !strings.Contains(a.Text, strconv.Quote(key)) {
				t.Errorf("%s(%q): %v %q, want a tool error saying %q", tool, key, a.IsError, a.Text, want)
				continue
			}
			var detail struct{ Error, Field string }
			if err := json.Unmarshal(a.Structured, &detail); err != nil || detail.Field != "plan" {
				t.Errorf("%s(%q): error detail %s", tool, key, a.Structured)
			}
		}
	}
	sameTree(t, outside, before, "the refused keys")
	if got := readFile(t, filepath.Join(root, "a.werkbaum")); sha(got) != r.Base.Checksum {
		t.Fatal("a refused write changed the plan the symlink named")
	}
	if logs := d.logs(); !strings.Contains(logs, "plan key below a root refused") || !strings.Contains(logs, "notes:out.werkbaum") {
		t.Errorf("the refusals left no log line:\n%s", logs)
	}

	// The plan resource decodes its URI: an encoded "/" names a folder below the root, an
	// encoded ".." reaches the same addressing rule and is refused.
	h := map[string]string{"MCP-Protocol-Version": "2025-11-25"}
	res := rpcPost(t, d, `{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"werkbaum://plan/notes:sub%2Fdir%2Fb.werkbaum"}}`, h)
	if !strings.Contains(res.raw, `[x] #a: Ask @jörg`) {
		t.Fatalf("resources/read of a plan below the root: %s", res.raw)
	}
	// resources/list names it by the same URI, its "/" encoded.
	if listed := rpcPost(t, d, `{"jsonrpc":"2.0","id":2,"method":"resources/list"}`, h); !strings.Contains(listed.raw, `"werkbaum://plan/notes:sub%2Fdir%2Fb.werkbaum"`) {
		t.Errorf("resources/list does not name the plan below the root by its URI: %.600s", listed.raw)
	}
	for _, uri := range []string{"werkbaum://plan/notes:%2e%2e%2Foutside%2Fsecret.werkbaum", "werkbaum://plan/notes:out.werkbaum",
		"werkbaum://plan/notes:outdir%2Fsecret.werkbaum"} {
		res := rpcPost(t, d, `{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"`+uri+`"}}`, h)
		if res.msg["error"] == nil || strings.Contains(res.raw, "Not to be served") {
			t.Errorf("resources/read %s: %s", uri, res.raw)
		}
	}

	// A file created after the start is a plan at once when named.
	if err := os.WriteFile(filepath.Join(root, "new.werkbaum"), []byte(rootPlan), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := c.read(t, "notes:new.werkbaum"); r.Text != rootPlan {
		t.Fatalf("read of a new file: %+v", r)
	}

	// The CLI and /status list them too.
	out := talkAt(t, d, "", "plans")
	out.want(t, 0, "talk plans")
	if !strings.Contains(out.stdout, "notes:sub/dir/b.werkbaum") || strings.Contains(out.stdout, "secret") {
		t.Fatalf("talk plans:\n%s", out.stdout)
	}
	code, st := d.getJSON(t, "/status")
	raw, _ := json.Marshal(st["plans"])
	if code != 200 || !strings.Contains(string(raw), `"notes:a.werkbaum"`) {
		t.Fatalf("/status plans: %d %s", code, raw)
	}
}

// Shared mode refuses roots at start, saying why.
func TestRootsRefusedInSharedMode(t *testing.T) {
	t.Parallel()
	root, _ := rootTree(t)
	d := startDaemon(t, daemonOptions{ExpectFail: true,
		Config: rootsConfig(root) + "[[clients]]\nid = \"ci\"\ntoken_env = \"TALK_TOKEN_CI\"\nread = [\"*\"]\n",
		Env:    map[string]string{"TALK_TOKEN_CI": strings.Repeat("k", 40)}})
	if code := d.exitCode(t); code == 0 {
		t.Fatalf("talkd started with roots in shared mode; log:\n%s", d.logs())
	}
	for _, want := range []string{"roots[0]", "local mode only", "[[clients]]"} {
		if !strings.Contains(d.logs(), want) {
			t.Errorf("the refusal does not say %q:\n%s", want, d.logs())
		}
	}
}
