package test

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestDocumentDoorsRefuseLikeMCP is issue 34's sixth point and its "one error vocabulary
// for both doors" at the process boundary: a plan file talkd refuses on purpose (a
// symlink, a FIFO, a directory, a file over the 2 MiB input limit), a read-only file and
// a missing one. MCP answers each with a clear tool error; the document doors used to
// answer 500 "internal" for most of them. Now both doors give the same code and the same
// reason, and the document doors' status is a 4xx.
func TestDocumentDoorsRefuseLikeMCP(t *testing.T) {
	t.Parallel()
	const text = "%% plan of @jörg\n- [~] #top: Release\n  - [ ] #a: Login @Müller (S)\n"
	d, paths := startPlanDaemon(t, planFile{Key: "p", Text: text})
	path := paths["p"]
	mcp := newMCPClient(d)
	docPath := docPathOf(t, d, mcp, "p")
	c := newDocHTTP(d, nil)
	elsewhere := filepath.Join(t.TempDir(), "other.werkbaum")
	if err := os.WriteFile(elsewhere, []byte("- [ ] #secret: Not this plan\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	restore := func() {
		os.RemoveAll(path)
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		name   string
		make   func() error
		code   string
		status int
		write  bool // refused on write, read is fine
	}{
		{"symlink", func() error { return os.Symlink(elsewhere, path) }, "file_refused", http.StatusUnprocessableEntity, false},
		{"fifo", func() error { return syscall.Mkfifo(path, 0o644) }, "file_refused", http.StatusUnprocessableEntity, false},
		{"directory", func() error { return os.Mkdir(path, 0o755) }, "file_refused", http.StatusUnprocessableEntity, false},
		{"over the limit", func() error {
			return os.WriteFile(path, []byte(text+strings.Repeat("  \" note\n", (2<<20)/9+1)), 0o644)
		}, "file_refused", http.StatusUnprocessableEntity, false},
		{"read-only", func() error { return os.WriteFile(path, []byte(text), 0o444) }, "read_only", http.StatusForbidden, true},
		{"missing", func() error { return nil }, "deleted", http.StatusNotFound, false},
	}
	for _, tc := range cases {
		os.RemoveAll(path)
		if err := tc.make(); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		var tool *toolAnswer
		var door docAnswer
		if tc.write {
			r := mcp.read(t, "p")
			tool = mcp.must(t, "werkbaum_set_status", writeArgs("p", r.Base, "ro-1", map[string]any{"id": "a", "status": "done"}))
			var doc docDocument
			c.must(t, http.MethodGet, docPath, nil).decode(t, &doc)
			door = c.must(t, http.MethodPatch, docPath+"/content", docPatch{BaseVersion: doc.Version, Checksum: docChecksum(doc.Content),
				ClientID: "ed-ro", Seq: 1, Ops: []docOp{{Op: "replace", Index: 2, Count: 1, Lines: []string{"  - [x] #a: Login @Müller (S)"}}}})
		} else {
			tool = mcp.must(t, "werkbaum_read", map[string]any{"plan": "p"})
			door = c.must(t, http.MethodGet, docPath, nil)
		}
		if !tool.IsError || tool.Map["error"] != tc.code {
			t.Errorf("%s: MCP answered %s %s, want the code %q", tc.name, tool.Text, tool.Structured, tc.code)
		}
		door.problem(t, tc.status, tool.Text)
		if door.Map["code"] != tc.code {
			t.Errorf("%s: the document door's code is %v, want %q (%s)", tc.name, door.Map["code"], tc.code, door)
		}
		if strings.Contains(string(door.Raw), "secret") || strings.Contains(tool.Text, "secret") {
			t.Errorf("%s: the other file's text leaked", tc.name)
		}
		restore()
	}
}
