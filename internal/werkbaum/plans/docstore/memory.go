package docstore

import (
	"context"
	"strings"
	"sync"
	"time"

	"talkd/internal/werkbaum"
	"talkd/internal/werkbaum/plans/docs"
	"talkd/internal/werkbaum/plans/journal"
)

// OutsideName is the display name of a version made outside talkd (an editor saving the
// file, a git checkout) that a read noticed.
const OutsideName = "outside talkd"

// Normalize is the document content of a plan file's text: without a byte order mark,
// line endings normalised to LF.
func Normalize(raw string) string {
	return werkbaum.NormalizeLineEndings(strings.TrimPrefix(raw, "\ufeff"))
}

// Version is a version about to be recorded in a transaction.
type Version struct {
	Rec   docs.Record
	Text  string  // normalised
	Title *string // set by a rename
}

// Doc is what the store keeps in memory of one plan's document: loaded from the database
// on first use, then changed only after a committed transaction. Its fields are guarded
// by the store's one mutex, which the feed, the history and the titles share.
type Doc struct {
	key     string
	mu      *sync.Mutex // the Store's
	title   string
	created time.Time
	records []docs.Record // oldest first, at most docs.MaxRecords
	changed chan struct{} // closed and replaced when a version is recorded
	failed  uint64        // the revision whose recording last failed (not retried on every read)
	// writing is the revision a writer in the plan's lane is renaming into place and will
	// record itself (0: none). A read that sees the new file before the writer's settle
	// must not record that revision as a change made outside talkd.
	writing uint64
	// renamed: the file holds writing's text and the writer settles it in the background
	// (Renamed); the readers of the versions wait for its record (awaitRenamed).
	renamed bool
	// unsaved is the version of a write whose settle failed after its rename (the
	// journal keeps the write in memory): the read that records its revision records
	// this version, with its author, not a change made outside talkd.
	unsaved *Version
	// noting is closed when the read that records notingRev (Note) is done.
	noting    chan struct{}
	notingRev uint64
	// diffs are the feed's recent answers, shared by the waiters of one write (Diff).
	diffs []*FeedDiff
}

func (d *Doc) last() uint64 {
	if len(d.records) == 0 {
		return 0
	}
	return d.records[len(d.records)-1].Version
}

// deleted reports whether the newest version is a deletion (under mu).
func (d *Doc) deleted() bool {
	return len(d.records) > 0 && d.records[len(d.records)-1].ChangeType == docs.ChangeDeleted
}

// Known reports whether key has a document this process has seen (an id or versions).
func (s *Store) Known(key string) bool {
	if s.HasID(key) {
		return true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.docs[key]
	return ok
}

// Doc returns the plan's document, loading it from the database on first use.
func (s *Store) Doc(key string) (*Doc, error) {
	s.mu.Lock()
	d := s.docs[key]
	s.mu.Unlock()
	if d != nil {
		return d, nil
	}
	l, err := s.Load(key)
	if err != nil {
		return nil, err
	}
	loaded := &Doc{key: key, mu: &s.mu, changed: make(chan struct{}), title: l.Title, created: l.Created, records: l.Records}
	s.mu.Lock()
	defer s.mu.Unlock()
	if d := s.docs[key]; d != nil {
		return d, nil // loaded meanwhile
	}
	s.docs[key] = loaded
	return loaded, nil
}

// awaitRenamed waits (under mu, released meanwhile) until a writer that renamed its
// revision into place and was answered before its settle (Renamed) has recorded its
// version or ended: every reader of the versions sees the version of each answered
// write, as when the settle came before the answer. The plan's next write does not wait
// here (its read's Note leaves the writer's revision to it), so its work overlaps the
// settle.
func (d *Doc) awaitRenamed() {
	for d.renamed && d.last() < d.writing {
		ch := d.changed
		d.mu.Unlock()
		<-ch
		d.mu.Lock()
	}
}

// Records returns the version records, oldest first. The slice is the reader's: appends
// never change an element it sees, and a mark replaces the slice (Replace).
func (d *Doc) Records() []docs.Record {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.awaitRenamed()
	return d.records
}

// Info returns the title ("" = the file's base name), the creation time and the records.
func (d *Doc) Info() (title string, created time.Time, records []docs.Record) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.awaitRenamed()
	return d.title, d.created, d.records
}

// Last returns the newest recorded version and whether it is a deletion.
func (d *Doc) Last() (version uint64, deleted bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.awaitRenamed()
	return d.last(), d.deleted()
}

