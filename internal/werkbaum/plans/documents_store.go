package plans

import (
	"crypto/rand"
	"encoding/hex"
	"strings"
	"sync"
	"time"

	"talkd/internal/werkbaum"
	"talkd/internal/werkbaum/plans/docs"
	"talkd/internal/werkbaum/plans/docstore"
	"talkd/internal/werkbaum/plans/journal"
)

// The document store: each plan's version log in the state database, in the layout and
// under the retention rule of package docs (docs/versions.go), and what this process
// keeps of it in memory. The ids and the reads of kept texts are package docstore's.

// pendingVersion is a version about to be recorded in a transaction.
type pendingVersion struct {
	rec   docs.Record
	text  string  // normalised
	title *string // set by a rename
}

// docState is what the store keeps in memory of one plan's document: loaded from the
// database on first use, then changed only after a committed transaction.
type docState struct {
	title   string
	created time.Time
	records []docs.Record // oldest first, at most docs.MaxRecords
	changed chan struct{} // closed and replaced when a version is recorded
	failed  uint64        // the revision whose recording last failed (not retried on every read)
	// writing is the revision a writer in the plan's lane is renaming into place and will
	// record itself (0: none). A read that sees the new file before the writer's settle
	// must not record that revision as a change made outside talkd.
	writing uint64
	// unsaved is the version of a write whose settle failed after its rename (the
	// journal keeps the write in memory): the read that records its revision records
	// this version, with its author, not a change made outside talkd.
	unsaved *pendingVersion
	// noting is closed when the read that records notingRev (noteVersion) is done.
	noting    chan struct{}
	notingRev uint64
	// diffs are the feed's recent answers, shared by the waiters of one write (feedDiff).
	diffs []*feedDiffEntry
}

func (st *docState) last() uint64 {
	if len(st.records) == 0 {
		return 0
	}
	return st.records[len(st.records)-1].Version
}

// deleted reports whether the newest version is a deletion (under docs.mu).
func (st *docState) deleted() bool {
	return len(st.records) > 0 && st.records[len(st.records)-1].ChangeType == ChangeDeleted
}

// docStore is the document store's memory of the per-plan states, over the stored ids
// and version texts (package docstore).
type docStore struct {
	stored *docstore.Store // set when the journal opens
	mu     sync.Mutex
	states map[string]*docState
}

