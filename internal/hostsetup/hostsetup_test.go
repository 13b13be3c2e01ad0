package hostsetup

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// fixtureHome builds a home folder holding the populated fixtures of test/testdata/hosts
// at the places the hosts read them.
func fixtureHome(t *testing.T) string {
	t.Helper()
	home := t.TempDir()
	for src, dst := range map[string]string{
		"claude-settings.json": ".claude/settings.json",
		"claude.json":          ".claude.json",
		"codex-config.toml":    ".codex/config.toml",
		"gemini-settings.json": ".gemini/settings.json",
		"cursor-hooks.json":    ".cursor/hooks.json",
		"cursor-mcp.json":      ".cursor/mcp.json",
	} {
		raw, err := os.ReadFile(filepath.Join("..", "..", "test", "testdata", "hosts", src))
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(home, dst)
		os.MkdirAll(filepath.Dir(p), 0o700)
		if err := os.WriteFile(p, raw, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return home
}

func snapshot(t *testing.T, home string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.WalkDir(home, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			raw, _ := os.ReadFile(p)
			rel, _ := filepath.Rel(home, p)
			out[rel] = string(raw)
		}
		return nil
	})
	return out
}

const talkBin = "/home/jörg/.local/bin/talk"

// TestSetupAndRemoveRoundTrip: for every host, setup on populated files adds talkd's
// entries and keeps every other setting, a second setup changes nothing, and a removal
// gives back every file byte for byte, backups gone.
func TestSetupAndRemoveRoundTrip(t *testing.T) {
	for _, h := range Hosts() {
		t.Run(h.Name, func(t *testing.T) {
			home := fixtureHome(t)
			orig := snapshot(t, home)
			o := Options{Home: home, Talk: talkBin}
			changes, err := h.Setup(o)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range changes {
				if c.Action == "unchanged" && !strings.Contains(strings.Join(c.Notes, " "), "kept your own") {
					t.Errorf("%s: first setup changed nothing", c.Path)
				}
			}
			after := snapshot(t, home)
			for _, c := range changes {
				rel, _ := filepath.Rel(home, c.Path)
				if c.Action == "updated" && after[rel+BackupSuffix] != orig[rel] {
					t.Errorf("%s: backup is not the original", rel)
				}
				if strings.HasSuffix(rel, ".json") && orig[rel] != "" {
					keepsOthers(t, rel, orig[rel], after[rel])
				}
			}
			if _, err := h.Setup(o); err != nil {
				t.Fatal(err)
			}
			if again := snapshot(t, home); !reflect.DeepEqual(again, after) {
				t.Errorf("second setup changed files")
			}
			if _, err := h.Remove(o); err != nil {
				t.Fatal(err)
			}
			if back := snapshot(t, home); !reflect.DeepEqual(back, orig) {
				for k := range back {
					if back[k] != orig[k] {
						t.Errorf("after remove %s differs:\n%s\nwant:\n%s", k, back[k], orig[k])
					}
				}
				for k := range orig {
					if _, ok := back[k]; !ok {
						t.Errorf("after remove %s is missing", k)
					}
				}
			}
		})
	}
}

// keepsOthers checks that every top-level key of before is in after with the same value,
// except hooks and mcpServers, whose entries must all still be there.
func keepsOthers(t *testing.T, name, before, after string) {
	t.Helper()
	b, err := parseObject([]byte(before))
	if err != nil {
		t.Fatal(err)
	}
	a, err := parseObject([]byte(after))
	if err != nil {
		t.Fatalf("%s after setup is not JSON: %v", name, err)
	}
	for _, k := range b.keys {
		switch k {
		case "hooks", "mcpServers":
			bo, ao := b.vals[k].(*object), a.vals[k].(*object)
			for _, kk := range bo.keys {
				bv, av := bo.vals[kk], ao.vals[kk]
				if bl, ok := bv.([]any); ok {
					al, _ := av.([]any)
					if len(al) < len(bl) || !equal(bl, al[:len(bl)]) {
						t.Errorf("%s: %s.%s lost entries", name, k, kk)
					}
				} else if !equal(bv, av) {
					t.Errorf("%s: %s.%s changed", name, k, kk)
				}
			}
		default:
			if !equal(b.vals[k], a.vals[k]) {
				t.Errorf("%s: key %s changed", name, k)
			}
		}
	}
	if strings.Join(a.keys[:len(b.keys)], ",") != strings.Join(b.keys, ",") {
		t.Errorf("%s: key order changed: %v, was %v", name, a.keys, b.keys)
	}
}

