package plans

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"talkd/internal/werkbaum"
)

// CreateInRoot: a new plan appears whole under its name, is a plan at once (read, listed,
// a document id), leaves no temp file, never replaces a file that is there, and refuses
// names that are not a plain *.werkbaum file of the root.
func TestCreateInRoot(t *testing.T) {
	f := newRootFixture(t)
	ctx := context.Background()
	f.svc.Keys() // a listing from before the create must not hide the new plan
	text := "[ ] #root: Plan für @jörg (M)\n  - [ ] #a: Müller fragen (S)\n"
	key, err := f.svc.CreateInRoot(ctx, "notes", "Plan für Jörg.werkbaum", []byte(text))
	if err != nil || key != "notes:Plan für Jörg.werkbaum" {
		t.Fatalf("CreateInRoot = %q, %v", key, err)
	}
	if got, err := os.ReadFile(filepath.Join(f.root, "Plan für Jörg.werkbaum")); err != nil || string(got) != text {
		t.Fatalf("the file: %q, %v", got, err)
	}
	snap, err := f.svc.Read(ctx, key)
	if err != nil || snap.Text != text {
		t.Fatalf("Read(%s) = %+v, %v", key, snap, err)
	}
	if !slices.Contains(f.svc.Keys(), key) {
		t.Errorf("Keys() does not list %s: %v", key, f.svc.Keys())
	}
	if _, err := f.svc.DocumentID(ctx, key); err != nil {
		t.Errorf("DocumentID(%s): %v", key, err)
	}

	// A taken name: ErrPlanExists, the file unchanged.
	if _, err := f.svc.CreateInRoot(ctx, "notes", "a.werkbaum", []byte("[ ] other\n")); !errors.Is(err, ErrPlanExists) {
		t.Errorf("create over a.werkbaum: %v, want ErrPlanExists", err)
	}
	if got, _ := os.ReadFile(filepath.Join(f.root, "a.werkbaum")); string(got) != planText {
		t.Errorf("a.werkbaum was changed:\n%s", got)
	}

	// Names that are not a file directly in the root, and an unknown root.
	for name, want := range map[string]string{
		"sub/c.werkbaum":   "must not contain /",
		"../c.werkbaum":    "must not contain /",
		".hidden.werkbaum": "hidden",
		"c.txt":            "does not end in .werkbaum",
	} {
		if _, err := f.svc.CreateInRoot(ctx, "notes", name, []byte(text)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("create %q: %v, want %q", name, err, want)
		}
	}
	if _, err := f.svc.CreateInRoot(ctx, "nope", "c.werkbaum", []byte(text)); !errors.Is(err, ErrUnknownPlan) {
		t.Errorf("unknown root: %v", err)
	}
	if _, err := f.svc.CreateInRoot(ctx, "notes", "big.werkbaum", make([]byte, werkbaum.DefaultMaxInputBytes+1)); !errors.Is(err, werkbaum.ErrTooLarge) {
		t.Errorf("too large: %v", err)
	}
	if _, err := os.Stat(filepath.Join(f.root, "big.werkbaum")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a refused create left a file: %v", err)
	}

	// No temp file is left, and nothing outside the root was touched.
	entries, _ := os.ReadDir(f.root)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			t.Errorf("left behind: %s", e.Name())
		}
	}
}
