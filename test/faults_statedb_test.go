//go:build linux

package test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.etcd.io/bbolt"
)

// Faults of the state database file itself (talkd.db): damaged pages, an empty file.
// Results in docs/RELIABILITY.md (F20–F22).

// damageStateDB overwrites every page of the database after its two meta pages with a
// pattern bbolt cannot read, as a failing disk or a stray write would.
func damageStateDB(t *testing.T, path string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	page := int64(os.Getpagesize())
	junk := []byte(strings.Repeat("\xa5", int(page)))
	for off := 2 * page; off < fi.Size(); off += page {
		if _, err := f.WriteAt(junk, off); err != nil {
			t.Fatal(err)
		}
	}
}

// damageStateDBPage overwrites only the page of the root bucket (the one naming all
// others): bbolt opens such a file without complaint (it reads the meta and freelist
// pages) and fails only when a transaction looks up a bucket.
func damageStateDBPage(t *testing.T, path string) {
	t.Helper()
	db, err := bbolt.Open(path, 0o600, &bbolt.Options{Timeout: time.Second, ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	var root int64
	db.View(func(tx *bbolt.Tx) error {
		root = int64(tx.Cursor().Bucket().Root())
		return nil
	})
	db.Close()
	if root == 0 {
		t.Fatal("the root bucket has no page")
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	page := int64(os.Getpagesize())
	if _, err := f.WriteAt([]byte(strings.Repeat("\xa5", int(page))), root*page); err != nil {
		t.Fatal(err)
	}
}

// faultStateDBUsed starts a daemon with plan "p" on home, writes the plan and speaks, so
// that the database holds a journal, revisions and history, and stops it again.
func faultStateDBUsed(t *testing.T, root, home string) string {
	t.Helper()
	d, _ := faultDiskDaemon(t, root, home)
	c := newMCPClient(d)
	if a := faultWrite(t, c, "db-1", "a", "done"); a.IsError {
		t.Fatalf("write: %s", a.Text)
	}
	faultWaitOutcome(t, d, faultSpeak(t, d, map[string]any{"text": "before the damage", "priority": "high"}), "spoken", 10*time.Second)
	if code := d.terminate(t); code != 0 {
		t.Fatalf("exit %d", code)
	}
	return filepath.Join(root, "state", "talkd.db")
}

// faultRefusedStart starts talkd on a database it must refuse and checks: exit 1 within
// 2 s, the log naming the file, the problem and the move aside.
func faultRefusedStart(t *testing.T, root, home, db, problem string) {
	t.Helper()
	started := time.Now()
	cfg := plansConfig(map[string]string{"p": filepath.Join(root, "plans", "p.werkbaum")})
	d := startDaemon(t, daemonOptions{Config: cfg, Home: home, ExpectFail: true, Env: map[string]string{"TALK_STATE_DIR": filepath.Join(root, "state")}})
	took := time.Since(started)
	code := d.exitCode(t)
	t.Logf("exit %d after %v: %s", code, took.Round(time.Millisecond), strings.TrimSpace(d.logs()))
	if code != 1 || took > 2*time.Second {
		t.Errorf("exit %d after %v, want 1 within 2 s", code, took)
	}
	for _, want := range []string{db, "is damaged", problem, "move the file aside", "mv " + db + " " + db + ".damaged"} {
		if !strings.Contains(d.logs(), want) {
			t.Errorf("the log does not say %q:\n%s", want, d.logs())
		}
	}
}

// TestFaultStateDBDamagedAtStart: a talkd.db with one damaged page (that of the root bucket,
// which bbolt's open does not read), one whose pages were all overwritten, and one
// truncated to 0 bytes are refused at start with exit 1 within 2 s and a message saying
// which file, what is wrong and how to move it aside; the file is not locked afterwards,
// so after moving it aside talkd starts (with an empty state) and the plan is intact.
func TestFaultStateDBDamagedAtStart(t *testing.T) {
	t.Parallel()
	root, home := t.TempDir(), t.TempDir()
	db := faultStateDBUsed(t, root, home)
	plan := string(readFile(t, filepath.Join(root, "plans", "p.werkbaum")))
	damageStateDBPage(t, db)
	t.Run("one damaged page the open does not read", func(t *testing.T) { faultRefusedStart(t, root, home, db, "found by the check at start") })
	damageStateDB(t, db)
	t.Run("damaged pages", func(t *testing.T) { faultRefusedStart(t, root, home, db, "") })

	if err := os.Truncate(db, 0); err != nil {
		t.Fatal(err)
	}
	t.Run("empty file", func(t *testing.T) { faultRefusedStart(t, root, home, db, "empty (0 bytes)") })
	if fi, err := os.Stat(db); err != nil || fi.Size() != 0 {
		t.Fatalf("the refused empty file was changed: %v %v", fi, err)
	}

	if err := os.Rename(db, db+".damaged"); err != nil {
		t.Fatal(err)
	}
	d, _ := faultDiskDaemon(t, root, home)
	c := newMCPClient(d)
	if r := c.read(t, "p"); r.Text != plan {
		t.Errorf("the plan after moving the database aside:\n%s", r.Text)
	}
	if op := c.operation(t, "p", "db-1"); op.State != "unknown" {
		t.Errorf("db-1 with a fresh database: %+v, want unknown", op)
	}
	if a := faultWrite(t, c, "db-2", "b", "done"); a.IsError {
		t.Errorf("write on the fresh database: %s", a.Text)
	}
}

// TestFaultStateDBDamagedWhileRunning damages talkd.db under a running daemon: requests
// that need it get an error naming the damage (not "panicked", not a hang), speech and
// /healthz keep working, and SIGTERM still ends the daemon promptly with exit 0.
func TestFaultStateDBDamagedWhileRunning(t *testing.T) {
	t.Parallel()
	root, home := t.TempDir(), t.TempDir()
	d, plan := faultDiskDaemon(t, root, home)
	c := newMCPClient(d)
	if a := faultWrite(t, c, "run-1", "a", "done"); a.IsError {
		t.Fatalf("write: %s", a.Text)
	}
	faultWaitOutcome(t, d, faultSpeak(t, d, map[string]any{"text": "before the damage", "priority": "high"}), "spoken", 10*time.Second)
	written := string(readFile(t, plan))
	db := filepath.Join(root, "state", "talkd.db")
	damageStateDB(t, db)

	for _, a := range []struct {
		what string
		ans  *toolAnswer
	}{
		{"werkbaum_read", c.must(t, "werkbaum_read", map[string]any{"plan": "p"})},
		{"operation_get", c.must(t, "operation_get", map[string]any{"plan": "p", "request_id": "run-1"})},
		{"set_status", c.must(t, "werkbaum_set_status", writeArgs("p", planBase{Revision: 2, Checksum: sha([]byte(written))}, "run-2", map[string]any{"id": "b", "status": "done"}))},
	} {
		t.Logf("%s: isError=%v %q", a.what, a.ans.IsError, a.ans.Text)
		if !a.ans.IsError || !strings.Contains(a.ans.Text, "is damaged") || strings.Contains(a.ans.Text, "panic") {
			t.Errorf("%s on a damaged database: isError=%v %q, want an error naming the damage", a.what, a.ans.IsError, a.ans.Text)
		}
	}
	mute := faultTry(t, d, "mute", "POST", "/mute", `{"for":"1h"}`)
	t.Logf("mute: %v", mute)
	if mute.Status != 500 || !strings.Contains(mute.Body, "is damaged") {
		t.Errorf("mute on a damaged database: %v", mute)
	}
	if h := faultTry(t, d, "healthz", "GET", "/healthz", ""); h.Status != 200 {
		t.Errorf("healthz: %v", h)
	}
	faultSpeak(t, d, map[string]any{"text": "after the damage", "priority": "high"})
	d.waitSpoken(t, 2)
	if got := string(readFile(t, plan)); got != written {
		t.Errorf("the plan changed:\n%s", got)
	}
	if !strings.Contains(d.logs(), "state database damaged") {
		t.Errorf("no log line says the database is damaged:\n%s", d.logs())
	}

	started := time.Now()
	code := d.terminate(t)
	t.Logf("SIGTERM: exit %d after %v", code, time.Since(started).Round(time.Millisecond))
	if code != 0 || time.Since(started) > 5*time.Second {
		t.Errorf("SIGTERM on a damaged database: exit %d after %v", code, time.Since(started))
	}
}
