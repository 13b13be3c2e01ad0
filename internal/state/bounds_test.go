package state

import (
	"encoding/binary"
	"errors"
	"hash/fnv"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOpenRefusesPagesPastTheEnd: a file cut short below its high water mark, and meta
// pages (with a valid checksum) naming the root or the freelist past the file's end, are
// refused by Open as damaged before bbolt maps the file. Without the bounds check bbolt
// reads unbacked memory there and the process dies of a fault (this test binary with it).
func TestOpenRefusesPagesPastTheEnd(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.db")
	historyDB(t, good).Close()
	raw, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	page := int(binary.LittleEndian.Uint32(raw[metaPageSizeAt:]))
	past := uint64(len(raw)/page + 4)
	setMetas := func(b []byte, at int, v uint64) {
		for _, off := range []int{0, page} {
			binary.LittleEndian.PutUint64(b[off+at:], v)
			h := fnv.New64a()
			h.Write(b[off+pageHeaderSize : off+metaChecksumAt])
			binary.LittleEndian.PutUint64(b[off+metaChecksumAt:], h.Sum64())
		}
	}
	for _, c := range []struct {
		name, want string
		damage     func([]byte) []byte
	}{
		{"cut short", "it was cut short", func(b []byte) []byte { return b[:3*page+10] }},
		{"root past the end", "as the root, beyond", func(b []byte) []byte { setMetas(b, metaRootAt, past); return b }},
		{"freelist past the end", "as the freelist, beyond", func(b []byte) []byte { setMetas(b, metaFreelistAt, past); return b }},
		{"high water mark past the end", "it was cut short", func(b []byte) []byte { setMetas(b, metaPgidAt, past); return b }},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "-")+".db")
			if err := os.WriteFile(path, c.damage(append([]byte(nil), raw...)), 0o600); err != nil {
				t.Fatal(err)
			}
			for what, open := range map[string]func() error{
				"Open":      func() error { db, err := Open(path, Options{}); closeIf(db); return err },
				"CheckFile": func() error { return CheckFile(path, Options{}) },
			} {
				var de *DamagedError
				err := open()
				if !errors.As(err, &de) || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "mv "+path) {
					t.Errorf("%s: %v, want a DamagedError saying %q and the mv", what, err, c.want)
				}
			}
		})
	}
	if err := CheckFile(good, Options{}); err != nil {
		t.Errorf("CheckFile of the intact file: %v", err)
	}
	db, err := Open(good, Options{CheckApart: func(string) error { return &DamagedError{Path: good, Problem: "the checker says so"} }})
	closeIf(db)
	if err == nil || !strings.Contains(err.Error(), "the checker says so") {
		t.Errorf("Open with a CheckApart that refuses: %v", err)
	}
}

func closeIf(db *DB) {
	if db != nil {
		db.Close()
	}
}