// TestSetupEntries: the entries are what each host documents.
func TestSetupEntries(t *testing.T) {
	home := fixtureHome(t)
	o := Options{Home: home, Talk: talkBin}
	for _, h := range Hosts() {
		if _, err := h.Setup(o); err != nil {
			t.Fatalf("%s: %v", h.Name, err)
		}
	}
	read := func(rel string) string {
		raw, err := os.ReadFile(filepath.Join(home, rel))
		if err != nil {
			t.Fatal(err)
		}
		return string(raw)
	}
	settings := read(".claude/settings.json")
	for _, ev := range []string{"Stop", "SubagentStop", "Notification"} {
		if !strings.Contains(settings, `"`+ev+`"`) {
			t.Errorf("claude settings lack %s", ev)
		}
	}
	if strings.Count(settings, talkBin+" hook claude-code") != 3 {
		t.Errorf("claude settings:\n%s", settings)
	}
	if !strings.Contains(settings, `"notify-send 'Claude is done' && echo \"<done>\""`) {
		t.Errorf("the user's Stop hook was changed:\n%s", settings)
	}
	if c := read(".claude.json"); !strings.Contains(c, `"talk": {`) || !strings.Contains(c, `"github"`) || !strings.Contains(c, `"/home/jörg/src/talkd"`) {
		t.Errorf("~/.claude.json:\n%s", c)
	}
	toml := read(".codex/config.toml")
	for _, want := range []string{"# Codex settings of Jörg Müller — keep the comments!", `model_reasoning_effort = "high"   # slow but careful`,
		"notify = [\"" + talkBin + "\", \"hook\", \"codex\"]\n\n# Projects I trust", "[mcp_servers.talk]\ncommand = \"" + talkBin + "\"\nargs = [\"mcp\"]\n"} {
		if !strings.Contains(toml, want) {
			t.Errorf("codex config lacks %q:\n%s", want, toml)
		}
	}
	g := read(".gemini/settings.json")
	if !strings.Contains(g, `"AfterAgent"`) || !strings.Contains(g, `"timeout": 10000`) || !strings.Contains(g, `"audit"`) {
		t.Errorf("gemini settings:\n%s", g)
	}
	if c := read(".cursor/hooks.json"); !strings.Contains(c, `"afterAgentResponse"`) || !strings.Contains(c, "./hooks/audit.sh") || strings.Count(c, "hook cursor") != 2 {
		t.Errorf("cursor hooks:\n%s", c)
	}
	// The fixture's own talk entry (HTTP) is the user's: kept.
	if c := read(".cursor/mcp.json"); !strings.Contains(c, `"url": "http://127.0.0.1:7077/mcp"`) || strings.Contains(c, `"args"`) {
		t.Errorf("cursor mcp:\n%s", c)
	}
}

// TestCodexRefusesAnotherNotify: Codex runs one notify program; another one is not
// replaced and the file stays as it was.
func TestCodexRefusesAnotherNotify(t *testing.T) {
	home := t.TempDir()
	p := filepath.Join(home, ".codex", "config.toml")
	os.MkdirAll(filepath.Dir(p), 0o700)
	orig := "model = \"o3\"\nnotify = [\"python3\", \"/home/me/notify.py\"]\n"
	os.WriteFile(p, []byte(orig), 0o600)
	h, _ := Find("codex")
	_, err := h.Setup(Options{Home: home, Talk: talkBin})
	if err == nil || !strings.Contains(err.Error(), "only one notify program") {
		t.Fatalf("err = %v", err)
	}
	if raw, _ := os.ReadFile(p); string(raw) != orig {
		t.Errorf("file changed:\n%s", raw)
	}
}

// TestRemoveKeepsLaterEdits: a file changed after setup keeps the change; only talkd's
// entries go, and the backup stays.
func TestRemoveKeepsLaterEdits(t *testing.T) {
	home := fixtureHome(t)
	o := Options{Home: home, Talk: talkBin}
	for _, name := range []string{"claude-code", "codex"} {
		h, _ := Find(name)
		if _, err := h.Setup(o); err != nil {
			t.Fatal(err)
		}
	}
	sp := filepath.Join(home, ".claude", "settings.json")
	raw, _ := os.ReadFile(sp)
	os.WriteFile(sp, []byte(strings.Replace(string(raw), `"model": "opus"`, `"model": "sonnet"`, 1)), 0o600)
	cp := filepath.Join(home, ".codex", "config.toml")
	raw, _ = os.ReadFile(cp)
	os.WriteFile(cp, append(raw, []byte("\n[history]\npersistence = \"none\"\n")...), 0o600)
	for _, name := range []string{"claude-code", "codex"} {
		h, _ := Find(name)
		if _, err := h.Remove(o); err != nil {
			t.Fatal(err)
		}
	}
	s, _ := os.ReadFile(sp)
	if !strings.Contains(string(s), `"sonnet"`) || strings.Contains(string(s), "hook claude-code") || !strings.Contains(string(s), "notify-send") {
		t.Errorf("settings after remove:\n%s", s)
	}
	if _, err := os.Stat(sp + BackupSuffix); err != nil {
		t.Errorf("backup gone: %v", err)
	}
	c, _ := os.ReadFile(cp)
	orig, _ := os.ReadFile(filepath.Join("..", "..", "test", "testdata", "hosts", "codex-config.toml"))
	if want := string(orig) + "\n[history]\npersistence = \"none\"\n"; string(c) != want {
		t.Errorf("codex after remove:\n%s\nwant:\n%s", c, want)
	}
}

