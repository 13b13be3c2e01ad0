package planfs

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"talkd/internal/config"
	"talkd/internal/werkbaum"
)

// An editor that saves in place (truncate and write, as os.WriteFile and vim with
// backupcopy=yes do) takes no part in the folder lock: one that opens the plan between a
// write's last check and its rename writes into the file the rename unlinks. Its text must
// end up in the plan and the write must be answered ErrFileMoved (a conflict), never
// applied over it. TestPlanHandEditDuringWrite hit that moment once under load.
func TestWriteKeepsASaveInPlaceBetweenCheckAndRename(t *testing.T) {
	const original, agent, hand = "- [ ] a @jörg\n", "- [x] a @jörg\n", "- [ ] a @Müller (edited by hand)\n"
	for _, c := range []struct {
		name      string
		save      func(t *testing.T, path string)
		want      string
		wantMoved bool
	}{
		{"no save meanwhile", nil, agent, false},
		{"a save in place meanwhile", func(t *testing.T, path string) {
			if err := os.WriteFile(path, []byte(hand), 0o644); err != nil {
				t.Fatal(err)
			}
		}, hand, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.save != nil && !renameOverOpenFile {
				t.Skip("this system cannot rename over the open file the write would look at again")
			}
			path := filepath.Join(t.TempDir(), "plan.werkbaum")
			if err := os.WriteFile(path, []byte(original), 0o640); err != nil {
				t.Fatal(err)
			}
			ref := ConfiguredRef(config.Plan{Key: "p", Path: path})
			writeWhileSaving(t, ref, original, agent, c.save, c.wantMoved)
			got, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != c.want {
				t.Fatalf("the plan holds %q, want %q", got, c.want)
			}
			fi, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			if fi.Mode().Perm() != 0o640 {
				t.Errorf("the plan's mode is %v, want 0640 kept", fi.Mode().Perm())
			}
			left, _ := filepath.Glob(filepath.Join(filepath.Dir(path), TempPrefix(path)+"*"))
			if len(left) != 0 {
				t.Errorf("temp files left behind: %v", left)
			}
		})
	}
}

// A program that saves by rename (most editors, a git checkout) takes no part in the folder
// lock either: one that renames its file over the plan between a write's last check and
// its rename would lose its text to the write's rename. Where the system has an atomic
// exchange, the write sees what it swapped out and puts that file back, answering
// ErrFileMoved; a plan deleted in that moment stays deleted. Both a configured plan and a
// plan below a root (renamed through the root's folder handle) are tried.
func TestWriteKeepsASaveByRenameBetweenCheckAndRename(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("only Linux has the atomic exchange (renameat2 RENAME_EXCHANGE) this needs")
	}
	const original, agent, hand = "- [ ] a @jörg\n", "- [x] a @jörg\n", "- [ ] a @Müller (saved by rename)\n"
	for _, c := range []struct {
		name      string
		save      func(t *testing.T, path string)
		want      string // "" for no file
		wantMoved bool
	}{
		{"no save meanwhile", nil, agent, false},
		{"a save by rename meanwhile", func(t *testing.T, path string) {
			saved := filepath.Join(filepath.Dir(path), ".plan.werkbaum.swp")
			if err := os.WriteFile(saved, []byte(hand), 0o640); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(saved, path); err != nil {
				t.Fatal(err)
			}
		}, hand, true},
		{"the plan deleted meanwhile", func(t *testing.T, path string) {
			if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}
		}, "", true},
	} {
		for _, inRoot := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/inRoot=%v", c.name, inRoot), func(t *testing.T) {
				dir := t.TempDir()
				path := filepath.Join(dir, "plan.werkbaum")
				if err := os.WriteFile(path, []byte(original), 0o640); err != nil {
					t.Fatal(err)
				}
				ref := ConfiguredRef(config.Plan{Key: "p", Path: path})
				if inRoot {
					set, err := NewSet(nil, []config.Root{{Name: "notes", Path: dir}})
					if err != nil {
						t.Fatal(err)
					}
					if ref, err = set.Ref("notes:plan.werkbaum", slog.New(slog.DiscardHandler)); err != nil {
						t.Fatal(err)
					}
				}
				writeWhileSaving(t, ref, original, agent, c.save, c.wantMoved)
				got, err := os.ReadFile(path)
				switch {
				case c.want == "" && !errors.Is(err, fs.ErrNotExist):
					t.Fatalf("the plan deleted during the write holds %q (%v), want it still deleted", got, err)
				case c.want != "" && err != nil:
					t.Fatal(err)
				case string(got) != c.want:
					t.Fatalf("the plan holds %q, want %q", got, c.want)
				}
				entries, err := os.ReadDir(dir)
				if err != nil {
					t.Fatal(err)
				}
				for _, e := range entries {
					if e.Name() != "plan.werkbaum" {
						t.Errorf("left beside the plan: %s", e.Name())
					}
				}
			})
		}
	}
}

// writeWhileSaving writes agent over the plan ref, whose file held original when the write
// read it, with save (nil: none) run on the plan's path in the moment between the write's
// last check and its rename; the write must be answered ErrFileMoved exactly when
// wantMoved, and must not fail otherwise.
func writeWhileSaving(t *testing.T, ref Ref, original, agent string, save func(t *testing.T, path string), wantMoved bool) {
	t.Helper()
	var folders Folders
	if save != nil {
		folders.beforeRename = func() { save(t, ref.Path) }
	}
	err := folders.WriteAtomic(ref, []byte(agent), werkbaum.Checksum([]byte(original)), 1<<20, time.Second, nil)
	if moved := errors.Is(err, ErrFileMoved); moved != wantMoved || (err != nil && !moved) {
		t.Fatalf("WriteAtomic: %v, want the file moved: %v", err, wantMoved)
	}
}
