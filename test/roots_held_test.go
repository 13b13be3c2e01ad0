package test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRootFolderHeldOpen is issue 34's fourth point at the process boundary: a root's
// folder is held open from the start (a directory handle, os.Root on it), so when the
// folder's own path is swapped for a symlink to another folder, reads and writes still
// go to the folder talkd opened, never to the other one. A reload resolves the path again
// and says so in the log: from then on the root is the folder the path now names.
func TestRootFolderHeldOpen(t *testing.T) {
	t.Parallel()
	root, outside := rootTree(t)
	const other = "- [ ] #other: A plan of the other folder (S)\n"
	if err := os.WriteFile(filepath.Join(outside, "a.werkbaum"), []byte(other), 0o644); err != nil {
		t.Fatal(err)
	}
	d := startDaemon(t, daemonOptions{Config: rootsConfig(root)})
	c := newMCPClient(d)
	if r := c.read(t, "notes:a.werkbaum"); r.Text != rootPlan {
		t.Fatalf("first read: %q", r.Text)
	}

	// The folder moves away and its path becomes a symlink to the other folder.
	moved := root + ".moved"
	if err := os.Rename(root, moved); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, root); err != nil {
		t.Fatal(err)
	}
	r := c.read(t, "notes:a.werkbaum")
	if r.Text != rootPlan {
		t.Fatalf("after the swap the root reads %q, want the held folder's plan", r.Text)
	}
	var w writeAnswer
	c.ok(t, "werkbaum_set_status", writeArgs("notes:a.werkbaum", r.Base, "held-1", map[string]any{"id": "a", "status": "done"}), &w)
	want := strings.Replace(rootPlan, "[ ] #a", "[x] #a", 1)
	if got := string(readFile(t, filepath.Join(moved, "a.werkbaum"))); got != want {
		t.Errorf("the held folder's plan after the write:\n%s", got)
	}
	if got := string(readFile(t, filepath.Join(outside, "a.werkbaum"))); got != other {
		t.Errorf("the write reached the other folder:\n%s", got)
	}

	// A reload resolves the root's path again, and says which folder it holds now.
	d.sighup(t)
	if logs := d.logs(); !strings.Contains(logs, "root folder re-resolved") || !strings.Contains(logs, outside) {
		t.Errorf("the reload did not say it re-resolved the root:\n%s", logs)
	}
	if r := c.read(t, "notes:a.werkbaum"); r.Text != other {
		t.Errorf("after the reload the root reads %q, want the folder its path names now", r.Text)
	}
}