// TestSetupCreatesAndRemoveDeletes: files that were not there are created and, on
// removal, deleted again.
func TestSetupCreatesAndRemoveDeletes(t *testing.T) {
	for _, h := range Hosts() {
		home := t.TempDir()
		o := Options{Home: home, Talk: "/opt/my tools/talk"}
		if _, err := h.Setup(o); err != nil {
			t.Fatalf("%s: %v", h.Name, err)
		}
		if len(snapshot(t, home)) == 0 {
			t.Errorf("%s: nothing written", h.Name)
		}
		for rel, content := range snapshot(t, home) {
			if strings.HasSuffix(rel, ".json") && h.Name != "codex" && !strings.Contains(content, `'/opt/my tools/talk' hook `+h.Name) && !strings.Contains(content, `"/opt/my tools/talk"`) {
				t.Errorf("%s %s: path not quoted:\n%s", h.Name, rel, content)
			}
		}
		if _, err := h.Remove(o); err != nil {
			t.Fatal(err)
		}
		if left := snapshot(t, home); len(left) != 0 {
			t.Errorf("%s: left %v", h.Name, left)
		}
	}
}

// TestProjectScope: --project writes the project's files, and Codex refuses it.
func TestProjectScope(t *testing.T) {
	proj := t.TempDir()
	h, _ := Find("claude-code")
	if _, err := h.Setup(Options{Home: t.TempDir(), Project: proj, Talk: talkBin}); err != nil {
		t.Fatal(err)
	}
	for _, rel := range []string{".claude/settings.json", ".mcp.json"} {
		if _, err := os.Stat(filepath.Join(proj, rel)); err != nil {
			t.Errorf("%s: %v", rel, err)
		}
	}
	c, _ := Find("codex")
	if _, err := c.Setup(Options{Home: t.TempDir(), Project: proj, Talk: talkBin}); err == nil {
		t.Error("codex accepted --project")
	}
}

// TestBrokenFileIsLeftAlone: a file that is not JSON is reported and not touched, and no
// other file of the host is written either.
func TestBrokenFileIsLeftAlone(t *testing.T) {
	home := t.TempDir()
	sp := filepath.Join(home, ".claude", "settings.json")
	os.MkdirAll(filepath.Dir(sp), 0o700)
	os.WriteFile(sp, []byte(`{"model": "opus",`), 0o600)
	h, _ := Find("claude-code")
	if _, err := h.Setup(Options{Home: home, Talk: talkBin}); err == nil || !strings.Contains(err.Error(), "not valid JSON") {
		t.Fatalf("err = %v", err)
	}
	if _, err := os.Stat(filepath.Join(home, ".claude.json")); err == nil {
		t.Error("~/.claude.json was written although settings.json was refused")
	}
}

// TestSetupAfterTalkMoved: a second setup from a talk at another path replaces talkd's
// entries instead of adding a second set (JSON hosts and Codex alike).
func TestSetupAfterTalkMoved(t *testing.T) {
	home := fixtureHome(t)
	for _, h := range Hosts() {
		if _, err := h.Setup(Options{Home: home, Talk: "/old/bin/talk"}); err != nil {
			t.Fatal(err)
		}
		if _, err := h.Setup(Options{Home: home, Talk: talkBin}); err != nil {
			t.Fatal(err)
		}
	}
	settings := string(mustRead(t, filepath.Join(home, ".claude", "settings.json")))
	if strings.Contains(settings, "/old/bin/talk") || strings.Count(settings, talkBin+" hook claude-code") != 3 {
		t.Errorf("claude settings after the move:\n%s", settings)
	}
	if c := string(mustRead(t, filepath.Join(home, ".cursor", "hooks.json"))); strings.Contains(c, "/old/bin/talk") || strings.Count(c, "hook cursor") != 2 {
		t.Errorf("cursor hooks after the move:\n%s", c)
	}
	toml := string(mustRead(t, filepath.Join(home, ".codex", "config.toml")))
	if strings.Count(toml, "notify = ") != 1 || !strings.Contains(toml, `notify = ["`+talkBin+`", "hook", "codex"]`) {
		t.Errorf("codex config after the move:\n%s", toml)
	}
}

func mustRead(t *testing.T, p string) []byte {
	t.Helper()
	raw, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}
