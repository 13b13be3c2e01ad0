//go:build linux

package state

import (
	"bytes"
	"errors"
	"go.etcd.io/bbolt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"talkd/internal/queue"
)

// breakNextMapping makes bbolt's next remap of db fail (a file mapping with MAP_HUGETLB
// is refused with EINVAL), as an ext4 file system that turned read-only refuses it with
// EROFS. A handle opened afterwards maps normally: the flag lives on the old handle.
// handle returns the current bbolt handle. It is closed and replaced when the database is
// reopened after a failed mapping, which is why every store goes through View, Update and
// Batch instead of holding it.
func (d *DB) handle() *bbolt.DB {
	d.mu.RLock()
	defer d.mu.RUnlock()
	return d.bolt
}

func breakNextMapping(db *DB) { db.handle().MmapFlags = syscall.MAP_HUGETLB }

// bigEntries returns n history entries from seq on whose texts need several pages, so
// that saving them grows the file beyond a small mapping.
func bigEntries(seq uint64, n int) []queue.Entry {
	var out []queue.Entry
	for i := range n {
		out = append(out, queue.Entry{Seq: seq + uint64(i), ID: "b", Text: strings.Repeat("x", 4000), Outcome: "spoken"})
	}
	return out
}

func logTo(buf *bytes.Buffer) *slog.Logger { return slog.New(slog.NewTextHandler(buf, nil)) }

// seed writes a mute and three history entries and returns the mute's end.
func seed(t *testing.T, db *DB) time.Time {
	t.Helper()
	until := time.Date(2026, 11, 30, 14, 0, 0, 0, time.UTC)
	if err := db.SaveMute(queue.MuteState{Muted: true, Until: &until}); err != nil {
		t.Fatal(err)
	}
	if err := db.SaveHistory([]queue.Entry{{Seq: 1, ID: "a1", Text: "one", Outcome: "spoken"}, {Seq: 2, ID: "a2", Text: "two", Outcome: "spoken"}, {Seq: 3, ID: "a3", Text: "three", Outcome: "failed"}}, 1000); err != nil {
		t.Fatal(err)
	}
	return until
}

// checkSeeded fails unless the mute and the first three entries of seed are there.
// checkSeededAfterRestart opens the closed file at path again, as the next daemon would,
// and checks what checkSeeded checks.
func checkSeededAfterRestart(t *testing.T, path string, until time.Time, wantLen int) {
	t.Helper()
	db, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	checkSeeded(t, db, until, wantLen)
}

func checkSeeded(t *testing.T, db *DB, until time.Time, wantLen int) {
	t.Helper()
	m, err := db.LoadMute()
	if err != nil || !m.Muted || m.Until == nil || !m.Until.Equal(until) {
		t.Fatalf("mute: %+v %v", m, err)
	}
	h, err := db.LoadHistory(1000)
	if err != nil {
		t.Fatal(err)
	}
	if len(h) != wantLen || h[0].ID != "a1" || h[1].Text != "two" || h[2].Outcome != "failed" {
		t.Fatalf("history: %d entries, want %d; first %+v", len(h), wantLen, h[:min(3, len(h))])
	}
}

// TestReopenAfterFailedMapping: a write that needs a larger mapping fails to map; the
// database is reopened, the write is retried and succeeds, and nothing committed before
// is lost.
func TestReopenAfterFailedMapping(t *testing.T) {
	path := filepath.Join(t.TempDir(), "talkd.db")
	var logs bytes.Buffer
	db, err := Open(path, Options{MapSize: -1, Log: logTo(&logs)})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	until := seed(t, db)
	old := db.handle()
	breakNextMapping(db)
	if err := db.SaveHistory(bigEntries(4, 40), 1000); err != nil {
		t.Fatalf("write across the failed mapping: %v", err)
	}
	if db.handle() == old || !strings.Contains(logs.String(), "reopened after a failed mapping") {
		t.Fatalf("the database was not reopened; log:\n%s", logs.String())
	}
	checkSeeded(t, db, until, 43)
	if n, err := db.NextSeq(); err != nil || n != 43 {
		t.Fatalf("seq %d %v, want 43", n, err)
	}
	db.Close()
	checkSeededAfterRestart(t, path, until, 43)
}

