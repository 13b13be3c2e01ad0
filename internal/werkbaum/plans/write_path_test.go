package plans

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"talkd/internal/werkbaum"
)

// TestOutsideEditRightAfterAWriteIsAConflict: talkd remembers the text it wrote (the text
// cache's Wrote, which lets the next write skip reading the file before its lane), but an
// editor that saves the plan right after, in place and at the same size, is still seen:
// the next write on talkd's own answer is a conflict carrying the editor's text.
func TestOutsideEditRightAfterAWriteIsAConflict(t *testing.T) {
	f := newFixture(t, planText)
	ctx := context.Background()
	res, err := f.svc.Write(ctx, "p", WriteRequest{RequestID: "w1", ArgsHash: "h", Base: f.read(t).Base,
		Verb: werkbaum.SetStatus{ID: "docs", Status: "done"}})
	if err != nil {
		t.Fatal(err)
	}
	if sum, ok := f.svc.texts.Known("p"); !ok || sum != res.Base.Checksum {
		t.Fatalf("the cache knows %q, the write answered %q", sum, res.Base.Checksum)
	}
	written := f.fileText(t)
	edited := strings.Replace(written, "[x] #docs", "[~] #docs", 1)
	if len(edited) != len(written) || edited == written {
		t.Fatal("the edit must keep the size")
	}
	if err := os.WriteFile(f.path, []byte(edited), 0o640); err != nil {
		t.Fatal(err)
	}
	_, err = f.svc.Write(ctx, "p", WriteRequest{RequestID: "w2", ArgsHash: "h", Base: res.Base,
		Verb: werkbaum.SetStatus{ID: "auth", Status: "done"}})
	var conflict *ConflictError
	if !errors.As(err, &conflict) {
		t.Fatalf("want a conflict, got %v", err)
	}
	if conflict.Current.Text != edited || conflict.Current.Base.Revision != res.Revision+1 {
		t.Fatalf("the conflict carries revision %d:\n%s", conflict.Current.Base.Revision, conflict.Current.Text)
	}
	if f.fileText(t) != edited {
		t.Fatal("the conflicting write touched the file")
	}
	if sum, _ := f.svc.texts.Known("p"); sum != werkbaum.Checksum([]byte(edited)) {
		t.Fatal("the cache still knows talkd's text after reading the editor's")
	}
}