// known reports whether key has a document this process has seen (an id or versions).
func (d *docStore) known(key string) bool {
	if d.stored.HasID(key) {
		return true
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	_, st := d.states[key]
	return st
}

func newDocStore() *docStore {
	return &docStore{states: map[string]*docState{}}
}

// newAgentClientID is the document client id of this process's agent writes.
func newAgentClientID() string {
	var b [8]byte
	rand.Read(b[:])
	return "mcp-" + hex.EncodeToString(b[:])
}

// docState returns the plan's document state, loading it from the database on first use.
func (s *Service) docState(key string) (*docState, error) {
	d := s.docs
	d.mu.Lock()
	st := d.states[key]
	d.mu.Unlock()
	if st != nil {
		return st, nil
	}
	l, err := d.stored.Load(key)
	if err != nil {
		return nil, err
	}
	loaded := &docState{changed: make(chan struct{}), title: l.Title, created: l.Created, records: l.Records}
	d.mu.Lock()
	defer d.mu.Unlock()
	if st := d.states[key]; st != nil {
		return st, nil // loaded meanwhile
	}
	d.states[key] = loaded
	return loaded, nil
}

// putVersion records pv in tx (docstore.PutVersion: its record and text, the document
// meta, and the records and texts the bounds no longer keep dropped) after the records
// st holds. st must be the plan's loaded state; it is changed only by versionSaved, after
// the commit (tx may run more than once).
func (s *Service) putVersion(tx Tx, key string, st *docState, pv *pendingVersion) error {
	s.docs.mu.Lock()
	old := st.records
	s.docs.mu.Unlock()
	rec, err := docstore.PutVersion(tx, key, old, pv.rec, pv.text, pv.title)
	if err != nil {
		return err
	}
	pv.rec = rec
	return nil
}

// versionSaved updates the memory after pv's transaction committed and wakes the feed's
// waiters. A version not newer than the last one known is already there.
func (s *Service) versionSaved(key string, st *docState, pv *pendingVersion) {
	s.docs.mu.Lock()
	defer s.docs.mu.Unlock()
	s.addRecord(st, pv.rec)
	if pv.title != nil {
		st.title = *pv.title
	}
}

// addRecord appends r to st (under docs.mu) and wakes the waiters.
func (s *Service) addRecord(st *docState, r docs.Record) {
	if r.Version <= st.last() {
		return
	}
	if st.created.IsZero() {
		st.created = r.At
	}
	// Appending never changes an element a reader of the old slice sees; a mark replaces
	// the slice (markMilestone).
	all := append(st.records, r)
	st.records = docs.KeptRecords(all, docs.Retain(all))
	close(st.changed)
	st.changed = make(chan struct{})
}

// noteVersion makes sure the revision a read found is a version of the document. A
// revision that the store has no record of was given by the read to a change made outside
// talkd (or is the first one seen, or was settled by a crash recovery): it is recorded as
// such, and the feed's waiters wake. Writes inside talkd record their versions in their
// own transaction, so a record found in the database (committed by another writer just
// now) is taken as it is. It costs a map lookup when the revision is known. A failure to
// record is logged and does not fail the read.
func (s *Service) noteVersion(key string, rev uint64, text string) {
	if rev == 0 {
		return
	}
	st, err := s.docState(key)
	if err != nil {
		s.log.Warn("document: versions unreadable", "plan", key, "err", err)
		return
	}
	s.docs.mu.Lock()
	last, failed, writing, wasDeleted, kept := st.last(), st.failed, st.writing, st.deleted(), st.unsaved
	if rev <= last || rev == failed || rev == writing {
		s.docs.mu.Unlock()
		return
	}
	if st.noting != nil && st.notingRev == rev {
		// Another read records this revision right now: wait for it rather than commit the
		// same record again (and so never leave a late commit behind this read).
		ch := st.noting
		s.docs.mu.Unlock()
		<-ch
		return
	}
	done := make(chan struct{})
	st.noting, st.notingRev = done, rev
	s.docs.mu.Unlock()
	defer func() {
		s.docs.mu.Lock()
		if st.noting == done {
			st.noting, st.notingRev = nil, 0
		}
		s.docs.mu.Unlock()
		close(done)
	}()
	ct := ChangeUpdated
	name := outsideName
	switch {
	case last == 0:
		ct, name = ChangeCreated, ""
	case wasDeleted:
		ct = ChangeRestored
	}
	pv := &pendingVersion{rec: docs.Record{Version: rev, ChangeType: ct, DisplayName: name, Milestone: true, At: s.now().UTC()},
		text: docText(text)}
	if kept != nil && kept.rec.Version == rev {
		pv = kept
	}
	var found *docs.Record
	skip := false
	err = s.commit.Do(func(tx Tx) error {
		found, skip = nil, false
		r, err := docstore.Recorded(tx, key, rev)
		if err != nil || r != nil {
			found = r
			return err
		}
		if docstore.HasVersion(tx, key, rev+1) {
			skip = true // a newer version is recorded already; this read was late
			return nil
		}
		return s.putVersion(tx, key, st, pv)
	})
	s.docs.mu.Lock()
	defer s.docs.mu.Unlock()
	if err == nil && st.unsaved != nil && st.unsaved.rec.Version <= rev {
		st.unsaved = nil // recorded now, or a newer version is (this one then has no record)
	}
	switch {
	case err != nil:
		st.failed = rev
		s.log.Warn("document: recording a version failed; it has no record (its text is not kept for rebasing)", "plan", key, "version", rev, "err", err)
	case found != nil:
		s.addRecord(st, *found)
	case !skip:
		s.addRecord(st, pv.rec)
		switch {
		case pv == kept:
			s.log.Info("document: the version of a write whose settle failed is recorded", "plan", key, "version", rev, "client_id", pv.rec.ClientID, "name", pv.rec.DisplayName)
		case ct == ChangeUpdated:
			s.log.Info("document: a change made outside talkd is a new version", "plan", key, "version", rev)
		case ct == ChangeRestored:
			s.log.Info("document: the plan's file is back; a new version", "plan", key, "version", rev)
		}
	}
}

// deletedChecksum is the plan checksum kept while its file is missing: no text has it, so
// the file's return (with any text, also the one it had) is a revision of its own.
const deletedChecksum = "deleted"

// noteDeleted records that a read found the plan's file missing: one DELETED version,
// once, which moves the plan's revision on with it (so the version numbers stay one
// counter). Its kept text is the last version's, so the feed's diffs stay true: the
// deletion changes no line, and the file's return is diffed against what was there. A
// plan that never had a version has nothing to delete. A failure is logged and changes
// nothing; the next read tries again. (A file back by the time this runs is a RESTORED
// version at the next read: it was missing when the read looked.)
func (s *Service) noteDeleted(key string) {
	if !s.docs.known(key) {
		return // no document (a mistyped key below a root has none): nothing to delete
	}
	st, err := s.docState(key)
	if err != nil {
		s.log.Warn("document: versions unreadable", "plan", key, "err", err)
		return
	}
	s.docs.mu.Lock()
	last, gone := st.last(), st.deleted()
	s.docs.mu.Unlock()
	if last == 0 || gone {
		return
	}
	text, _, err := s.docs.stored.Text(key, last)
	if err != nil {
		s.log.Warn("document: versions unreadable", "plan", key, "err", err)
		return
	}
	var meta journal.Meta
	var pv *pendingVersion
	err = s.commit.Do(func(tx Tx) error {
		pv = nil
		b, err := tx.CreateBucket(journal.BucketName(key))
		if err != nil {
			return err
		}
		if err := journal.ReadMeta(b, &meta); err != nil {
			return err
		}
		meta = s.mem.NewerMeta(key, meta)
		if meta.Checksum == deletedChecksum || meta.Revision < last {
			return nil // recorded by another read already, or the versions are ahead
		}
		meta = journal.Meta{Revision: meta.Revision + 1, Checksum: deletedChecksum}
		if err := journal.WriteMeta(b, meta); err != nil {
			return err
		}
		pv = &pendingVersion{rec: docs.Record{Version: meta.Revision, ChangeType: ChangeDeleted,
			DisplayName: outsideName, Milestone: true, At: s.now().UTC()}, text: text}
		return s.putVersion(tx, key, st, pv)
	})
	if err != nil {
		s.log.Warn("document: recording the deletion failed", "plan", key, "err", err)
		return
	}
	if pv == nil {
		return
	}
	s.mem.MetaSaved(key, meta)
	s.versionSaved(key, st, pv)
	s.log.Info("document: the plan's file is missing; its document reads as deleted until the file is back", "plan", key, "version", pv.rec.Version)
}

// docText is the document content of a plan file's text: without a byte order mark,
// line endings normalised to LF.
func docText(raw string) string {
	return werkbaum.NormalizeLineEndings(strings.TrimPrefix(raw, "\ufeff"))
}

// fileStyle is how a plan file writes its lines: BOM and line ending. A PATCH's result
// is written back in the file's style, so an editor's change to a CRLF file does not
// rewrite every line; a file with mixed endings gets its most common one.
type fileStyle struct {
	bom bool
	eol string
}

func styleOf(raw string) fileStyle {
	st := fileStyle{bom: strings.HasPrefix(raw, "\ufeff"), eol: "\n"}
	crlf := strings.Count(raw, "\r\n")
	cr := strings.Count(raw, "\r") - crlf
	lf := strings.Count(raw, "\n") - crlf
	switch {
	case crlf > 0 && crlf >= lf && crlf >= cr:
		st.eol = "\r\n"
	case cr > lf:
		st.eol = "\r"
	}
	return st
}

// encode writes the normalised text in the file's style.
func (st fileStyle) encode(text string) []byte {
	if st.eol != "\n" {
		text = strings.ReplaceAll(text, "\n", st.eol)
	}
	if st.bom {
		text = "\ufeff" + text
	}
	return []byte(text)
}

// agentVersion prepares the version record of an agent write (Write): the process's
// agent client id, the MCP host's name (or "Agent"), the authenticated client, a
// milestone. doc is nil when the document's state cannot be read; the write then goes
// on without a record (a later read records the revision as seen).
func (s *Service) agentVersion(key string, who Author, rev uint64, text string) (*docState, *pendingVersion) {
	st, err := s.docState(key)
	if err != nil {
		s.log.Warn("document: versions unreadable; the agent write gets no version record", "plan", key, "err", err)
		return nil, nil
	}
	name := who.Agent
	if name == "" {
		name = agentName
	}
	return st, &pendingVersion{rec: docs.Record{Version: rev, ChangeType: ChangeUpdated, ClientID: s.agentClientID,
		DisplayName: name, Client: who.Client, Milestone: true, At: s.now().UTC()}, text: docText(text)}
}

// putAgentVersion records an agent write's version in its settle transaction.
func (s *Service) putAgentVersion(tx Tx, key string, st *docState, pv *pendingVersion) error {
	if st == nil {
		return nil
	}
	return s.putVersion(tx, key, st, pv)
}

// keepVersion keeps the version of a write whose settle failed for the read that
// records its revision (noteVersion). st may be nil (the versions are unreadable).
func (s *Service) keepVersion(st *docState, pv *pendingVersion) {
	if st == nil || pv == nil {
		return
	}
	s.docs.mu.Lock()
	defer s.docs.mu.Unlock()
	if pv.rec.Version > st.last() {
		st.unsaved = pv
	}
}

// agentVersionSaved updates the memory once the settle committed.
func (s *Service) agentVersionSaved(key string, st *docState, pv *pendingVersion) {
	if st != nil {
		s.versionSaved(key, st, pv)
	}
}

// docWriting marks rev as being written by a writer that records its version itself,
// until the returned func is called (after the settle). The end wakes the feed's waiters,
// which wait for the record of a revision being written (Changes) even when the settle
// failed to record it.
func (s *Service) docWriting(key string, rev uint64) func() {
	st, err := s.docState(key)
	if err != nil {
		return func() {}
	}
	s.docs.mu.Lock()
	st.writing = rev
	s.docs.mu.Unlock()
	return func() {
		s.docs.mu.Lock()
		defer s.docs.mu.Unlock()
		if st.writing == rev {
			st.writing = 0
			close(st.changed)
			st.changed = make(chan struct{})
		}
	}
}

// settledVersion is the version record of a write that a crash left pending and the start
// found applied: an editor's PATCH under its clientId and display name, an agent's write
// under the MCP host's name (its process's agent client id is gone with it).
func (s *Service) settledVersion(e *journalEntry, text string) *pendingVersion {
	rec := docs.Record{Version: e.Revision, ChangeType: ChangeUpdated, DisplayName: e.Author.Agent, Milestone: true, At: e.At}
	switch e.Tool {
	case patchTool:
		rec.ClientID = strings.TrimPrefix(e.Author.Client, patchClient(""))
	case restoreTool:
		settledRestore(&rec, e)
	default:
		rec.Client = e.Author.Client
		if rec.DisplayName == "" {
			rec.DisplayName = agentName
		}
	}
	return &pendingVersion{rec: rec, text: docText(text)}
}

// docParticipant is the document store's part in the journal's settles
// (journal.Participant).
type docParticipant struct{ s *Service }

// Recovering loads the document's state before the settle's transaction; without it the
// writes settled at start get no version record (a later read records their revision).
func (d docParticipant) Recovering(key string) journal.RecoverStep {
	st, err := d.s.docState(key)
	if err != nil {
		d.s.log.Warn("document: versions unreadable; a write settled at start gets no version record", "plan", key, "err", err)
		return nil
	}
	return &docRecovery{s: d.s, key: key, st: st}
}

// docRecovery records the versions of the writes one start-up settle found applied.
type docRecovery struct {
	s       *Service
	key     string
	st      *docState
	settled []*pendingVersion
}

// Begin starts the transaction afresh.
func (r *docRecovery) Begin() { r.settled = nil }

// Applied gives the write its version record with its author, as its own settle would
// have, unless one is there already (then it is kept).
func (r *docRecovery) Applied(tx Tx, e *journalEntry, text string) error {
	if docstore.HasVersion(tx, r.key, e.Revision) {
		return nil
	}
	pv := r.s.settledVersion(e, text)
	if err := r.s.putVersion(tx, r.key, r.st, pv); err != nil {
		return err
	}
	r.settled = append(r.settled, pv)
	return nil
}

// Committed updates the memory once the settle committed.
func (r *docRecovery) Committed() {
	for _, pv := range r.settled {
		r.s.versionSaved(r.key, r.st, pv)
	}
}
