package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A root's path is expanded and resolved to the real folder; lang defaults to voice.lang.
func TestRootsLoad(t *testing.T) {
	dir, e := home(t)
	if err := os.MkdirAll(filepath.Join(dir, "real", "notes"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "real", "notes"), filepath.Join(dir, "notes")); err != nil {
		t.Fatal(err)
	}
	f := writeFile(t, filepath.Join(dir, "c.toml"), "version = 1\n[voice]\nlang = \"de\"\n[[roots]]\nname = \"notes\"\npath = \"~/notes\"\n[[roots]]\nname = \"work\"\npath = \""+dir+"/real\"\nlang = \"en\"\n")
	c := mustLoad(t, e.with("TALK_CONFIG", f))
	real, _ := filepath.EvalSymlinks(filepath.Join(dir, "real", "notes"))
	if len(c.Roots) != 2 || c.Roots[0].Path != real || c.Roots[0].Lang != "de" || c.Roots[1].Lang != "en" {
		t.Fatalf("roots: %+v", c.Roots)
	}
	if r, ok := c.Root("work"); !ok || r.Name != "work" {
		t.Fatalf("Root(work): %+v %v", r, ok)
	}
}

// Every refusal of a root names the key, its line and the problem; shared mode refuses
// roots and says why.
func TestRootsErrors(t *testing.T) {
	dir, e := home(t)
	file := writeFile(t, filepath.Join(dir, "plan.werkbaum"), "")
	cases := []struct {
		name, body string
		want       []string
	}{
		{"bad name", "[[roots]]\nname = \"Notes\"\npath = \"" + dir + "\"\n", []string{"roots[0].name", "Notes", "must match"}},
		{"duplicate name", "[[roots]]\nname = \"n\"\npath = \"" + dir + "\"\n[[roots]]\nname = \"n\"\npath = \"" + dir + "\"\n", []string{"roots[1].name", "unique"}},
		{"empty path", "[[roots]]\nname = \"n\"\n", []string{"roots[0].path", "empty"}},
		{"relative path", "[[roots]]\nname = \"n\"\npath = \"notes\"\n", []string{"roots[0].path", "not an absolute path"}},
		{"missing folder", "[[roots]]\nname = \"n\"\npath = \"" + dir + "/nope\"\n", []string{"roots[0].path", "no such file"}},
		{"a file", "[[roots]]\nname = \"n\"\npath = \"" + file + "\"\n", []string{"roots[0].path", "not a folder"}},
		{"bad lang", "[[roots]]\nname = \"n\"\npath = \"" + dir + "\"\nlang = \"english!\"\n", []string{"roots[0].lang", "BCP-47"}},
		{"shared mode", "[[roots]]\nname = \"n\"\npath = \"" + dir + "\"\n[[clients]]\nid = \"ci\"\ntoken_env = \"TOK\"\n",
			[]string{":2: roots[0]", "local mode only", "[[clients]]", "grants each client plans by key"}},
	}
	for _, tc := range cases {
		f := writeFile(t, filepath.Join(dir, "c.toml"), "version = 1\n"+tc.body)
		msg := loadErr(t, e.with("TALK_CONFIG", f, "TOK", strings.Repeat("t", 40)))
		for _, w := range tc.want {
			if !strings.Contains(msg, w) {
				t.Errorf("%s: error %q does not contain %q", tc.name, msg, w)
			}
		}
	}
}
