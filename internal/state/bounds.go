package state

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"
)

// bbolt reads its file through a memory mapping that is larger than the file (1 GiB, see
// DefaultMapSize). A page id that a damaged header or page names past the file's end
// is then not an error but a read of unbacked memory: SIGBUS, which the Go runtime turns
// into "fatal error: fault" and a dump, not a panic anyone could recover — the daemon
// died at start without naming the file. Two guards keep that from happening:
//
//   - checkBounds reads the two meta pages with plain reads, before bbolt maps the file,
//     and refuses a file whose meta in force names a page (root, freelist, high water
//     mark) past its end, or that is cut short below its high water mark;
//   - the page-by-page check at start can run outside the daemon (Options.CheckApart:
//     the daemon runs its own binary on the file, CheckFile), so that a fault on a page
//     whose offsets point outside the file ends that process, not the daemon, and is
//     reported as damage naming the file.

// The meta page's layout (bbolt's common.Meta after the 16-byte page header).
const (
	boltMagic       = 0xED0CDAED
	boltVersion     = 2
	pageHeaderSize  = 16
	metaMagicAt     = pageHeaderSize + 0
	metaVersionAt   = pageHeaderSize + 4
	metaPageSizeAt  = pageHeaderSize + 8
	metaRootAt      = pageHeaderSize + 16
	metaFreelistAt  = pageHeaderSize + 32
	metaPgidAt      = pageHeaderSize + 40
	metaTxidAt      = pageHeaderSize + 48
	metaChecksumAt  = pageHeaderSize + 56
	metaEnd         = metaChecksumAt + 8
	pgidNoFreelist  = ^uint64(0)
	minBoltPageSize = 512
	maxBoltPageSize = 1 << 24
)

// boltMeta is what checkBounds needs of one meta page.
type boltMeta struct {
	page                 int // 0 or 1
	pageSize             uint64
	root, freelist, pgid uint64
	txid                 uint64
	valid                bool
}

// readMeta parses the meta page at off; valid says whether bbolt would accept it
// (magic, version, checksum).
func readMeta(f io.ReaderAt, off int64, page int) boltMeta {
	var b [metaEnd]byte
	if _, err := f.ReadAt(b[:], off); err != nil {
		return boltMeta{page: page}
	}
	le := binary.LittleEndian
	h := fnv.New64a()
	_, _ = h.Write(b[pageHeaderSize:metaChecksumAt])
	m := boltMeta{
		page:     page,
		pageSize: uint64(le.Uint32(b[metaPageSizeAt:])),
		root:     le.Uint64(b[metaRootAt:]),
		freelist: le.Uint64(b[metaFreelistAt:]),
		pgid:     le.Uint64(b[metaPgidAt:]),
		txid:     le.Uint64(b[metaTxidAt:]),
	}
	m.valid = le.Uint32(b[metaMagicAt:]) == boltMagic && le.Uint32(b[metaVersionAt:]) == boltVersion &&
		h.Sum64() == le.Uint64(b[metaChecksumAt:]) &&
		m.pageSize >= minBoltPageSize && m.pageSize <= maxBoltPageSize
	return m
}

// checkBounds refuses a file whose meta in force names pages past the file's end. A
// file without a valid meta page is left to bbolt, which refuses it itself (ErrInvalid);
// a missing file is created by the open.
func (d *DB) checkBounds() error {
	f, err := os.Open(d.path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return nil // the open reports it, with its own words
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return nil
	}
	size := uint64(fi.Size())
	// The page size as bbolt finds it: from meta 0, else from a valid meta 1 at one of the
	// offsets it tries (1 KiB … 16 MiB).
	m0 := readMeta(f, 0, 0)
	pageSize := m0.pageSize
	if !m0.valid {
		pageSize = 0
		for i := 0; i <= 14 && int64(1024<<i) < fi.Size()-1024; i++ {
			if m := readMeta(f, int64(1024<<i), 1); m.valid {
				pageSize = m.pageSize
				break
			}
		}
		if pageSize == 0 {
			return nil // bbolt refuses it itself
		}
	}
	m1 := readMeta(f, int64(pageSize), 1)
	// bbolt uses the valid meta with the higher transaction id.
	use := m0
	if !m0.valid || (m1.valid && m1.txid > m0.txid) {
		use = m1
	}
	if !use.valid {
		return nil
	}
	pages := size / use.pageSize
	switch {
	case use.pgid > pages:
		return &DamagedError{Path: d.path, Problem: fmt.Sprintf("meta page %d says the file has %d pages of %d bytes, but it has %d bytes (%d pages): it was cut short",
			use.page, use.pgid, use.pageSize, size, pages)}
	case use.root >= use.pgid:
		return &DamagedError{Path: d.path, Problem: fmt.Sprintf("meta page %d names page %d as the root, beyond its %d pages", use.page, use.root, use.pgid)}
	case use.freelist != pgidNoFreelist && use.freelist >= use.pgid:
		return &DamagedError{Path: d.path, Problem: fmt.Sprintf("meta page %d names page %d as the freelist, beyond its %d pages", use.page, use.freelist, use.pgid)}
	case use.root < 2 || (use.freelist != pgidNoFreelist && use.freelist < 2):
		return &DamagedError{Path: d.path, Problem: fmt.Sprintf("meta page %d names a meta page as the root (%d) or the freelist (%d)", use.page, use.root, use.freelist)}
	}
	return nil
}
