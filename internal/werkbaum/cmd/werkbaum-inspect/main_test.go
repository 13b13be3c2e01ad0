package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestInspectAndAnalyzeAFile(t *testing.T) {
	plan := filepath.Join(t.TempDir(), "p.werkbaum")
	if err := os.WriteFile(plan, []byte("[~] Ship #ship (S)\n  | Fast #fast (L)\n  | Cheap #cheap (XS) @eva\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	if err := run(context.Background(), []string{"-id", "ship", "-include", "tree,path", plan}, &out, &errOut); err != nil {
		t.Fatalf("run: %v (%s)", err, errOut.String())
	}
	var view struct {
		Nodes []struct {
			Line  int    `json:"line"`
			Label string `json:"label"`
		} `json:"nodes"`
		Warnings []any `json:"warnings"`
		Path     struct {
			Stations []int `json:"stations"`
			Cost     int   `json:"cost"`
		} `json:"path"`
	}
	if err := json.Unmarshal(out.Bytes(), &view); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, out.String())
	}
	if len(view.Nodes) != 3 || view.Nodes[2].Label != "Cheap" || view.Warnings != nil {
		t.Fatalf("unexpected view: %s", out.String())
	}
	// NOTATION.md §27: the cheap alternative is the only station; cost 2.
	if len(view.Path.Stations) != 1 || view.Path.Stations[0] != 3 || view.Path.Cost != 2 {
		t.Fatalf("path: %+v", view.Path)
	}

	out.Reset()
	if err := run(context.Background(), []string{"-analyze", plan}, &out, &errOut); err != nil {
		t.Fatalf("run -analyze: %v", err)
	}
	var full struct {
		File     string `json:"file"`
		Checksum string `json:"checksum"`
	}
	if err := json.Unmarshal(out.Bytes(), &full); err != nil || full.File != "p.werkbaum" || !strings.HasPrefix(full.Checksum, "sha256:") {
		t.Fatalf("analysis header: %+v %v", full, err)
	}
}

func TestUsageErrors(t *testing.T) {
	var out, errOut bytes.Buffer
	if err := run(context.Background(), nil, &out, &errOut); !errors.Is(err, errUsage) {
		t.Fatalf("no file: %v", err)
	}
	err := run(context.Background(), []string{filepath.Join(t.TempDir(), "missing")}, &out, &errOut)
	if err == nil || !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("missing file: %v", err)
	}
	plan := filepath.Join(t.TempDir(), "p.werkbaum")
	os.WriteFile(plan, []byte("- A #a\n"), 0o644)
	if err := run(context.Background(), []string{"-id", "zz", plan}, &out, &errOut); err == nil || !strings.Contains(err.Error(), `"zz"`) {
		t.Fatalf("unknown id: %v", err)
	}
}