// Settling reports whether rev is being written by a writer that has not recorded it yet.
func (d *Doc) Settling(rev uint64) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.awaitRenamed()
	return d.writing == rev && d.last() < rev
}

// Changed returns the channel closed when the next version is recorded (or a writer's
// settle ends, Writing).
func (d *Doc) Changed() chan struct{} {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.changed
}

// Put records v in tx (PutVersion) after the records d holds, and completes v.Rec as
// stored. d is changed only by Saved, after the commit (tx may run more than once).
func (d *Doc) Put(tx journal.Tx, v *Version) error {
	d.mu.Lock()
	old := d.records
	d.mu.Unlock()
	rec, err := PutVersion(tx, d.key, old, v.Rec, v.Text, v.Title)
	if err != nil {
		return err
	}
	v.Rec = rec
	return nil
}

// Saved updates the memory after v's transaction committed and wakes the feed's waiters.
// A version not newer than the last one known is already there.
func (d *Doc) Saved(v *Version) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.add(v.Rec)
	if v.Title != nil {
		d.title = *v.Title
	}
}

// add appends r (under mu) and wakes the waiters.
func (d *Doc) add(r docs.Record) {
	if r.Version <= d.last() {
		return
	}
	if d.created.IsZero() {
		d.created = r.At
	}
	// Appending never changes an element a reader of the old slice sees; a mark replaces
	// the slice (Replace).
	all := append(d.records, r)
	d.records = docs.KeptRecords(all, docs.Retain(all))
	close(d.changed)
	d.changed = make(chan struct{})
}

// Replace puts rec in place of the record of its version (a mark), in a new slice:
// readers may hold the old one.
func (d *Doc) Replace(rec docs.Record) {
	d.mu.Lock()
	defer d.mu.Unlock()
	recs := append([]docs.Record(nil), d.records...)
	for i := range recs {
		if recs[i].Version == rec.Version {
			recs[i] = rec
		}
	}
	d.records = recs
}

// Keep keeps the version of a write whose settle failed for the read that records its
// revision (Note).
func (d *Doc) Keep(v *Version) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if v.Rec.Version > d.last() {
		d.unsaved = v
	}
}

// Writing marks rev as being written by a writer that records its version itself, until
// the returned func is called (after the settle). The end wakes the feed's waiters, which
// wait for the record of a revision being written even when the settle failed to record
// it.
func (d *Doc) Writing(rev uint64) func() {
	d.mu.Lock()
	d.writing = rev
	d.mu.Unlock()
	return func() {
		d.mu.Lock()
		defer d.mu.Unlock()
		if d.writing == rev {
			d.writing, d.renamed = 0, false
			close(d.changed)
			d.changed = make(chan struct{})
		}
	}
}

// Renamed marks that the writer of rev (Writing) has renamed its text into place and
// settles it in the background, answered already: until Writing ends, the readers of the
// versions (Records, Info, Last, Settling) wait for the writer's record instead of seeing the
// document without it.
func (d *Doc) Renamed(rev uint64) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.writing == rev {
		d.renamed = true
	}
}

