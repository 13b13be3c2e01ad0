package test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCLIPlanEdits: talk plan add, move, remove and set-size write the plan file through
// the daemon's node verbs, say what changed, take --json, refuse through the guards (exit
// 4, naming the switch) and refuse bad arguments (exit 2).
func TestCLIPlanEdits(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "p.werkbaum")
	if err := os.WriteFile(path, []byte("[ ] #root: Root (M)\n  - [ ] #a: A (S) @anna\n  - [ ] #b: B (S) @ben\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	d := startDaemon(t, daemonOptions{Config: "version = 1\n[[plans]]\nkey = \"p\"\npath = \"" + path + "\"\n"})
	file := func() string {
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return string(raw)
	}
	step := func(wantOut, wantFile string, args ...string) {
		t.Helper()
		r := talkAt(t, d, "", append([]string{"plan"}, args...)...)
		r.want(t, 0, "plan "+strings.Join(args, " "))
		if !strings.Contains(r.stdout, wantOut) {
			t.Errorf("plan %v said %q, want %q", args, r.stdout, wantOut)
		}
		if got := file(); !strings.Contains(got, wantFile) {
			t.Errorf("after plan %v the file is:\n%s\nwant it to contain %q", args, got, wantFile)
		}
	}
	step(`p: added "- [ ] #c: C (XS) @Jörg" under #root, now revision 2`, "  - [ ] #a: A (S) @anna\n  - [ ] #c: C (XS) @Jörg\n  - [ ] #b",
		"add", "p", "root", "- [ ] #c: C (XS) @Jörg", "--after", "a")
	step("p: #c moved under #b, now revision 3", "  - [ ] #b: B (S) @ben\n    - [ ] #c: C (XS) @Jörg\n", "move", "p", "#c", "b")
	step("p: #b size set to L, now revision 4", "#b: B (L) @ben", "set-size", "p", "b", "L")
	step("p: #b size removed, now revision 5", "#b: B @ben\n", "set-size", "p", "b", "-")
	step("p: #c discarded (marked [-]), now revision 6", "[-] #c: C (XS) @Jörg", "remove", "p", "c", "--discard")
	step("p: #c deleted with its subtree, now revision 7", "  - [ ] #b: B @ben\n", "remove", "p", "c")
	if strings.Contains(file(), "#c") {
		t.Errorf("#c still in the file:\n%s", file())
	}
	step("p: nothing changed (revision 7)", "#a: A (S)", "set-size", "p", "a", "S")
	r := talkAt(t, d, "", "plan", "set-size", "--json", "p", "a", "M")
	r.want(t, 0, "set-size --json")
	if m := r.jsonLine(t); m["changed"] != true || m["revision"] != float64(8) {
		t.Errorf("set-size --json: %v", m)
	}

	// The structural-warning guard: a second #a is refused until --allow-warnings.
	before := file()
	r = talkAt(t, d, "", "plan", "add", "p", "-", "[ ] #a: Again")
	r.want(t, 4, "add a duplicate id")
	if !strings.Contains(r.stderr, "--allow-warnings") || file() != before {
		t.Errorf("guard: stderr %q, file changed %v", r.stderr, file() != before)
	}
	step("p: added \"[ ] #a: Again\" under the top level", "[ ] #a: Again", "add", "p", "-", "[ ] #a: Again", "--allow-warnings")

	for _, args := range [][]string{{"plan", "move", "p", "nope", "root"}, {"plan", "set-size", "p", "a", "HUGE"}} {
		if r := talkAt(t, d, "", args...); r.code != 4 || r.stderr == "" {
			t.Errorf("talk %v: exit %d, stderr %q; want 4 with the daemon's reason", args, r.code, r.stderr)
		}
	}
	for _, args := range [][]string{
		{"plan", "add", "p", "root"}, {"plan", "remove", "p"}, {"plan", "move", "p", "a", "b", "--discard"},
		{"plan", "show", "p", "--after", "a"}, {"plan", "set-size", "p", "a", "S", "--after", "b"}, {"plan", "inspect", "p", "--allow-warnings"},
	} {
		talkAt(t, d, "", args...).want(t, 2, "talk "+strings.Join(args, " "))
	}
}
