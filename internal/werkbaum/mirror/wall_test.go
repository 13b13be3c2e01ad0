package mirror

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"testing"
)

// TestMirrorDoesNotImportTheQueue keeps the wall of issue 15: announcements reach the
// voice through Submitter, wired in cmd/talkd, so the plan side never depends on the
// queue's types (and a change there cannot ripple into the mirror).
func TestMirrorDoesNotImportTheQueue(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("no Go files: %v", err)
	}
	fset := token.NewFileSet()
	for _, f := range files {
		ast, err := parser.ParseFile(fset, f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range ast.Imports {
			if p, _ := strconv.Unquote(imp.Path.Value); p == "talkd/internal/queue" || filepath.Dir(p) == "talkd/internal/queue" {
				t.Errorf("%s imports %s", f, p)
			}
		}
	}
}
