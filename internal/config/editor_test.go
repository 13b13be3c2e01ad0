package config

import (
	"path/filepath"
	"strings"
	"testing"
)

// The [editor] table: the published editor by default, origins off, origins normalised
// like allowed_origins, "*" and non-origins refused with the key named, and the root
// that takes created plans.
func TestEditorSettings(t *testing.T) {
	dir, e := home(t)
	c := mustLoad(t, e)
	if c.Editor.URL != DefaultEditorURL || len(c.Editor.Origins) != 0 || c.Editor.OriginAllowed("https://werkbaum.javagil.de") {
		t.Fatalf("defaults: %+v", c.Editor)
	}
	if _, ok := c.CreateRoot(); ok {
		t.Error("a root takes created plans without any configured")
	}

	notes := filepath.Join(dir, "notes")
	other := filepath.Join(dir, "other")
	writeFile(t, filepath.Join(notes, "a.werkbaum"), "[ ] a\n")
	writeFile(t, filepath.Join(other, "b.werkbaum"), "[ ] b\n")
	f := writeFile(t, filepath.Join(dir, "c.toml"), `version = 1
[[roots]]
name = "other"
path = "`+other+`"
[[roots]]
name = "notes"
path = "`+notes+`"
create = true
[editor]
url = "https://mhoennig.github.io/werkbaum/"
origins = ["HTTPS://Werkbaum.javagil.de:443", "https://mhoennig.github.io"]
`)
	c = mustLoad(t, e.with("TALK_CONFIG", f))
	if !c.Editor.OriginAllowed("https://werkbaum.javagil.de") || !c.Editor.OriginAllowed("https://mhoennig.github.io") ||
		c.Editor.OriginAllowed("https://evil.example") || c.Editor.OriginAllowed("") {
		t.Errorf("origins %v", c.Editor.Origins)
	}
	if r, ok := c.CreateRoot(); !ok || r.Name != "notes" {
		t.Errorf("CreateRoot = %+v, %v; want notes", r, ok)
	}

	bad := writeFile(t, filepath.Join(dir, "bad.toml"), `version = 1
[editor]
url = "werkbaum.javagil.de"
origins = ["*", "https://x.example/path"]
`)
	msg := loadErr(t, e.with("TALK_CONFIG", bad))
	for _, want := range []string{"editor.url", "editor.origins[0]", `"*" is not allowed`, "editor.origins[1]", "path"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error does not mention %q:\n%s", want, msg)
		}
	}
}

// Link adds ?live= (URL-encoded) and keeps the editor URL's own query.
func TestEditorLink(t *testing.T) {
	doc := "http://127.0.0.1:7077/api/v1/documents/0b6e2f1c-3d4a-4b5c-8d6e-7f8091a2b3c4"
	for _, tc := range []struct{ base, want string }{
		{"https://werkbaum.javagil.de/", "https://werkbaum.javagil.de/?live=http%3A%2F%2F127.0.0.1%3A7077%2Fapi%2Fv1%2Fdocuments%2F0b6e2f1c-3d4a-4b5c-8d6e-7f8091a2b3c4"},
		{"https://werkbaum.javagil.de", "https://werkbaum.javagil.de/?live=http%3A%2F%2F127.0.0.1%3A7077%2Fapi%2Fv1%2Fdocuments%2F0b6e2f1c-3d4a-4b5c-8d6e-7f8091a2b3c4"},
		{"https://mhoennig.github.io/werkbaum/?lang=de", "https://mhoennig.github.io/werkbaum/?lang=de&live=http%3A%2F%2F127.0.0.1%3A7077%2Fapi%2Fv1%2Fdocuments%2F0b6e2f1c-3d4a-4b5c-8d6e-7f8091a2b3c4"},
	} {
		got, err := Editor{URL: tc.base}.Link(doc)
		if err != nil || got != tc.want {
			t.Errorf("Link(%s) = %q, %v; want %q", tc.base, got, err, tc.want)
		}
	}
	if _, err := (Editor{URL: "ftp://x"}).Link(doc); err == nil || !strings.Contains(err.Error(), "editor.url") {
		t.Errorf("ftp editor: %v", err)
	}
}
