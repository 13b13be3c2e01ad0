package plans

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"talkd/internal/werkbaum"
	"talkd/internal/werkbaum/plans/planfs"
)

// gatedDB holds the next Update while armed until it is let go, so that a test can look
// at the plan's folder while a write's pending record is being committed.
type gatedDB struct {
	Database
	armed   atomic.Bool
	entered chan struct{} // an armed Update has started
	release chan error    // its outcome: nil commits it, an error fails it
}

func (d *gatedDB) Update(fn func(Tx) error) error {
	if d.armed.CompareAndSwap(true, false) {
		d.entered <- struct{}{}
		if err := <-d.release; err != nil {
			return err
		}
	}
	return d.Database.Update(fn)
}

func tempFilesOf(t *testing.T, path string) []string {
	t.Helper()
	found, err := filepath.Glob(filepath.Join(filepath.Dir(path), planfs.TempPrefix(path)+"*"))
	if err != nil {
		t.Fatal(err)
	}
	return found
}

// TestPendingRecordOverlapsTheTempFile: a write's pending record is committed while its
// temp file is written and synced (their syncs overlap), and the rename waits for the
// record: while the record's commit is held, the new text is in a temp file beside the
// plan and the plan still has its old text. When the record fails, nothing is renamed,
// no temp file is left, the request id is unknown, and the write's error names the
// journal.
func TestPendingRecordOverlapsTheTempFile(t *testing.T) {
	for _, fail := range []bool{false, true} {
		f := newFixture(t, planText)
		db := &gatedDB{Database: Bolt(f.db), entered: make(chan struct{}), release: make(chan error)}
		f.svc = f.openOn(t, db)
		ctx := context.Background()
		base := f.read(t).Base
		req := WriteRequest{Tool: "werkbaum_set_status", RequestID: "w1", ArgsHash: "h", Base: base,
			Verb: werkbaum.SetStatus{ID: "auth", Status: "done"}}
		db.armed.Store(true)
		type outcome struct {
			res *WriteResult
			err error
		}
		answered := make(chan outcome, 1)
		go func() {
			res, err := f.svc.Write(ctx, "p", req)
			answered <- outcome{res, err}
		}()
		<-db.entered // the pending record's commit has started and is held
		var temps []string
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
			if temps = tempFilesOf(t, f.path); len(temps) == 1 || time.Now().After(deadline) {
				break
			}
		}
		if len(temps) != 1 {
			t.Fatalf("while the pending record commits, temp files beside the plan: %v; want the write's one", temps)
		}
		var tempText []byte
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
			if tempText, _ = os.ReadFile(temps[0]); strings.Contains(string(tempText), "[x] #auth") {
				break
			}
		}
		if !strings.Contains(string(tempText), "[x] #auth") {
			t.Fatalf("the temp file was not written while the record committed (or was renamed before it was durable): %q", tempText)
		}
		if got := f.fileText(t); got != planText {
			t.Fatalf("the plan was renamed before its pending record was durable:\n%s", got)
		}
		if fail {
			db.release <- errDiskFull
		} else {
			db.release <- nil
		}
		out := <-answered
		if fail {
			if out.err == nil || !errors.Is(out.err, errDiskFull) || !strings.Contains(out.err.Error(), "journal") {
				t.Fatalf("write with a failing record: %+v %v; want the journal's error", out.res, out.err)
			}
			if got := f.fileText(t); got != planText {
				t.Fatalf("the plan changed although its record failed:\n%s", got)
			}
			if left := tempFilesOf(t, f.path); len(left) != 0 {
				t.Fatalf("temp files left after a failed record: %v", left)
			}
			if op, err := f.svc.Operation(ctx, "p", "", "w1"); err != nil || op.State == StateApplied || op.InProgress {
				t.Fatalf("operation of a write whose record failed: %+v %v", op, err)
			}
			continue
		}
		if out.err != nil || !out.res.Changed || out.res.Revision != base.Revision+1 {
			t.Fatalf("write: %+v %v", out.res, out.err)
		}
		if got := f.fileText(t); !strings.Contains(got, "[x] #auth") || werkbaum.Checksum([]byte(got)) != out.res.Base.Checksum {
			t.Fatalf("after the write the plan has:\n%s", got)
		}
		if left := tempFilesOf(t, f.path); len(left) != 0 {
			t.Fatalf("temp files left after the write: %v", left)
		}
	}
}
