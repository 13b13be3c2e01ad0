package docstore

import "talkd/internal/werkbaum/plans/journal"

// Participant returns the store's part in the journal's settles (journal.Participant): a
// write that a crash left pending and the start found applied gets its version record,
// as its own settle would have given it. settled names such a write's version (its
// author by the entry's tool, which the façade knows); it is given the file's text.
func (s *Store) Participant(settled func(e *journal.Entry, text string) *Version) journal.Participant {
	return participant{s: s, settled: settled}
}

type participant struct {
	s       *Store
	settled func(e *journal.Entry, text string) *Version
}

// Recovering loads the document before the settle's transaction; without it the writes
// settled at start get no version record (a later read records their revision).
func (p participant) Recovering(key string) journal.RecoverStep {
	d, err := p.s.Doc(key)
	if err != nil {
		p.s.log.Warn("document: versions unreadable; a write settled at start gets no version record", "plan", key, "err", err)
		return nil
	}
	return &recovery{p: p, d: d}
}

// recovery records the versions of the writes one start-up settle found applied.
type recovery struct {
	p       participant
	d       *Doc
	settled []*Version
}

// Begin starts the transaction afresh.
func (r *recovery) Begin() { r.settled = nil }

// Applied gives the write its version record with its author, as its own settle would
// have, unless one is there already (then it is kept).
func (r *recovery) Applied(tx journal.Tx, e *journal.Entry, text string) error {
	if HasVersion(tx, r.d.key, e.Revision) {
		return nil
	}
	v := r.p.settled(e, text)
	if err := r.d.Put(tx, v); err != nil {
		return err
	}
	r.settled = append(r.settled, v)
	return nil
}

// Committed updates the memory once the settle committed.
func (r *recovery) Committed() {
	for _, v := range r.settled {
		r.d.Saved(v)
	}
}
