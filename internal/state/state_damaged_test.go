package state

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.etcd.io/bbolt"

	"talkd/internal/queue"
)

// damagePages overwrites every page after the two meta pages with a pattern bbolt can
// not read, the way a failing disk or a stray write would.
func damagePages(t *testing.T, path string) {
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

func historyDB(t *testing.T, path string) *DB {
	t.Helper()
	db, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var batch []queue.Entry
	for i := uint64(1); i <= 50; i++ {
		batch = append(batch, queue.Entry{Seq: i, ID: "e", Text: strings.Repeat("text ", 40), Outcome: "spoken"})
	}
	if err := db.SaveHistory(batch, 100); err != nil {
		t.Fatal(err)
	}
	return db
}

func TestOpenDamagedFileFailsNamingIt(t *testing.T) {
	path := filepath.Join(t.TempDir(), "talkd.db")
	historyDB(t, path).Close()
	damagePages(t, path)
	done := make(chan error, 1)
	go func() {
		db, err := Open(path, Options{})
		if err == nil {
			db.Close()
		}
		done <- err
	}()
	select {
	case err := <-done:
		var de *DamagedError
		if !errors.As(err, &de) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "move the file aside") {
			t.Fatalf("open of a damaged file: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("open of a damaged file hangs")
	}
	// The lock is not kept: nothing of the failed open holds the damaged file (a lock
	// would make the next open of it, or a reopen in a running daemon, say "is another
	// talkd running"), and it can be moved aside and a fresh database opened.
	if locked := lockedByOthers(t, path); locked {
		t.Error("the failed open still holds the lock of the damaged file")
	}
	if err := os.Rename(path, path+".damaged"); err != nil {
		t.Fatal(err)
	}
	db, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
}

func TestOpenEmptyFileIsDamaged(t *testing.T) {
	path := filepath.Join(t.TempDir(), "talkd.db")
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := Open(path, Options{})
	var de *DamagedError
	if !errors.As(err, &de) || !strings.Contains(err.Error(), "empty") {
		t.Fatalf("open of an empty file: %v", err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Size() != 0 {
		t.Fatalf("the empty file was touched: %v %v", fi, err)
	}
}

// TestPanicInTransactionBecomesError damages the file under an open database: the next
// transaction reads a damaged page and bbolt panics. That must come back as an error, and
// Close must not wait for a lock the panicking transaction held.
func TestPanicInTransactionBecomesError(t *testing.T) {
	path := filepath.Join(t.TempDir(), "talkd.db")
	db := historyDB(t, path)
	damagePages(t, path)
	_, err := db.LoadHistory(100)
	var de *DamagedError
	if !errors.As(err, &de) {
		t.Fatalf("history from a damaged page: %v", err)
	}
	if err := db.SaveMute(queue.MuteState{Muted: true}); !errors.As(err, &de) {
		t.Fatalf("write after the damage: %v", err)
	}
	closed := make(chan error, 1)
	go func() { closed <- db.Close() }()
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
		t.Fatal("Close waits for a lock after a panic")
	}
}

// TestOpenFindsDamageTheOpenDoesNotRead damages only the page of the history bucket: bbolt
// opens such a file without complaint (it reads the meta and freelist pages) and would
// panic in the first transaction that reads the history. The check at open finds it.
func TestOpenFindsDamageTheOpenDoesNotRead(t *testing.T) {
	path := filepath.Join(t.TempDir(), "talkd.db")
	db := historyDB(t, path)
	var root uint64
	db.View(func(tx *bbolt.Tx) error {
		root = uint64(tx.Bucket(bucketHistory).Root())
		return nil
	})
	db.Close()
	if root == 0 {
		t.Fatal("the history bucket is inline: no page to damage")
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	page := int64(os.Getpagesize())
	if _, err := f.WriteAt([]byte(strings.Repeat("\xa5", int(page))), int64(root)*page); err != nil {
		t.Fatal(err)
	}
	f.Close()
	raw, err := bbolt.Open(path, 0o600, &bbolt.Options{Timeout: time.Second})
	if err != nil {
		t.Fatalf("bbolt itself refuses the file (%v): the test does not test what it says", err)
	}
	raw.Close()
	_, err = Open(path, Options{})
	var de *DamagedError
	if !errors.As(err, &de) || !strings.Contains(err.Error(), "check at start") {
		t.Fatalf("open of a file with a damaged history page: %v", err)
	}
	t.Log(err)
}

// lockedByOthers reports whether an open file description other than a new one of its
// own holds bbolt's lock of path (this process's included: flock locks belong to the
// open file, not to the process).
func lockedByOthers(t *testing.T, path string) bool {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	unlock, locked := tryLockShared(f)
	if !locked {
		unlock()
	}
	return locked
}

// TestPanicOutsideBoltIsNotDamage: a transaction whose own code panics (a bug in the
// caller, not a page bbolt cannot read) comes back as an error and is rolled back, but
// the file is not declared damaged: the next transactions work, and nobody is told to
// move an intact database aside.
func TestPanicOutsideBoltIsNotDamage(t *testing.T) {
	path := filepath.Join(t.TempDir(), "talkd.db")
	db := historyDB(t, path)
	defer db.Close()
	err := db.Update(func(tx *bbolt.Tx) error {
		if err := tx.Bucket(bucketMeta).Put([]byte("half"), []byte("written")); err != nil {
			return err
		}
		var m map[string]int
		m["bug"]++ // assignment to a nil map: a panic in the caller's code
		return nil
	})
	var de *DamagedError
	if err == nil || errors.As(err, &de) || !strings.Contains(err.Error(), "panicked") {
		t.Fatalf("a panic in the caller's code: %v, want an error saying it panicked, not damage", err)
	}
	if err := db.SaveMute(queue.MuteState{Muted: true}); err != nil {
		t.Fatalf("write after the caller's panic: %v", err)
	}
	db.View(func(tx *bbolt.Tx) error {
		if v := tx.Bucket(bucketMeta).Get([]byte("half")); v != nil {
			t.Error("the panicking transaction was not rolled back")
		}
		return nil
	})
	if h, err := db.LoadHistory(100); err != nil || len(h) != 50 {
		t.Fatalf("history after the caller's panic: %d entries, %v", len(h), err)
	}
}
