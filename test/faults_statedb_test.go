//go:build linux

package test

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"math/rand"
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

// boltMeta is a parsed bbolt meta page (page header 16 bytes, then magic, version,
// page size, flags, root bucket {root, sequence}, freelist, high water mark, txid, checksum).
const (
	metaRootAt     = 16 + 16
	metaFreelistAt = 16 + 32
	metaPgidAt     = 16 + 40
	metaChecksumAt = 16 + 56
)

// rewriteMetas sets a field of both meta pages of the file and seals them with a valid
// checksum (FNV-64a of the meta up to its checksum), so bbolt takes them as written.
func rewriteMetas(t *testing.T, path string, at int, value uint64) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	page := int(binary.LittleEndian.Uint32(raw[16+8:]))
	for _, off := range []int{0, page} {
		binary.LittleEndian.PutUint64(raw[off+at:], value)
		h := fnv.New64a()
		h.Write(raw[off+16 : off+metaChecksumAt])
		binary.LittleEndian.PutUint64(raw[off+metaChecksumAt:], h.Sum64())
	}
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestFaultStateDBDamageKinds: every kind of damage to talkd.db, also the ones that make
// bbolt read outside the file (which used to kill talkd at start with "fatal error:
// fault", exit 2, a 199-line dump and no word of the file), ends in exit 1 naming the file
// and the mv: the file cut short, a page id beyond its end, a page's overflow and element
// offsets beyond its end, meta pages of random bytes and meta pages with a valid checksum
// naming pages beyond the end, and random bytes (as in the issue's
// reproduction) of the pages in use, with several seeds.
func TestFaultStateDBDamageKinds(t *testing.T) {
	t.Parallel()
	root, home := t.TempDir(), t.TempDir()
	db := faultStateDBUsed(t, root, home)
	good, err := os.ReadFile(db)
	if err != nil {
		t.Fatal(err)
	}
	page := int(binary.LittleEndian.Uint32(good[16+8:]))
	t.Logf("the state file: %d bytes, pages of %d bytes", len(good), page)
	restore := func() {
		if err := os.WriteFile(db, good, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	overwrite := func(at int, b []byte) {
		f, err := os.OpenFile(db, os.O_RDWR, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := f.WriteAt(b, int64(at)); err != nil {
			t.Fatal(err)
		}
	}
	root0 := binary.LittleEndian.Uint64(good[metaRootAt:])
	beyond := uint64(len(good)/page + 8) // a page id past the file's end
	type damage struct {
		name    string
		damage  func()
		problem string // what the message must say ("" = any damage)
	}
	cases := []damage{
		{"cut short to three pages", func() {
			if err := os.Truncate(db, int64(3*page+100)); err != nil {
				t.Fatal(err)
			}
		}, "it was cut short"},
		{"the root page id beyond the end", func() { rewriteMetas(t, db, metaRootAt, beyond) }, "as the root, beyond its"},
		{"the freelist page id beyond the end", func() { rewriteMetas(t, db, metaFreelistAt, beyond) }, "as the freelist, beyond its"},
		{"the high water mark beyond the end", func() { rewriteMetas(t, db, metaPgidAt, beyond+64) }, "it was cut short"},
		{"overflow and offsets beyond the end", func() {
			// The root bucket's page (a leaf in a file this small): its overflow, and its
			// first element's offset (leaf element: flags, pos, ksize, vsize).
			overwrite(int(root0)*page+12, binary.LittleEndian.AppendUint32(nil, 1000))
			// The offset leads one page past the file's end: inside bbolt's mapping (1 GiB),
			// outside the file, so reading the key there is a fault (SIGBUS).
			past := len(good) - int(root0)*page + page
			overwrite(int(root0)*page+16+4, binary.LittleEndian.AppendUint32(nil, uint32(past)))
		}, ""},
		{"meta pages of random bytes", func() {
			junk := make([]byte, 2*page)
			rand.New(rand.NewSource(7)).Read(junk)
			overwrite(0, junk)
		}, "invalid database"},
	}
	// Random bytes over the pages in use (the freelist's, the root bucket's, and every
	// page below the high water mark at once), with several seeds.
	current := 0 // the meta page bbolt uses: the one with the higher transaction id
	if binary.LittleEndian.Uint64(good[page+16+48:]) > binary.LittleEndian.Uint64(good[16+48:]) {
		current = page
	}
	freelist := binary.LittleEndian.Uint64(good[current+metaFreelistAt:])
	inUse := binary.LittleEndian.Uint64(good[current+metaPgidAt:])
	for seed := int64(1); seed <= 3; seed++ {
		for _, pages := range []struct {
			what string
			ids  []uint64
		}{
			{"the freelist page", []uint64{freelist}},
			{"the root bucket's page", []uint64{binary.LittleEndian.Uint64(good[current+metaRootAt:])}},
			{"every page in use", pageRange(2, inUse)},
		} {
			cases = append(cases, damage{fmt.Sprintf("random bytes over %s (seed %d)", pages.what, seed), func() {
				r := rand.New(rand.NewSource(seed))
				for _, p := range pages.ids {
					junk := make([]byte, page)
					r.Read(junk)
					overwrite(int(p)*page, junk)
				}
			}, ""})
		}
	}
	for _, c := range cases {
		restore()
		c.damage()
		t.Run(c.name, func(t *testing.T) { faultRefusedStart(t, root, home, db, c.problem) })
	}
	restore()
	d, _ := faultDiskDaemon(t, root, home)
	if op := newMCPClient(d).operation(t, "p", "db-1"); op.State != "applied" {
		t.Errorf("db-1 on the restored file: %+v, want applied", op)
	}
}

// pageRange lists the page ids from, …, to-1.
func pageRange(from, to uint64) []uint64 {
	var ids []uint64
	for id := from; id < to; id++ {
		ids = append(ids, id)
	}
	return ids
}