// TestDefaultMappingNeverRemaps: with the default mapping the same growth needs no new
// mapping at all, so the broken remap is never reached and no reopen happens.
func TestDefaultMappingNeverRemaps(t *testing.T) {
	if (Options{}).mapSize() == 0 {
		t.Skip("no default mapping on this platform")
	}
	var logs bytes.Buffer
	db, err := Open(filepath.Join(t.TempDir(), "talkd.db"), Options{Log: logTo(&logs)})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	until := seed(t, db)
	old := db.handle()
	breakNextMapping(db)
	if err := db.SaveHistory(bigEntries(4, 400), 1000); err != nil {
		t.Fatalf("write of 1.6 MB: %v", err)
	}
	if db.handle() != old || logs.Len() != 0 {
		t.Fatalf("reopened although the mapping should not have changed; log:\n%s", logs.String())
	}
	checkSeeded(t, db, until, 403)
}

// TestReadOnlyDiskThenWritableAgain: the remap fails while the disk refuses writes. The
// database is reopened read-only: reads keep working, writes fail naming the cause. Once
// the disk takes writes again the next write reopens it read-write, without a restart,
// and everything written before is there.
func TestReadOnlyDiskThenWritableAgain(t *testing.T) {
	path := filepath.Join(t.TempDir(), "talkd.db")
	var readOnly atomic.Bool
	openFile := func(name string, flag int, perm os.FileMode) (*os.File, error) {
		if readOnly.Load() && flag&(os.O_RDWR|os.O_WRONLY) != 0 {
			return nil, &os.PathError{Op: "open", Path: name, Err: syscall.EROFS}
		}
		return os.OpenFile(name, flag, perm)
	}
	var logs bytes.Buffer
	db, err := Open(path, Options{MapSize: -1, Log: logTo(&logs), openFile: openFile})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	until := seed(t, db)

	readOnly.Store(true)
	breakNextMapping(db)
	err = db.SaveHistory(bigEntries(4, 40), 1000)
	if err == nil || !errors.Is(err, syscall.EROFS) || !strings.Contains(err.Error(), "read-only file system") {
		t.Fatalf("write while read-only: %v, want an error naming the read-only file system", err)
	}
	t.Logf("write while read-only: %v", err)
	checkSeeded(t, db, until, 3) // reads work from the read-only handle
	err = db.SaveMute(queue.MuteState{})
	if err == nil || !strings.Contains(err.Error(), "read-only") {
		t.Fatalf("mute while read-only: %v", err)
	}
	t.Logf("mute while read-only: %v", err)
	if m, _ := db.LoadMute(); !m.Muted {
		t.Fatal("the refused unmute is in effect")
	}

	readOnly.Store(false)
	if err := db.SaveHistory(bigEntries(4, 40), 1000); err != nil {
		t.Fatalf("write after the disk became writable: %v", err)
	}
	checkSeeded(t, db, until, 43)
	if !strings.Contains(logs.String(), "reopened read-only") || strings.Count(logs.String(), "reopened after a failed mapping") != 1 {
		t.Fatalf("log:\n%s", logs.String())
	}
	db.Close()
	checkSeededAfterRestart(t, path, until, 43)
}

// TestNoReopenAfterClose: a transaction after Close (a late history flush during
// shutdown) fails and does not open the file again, so its lock is free for the next
// daemon.
func TestNoReopenAfterClose(t *testing.T) {
	path := filepath.Join(t.TempDir(), "talkd.db")
	db, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	if err := db.SaveMute(queue.MuteState{Muted: true}); !errors.Is(err, errNotOpen) {
		t.Fatalf("write after Close: %v, want %v", err, errNotOpen)
	}
	if _, err := db.LoadMute(); !errors.Is(err, errNotOpen) {
		t.Fatalf("read after Close: %v, want %v", err, errNotOpen)
	}
	next, err := Open(path, Options{})
	if err != nil {
		t.Fatalf("the file is still held after Close: %v", err)
	}
	next.Close()
}

// TestMappingRefusedFallsBack: when the reserved mapping is refused (here: more address
// space than a process has; in the field: ulimit -v), the database opens with bbolt's
// growing mapping and works.
func TestMappingRefusedFallsBack(t *testing.T) {
	var logs bytes.Buffer
	db, err := Open(filepath.Join(t.TempDir(), "talkd.db"), Options{MapSize: 1 << 47, Log: logTo(&logs)})
	if err != nil {
		t.Fatalf("open with a refused mapping: %v", err)
	}
	defer db.Close()
	if !strings.Contains(logs.String(), "mapped as it grows") {
		t.Fatalf("no fallback logged:\n%s", logs.String())
	}
	until := seed(t, db)
	if err := db.SaveHistory(bigEntries(4, 40), 1000); err != nil {
		t.Fatal(err)
	}
	checkSeeded(t, db, until, 43)
}