// Note makes sure the revision a read found (raw, the file's text) is a version of the
// document. A revision that the store has no record of was given by the read to a change
// made outside talkd (or is the first one seen, or was settled by a crash recovery): it
// is recorded as such (at now), and the feed's waiters wake. Writes inside talkd record
// their versions in their own transaction, so a record found in the database (committed
// by another writer just now) is taken as it is. It costs a map lookup when the revision
// is known. A failure to record is logged and does not fail the read.
func (s *Store) Note(key string, rev uint64, raw string, now func() time.Time) {
	if rev == 0 {
		return
	}
	d, err := s.Doc(key)
	if err != nil {
		s.log.Warn("document: versions unreadable", "plan", key, "err", err)
		return
	}
	d.mu.Lock()
	last, failed, writing, wasDeleted, kept := d.last(), d.failed, d.writing, d.deleted(), d.unsaved
	if rev <= last || rev == failed || rev == writing {
		d.mu.Unlock()
		return
	}
	if d.noting != nil && d.notingRev == rev {
		// Another read records this revision right now: wait for it rather than commit the
		// same record again (and so never leave a late commit behind this read).
		ch := d.noting
		d.mu.Unlock()
		<-ch
		return
	}
	done := make(chan struct{})
	d.noting, d.notingRev = done, rev
	d.mu.Unlock()
	defer func() {
		d.mu.Lock()
		if d.noting == done {
			d.noting, d.notingRev = nil, 0
		}
		d.mu.Unlock()
		close(done)
	}()
	ct := docs.ChangeUpdated
	name := OutsideName
	switch {
	case last == 0:
		ct, name = docs.ChangeCreated, ""
	case wasDeleted:
		ct = docs.ChangeRestored
	}
	v := &Version{Rec: docs.Record{Version: rev, ChangeType: ct, DisplayName: name, Milestone: true, At: now().UTC()},
		Text: Normalize(raw)}
	if kept != nil && kept.Rec.Version == rev {
		v = kept
	}
	var found *docs.Record
	skip := false
	err = s.commit.Do(func(tx journal.Tx) error {
		found, skip = nil, false
		r, err := Recorded(tx, key, rev)
		if err != nil || r != nil {
			found = r
			return err
		}
		if HasVersion(tx, key, rev+1) {
			skip = true // a newer version is recorded already; this read was late
			return nil
		}
		return d.Put(tx, v)
	})
	d.mu.Lock()
	defer d.mu.Unlock()
	if err == nil && d.unsaved != nil && d.unsaved.Rec.Version <= rev {
		d.unsaved = nil // recorded now, or a newer version is (this one then has no record)
	}
	switch {
	case err != nil:
		d.failed = rev
		s.log.Warn("document: recording a version failed; it has no record (its text is not kept for rebasing)", "plan", key, "version", rev, "err", err)
	case found != nil:
		d.add(*found)
	case !skip:
		d.add(v.Rec)
		switch {
		case v == kept:
			s.log.Info("document: the version of a write whose settle failed is recorded", "plan", key, "version", rev, "client_id", v.Rec.ClientID, "name", v.Rec.DisplayName)
		case ct == docs.ChangeUpdated:
			s.log.Info("document: a change made outside talkd is a new version", "plan", key, "version", rev)
		case ct == docs.ChangeRestored:
			s.log.Info("document: the plan's file is back; a new version", "plan", key, "version", rev)
		}
	}
}

// maxFeedDiffs bounds the diffs a plan's feed keeps: the waiters of one write nearly all
// ask for the same one (from the version before it), a few late ones for older ones.
const maxFeedDiffs = 8

// FeedDiff is the feed's answer from version From to version To, shared by every waiter
// that asks for it: a write wakes all waiters at once, and 1,000 editors that each diffed
// the same two texts cost 1,000 diffs (measured: half a second to answer them all).
// Versions never change, so the answer stays right; ops are shared and only encoded.
type FeedDiff struct {
	From, To uint64
	done     chan struct{} // closed when the fields below are set
	Kept     bool          // the text of From is still kept (else the feed sends the content)
	Ops      []werkbaum.LineOp
	Err      error
}

// DiffFunc computes the diff from version from to the current text: whether from's text
// is still kept, and the ops.
type DiffFunc func(ctx context.Context, from uint64) (kept bool, ops []werkbaum.LineOp, err error)

// Diff returns the diff from version since to cur, computed once (by compute) for all
// the waiters asking at the same time. A failed computation is not kept; a waiter that
// saw another's failure computes again under its own context.
func (d *Doc) Diff(ctx context.Context, since, cur uint64, compute DiffFunc) *FeedDiff {
	d.mu.Lock()
	for _, f := range d.diffs {
		if f.From == since && f.To == cur {
			d.mu.Unlock()
			select {
			case <-f.done:
			case <-ctx.Done():
				return &FeedDiff{Err: ctx.Err()}
			}
			if f.Err == nil {
				return f
			}
			return run(ctx, &FeedDiff{From: since, To: cur, done: make(chan struct{})}, compute)
		}
	}
	f := &FeedDiff{From: since, To: cur, done: make(chan struct{})}
	if len(d.diffs) == maxFeedDiffs {
		d.diffs = append(d.diffs[:0], d.diffs[1:]...)
	}
	d.diffs = append(d.diffs, f)
	d.mu.Unlock()
	run(ctx, f, compute)
	if f.Err != nil {
		d.mu.Lock()
		for i, o := range d.diffs {
			if o == f {
				d.diffs = append(d.diffs[:i], d.diffs[i+1:]...)
				break
			}
		}
		d.mu.Unlock()
	}
	return f
}

func run(ctx context.Context, f *FeedDiff, compute DiffFunc) *FeedDiff {
	defer close(f.done)
	f.Kept, f.Ops, f.Err = compute(ctx, f.From)
	return f
}
