package journal

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"
	"time"
)

// NewMemory makes the journal's memory over commit; log is told what the background saver
// does, local is the local client's name (EntryKey) and limit the journal's bound per plan
// (PutEntry).
func NewMemory(commit *GroupCommit, log *slog.Logger, local string, limit int) *Memory {
	return &Memory{commit: commit, log: log, local: local, limit: limit,
		inflight: map[string]int{}, entries: map[string]unsavedEntry{}, metas: map[string]Meta{},
		stop: make(chan struct{}), saved: make(chan struct{})}
}

// Kept is applied entries kept in memory (by plan and entry key), as KeptOf hands them
// to a transaction that saves them (PutKept) and ForgetKept forgets them after it.
type Kept map[string]unsavedEntry

func (m *Memory) keyOf(e *Entry) []byte { return EntryKey(e.Author.Client, m.local, e.RequestID) }

// Memory is what the journal knows and the database does not hold yet, and which
// writes run right now.
//
// A write is acknowledged once its file is renamed into place; when settling it in the
// database fails after that (a full or read-only state disk), the applied entry and the
// plan's revision stay here, answer operation_get, retries and reads as if saved, and are
// saved in the background once a second until that works. A revision given to an outside
// edit while the database cannot be written is kept the same way, so that reads never
// need a successful state write. A crash loses only this memory: the entry saved as
// pending is settled from the file on the next start, as after any crash.
type Memory struct {
	commit *GroupCommit
	log    *slog.Logger
	local  string // the local client's name (EntryKey)
	limit  int    // the journal's bound per plan (PutEntry)

	mu       sync.Mutex
	inflight map[string]int          // plan + entry key → writes running
	entries  map[string]unsavedEntry // plan + entry key → applied, not yet saved
	metas    map[string]Meta         // plan → revision not yet saved
	saving   bool                    // the background saver runs
	closed   bool                    // Close was called
	settles  sync.WaitGroup          // settles queued by Settling and not yet done
	stop     chan struct{}           // closed by Close
	saved    chan struct{}           // closed when the saver ends after Close
}

type unsavedEntry struct {
	plan string
	e    Entry
}

func memKey(plan string, ek []byte) string { return plan + "\x00" + string(ek) }

// KeepApplied keeps an applied entry and the plan's revision in memory until the
// background saver has saved them.
func (m *Memory) KeepApplied(key string, e *Entry, meta Meta) {
	m.mu.Lock()
	m.entries[memKey(key, m.keyOf(e))] = unsavedEntry{plan: key, e: *e}
	if cur, ok := m.metas[key]; !ok || cur.Revision < meta.Revision {
		m.metas[key] = meta
	}
	m.mu.Unlock()
	m.StartSaver()
}

// Settling keeps a write's applied entry and the plan's revision in memory from its
// rename until its settle transaction (queued with GroupCommit.Start) is done: the write
// is answered before that commit, and operation_get, retries and reads answer from here
// meanwhile, as after a failed settle. Settled ends it with the commit's outcome; Close
// waits for the settles in flight.
func (m *Memory) Settling(key string, e *Entry, meta Meta) {
	m.mu.Lock()
	m.entries[memKey(key, m.keyOf(e))] = unsavedEntry{plan: key, e: *e}
	if cur, ok := m.metas[key]; !ok || cur.Revision < meta.Revision {
		m.metas[key] = meta
	}
	m.settles.Add(1)
	m.mu.Unlock()
}

// WaitSettles waits until the settles queued so far (Settling) are done: Close, and a
// caller that needs a settle's outcome (a test of a failed settle).
func (m *Memory) WaitSettles() { m.settles.Wait() }

// Settled ends Settling with the settle's outcome: committed (err nil), the entry and the
// revision are forgotten (unless kept again since); failed, they stay and the background
// saver saves them (KeepApplied).
func (m *Memory) Settled(key string, e *Entry, meta Meta, err error) {
	defer m.settles.Done()
	if err != nil {
		m.StartSaver()
		return
	}
	k := memKey(key, m.keyOf(e))
	m.ForgetKept(Kept{k: unsavedEntry{plan: key, e: *e}})
	m.MetaSaved(key, meta)
}

// saveInterval is how often the background saver tries again.
const saveInterval = time.Second

// StartSaver starts the background saver unless it runs.
func (m *Memory) StartSaver() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.saving || m.closed {
		return
	}
	m.saving = true
	go m.saveLoop()
}

// saveLoop saves what the journal keeps in memory, once a second until all of it is
// saved (or the journal is closed, after one last try).
func (m *Memory) saveLoop() {
	failures := 0
	for {
		stopped := false
		select {
		case <-m.stop:
			stopped = true
		case <-time.After(saveInterval):
		}
		n, err := m.SaveUnsaved()
		switch {
		case err != nil:
			if failures == 0 || stopped {
				m.log.Error("journal: saving the settled writes kept in memory failed; trying again every second", "err", err)
			}
			failures++
		case n > 0:
			// Said every time, not only after a failure: it is how a user (and a test)
			// learns that what the log said was kept in memory is now on disk.
			m.log.Info("journal: settled writes kept in memory are saved", "count", n, "attempts", failures+1)
			failures = 0
		}
		m.mu.Lock()
		if stopped || (len(m.entries) == 0 && len(m.metas) == 0) {
			m.saving = false
			if m.closed {
				close(m.saved)
			}
			m.mu.Unlock()
			return
		}
		m.mu.Unlock()
	}
}

// SaveUnsaved saves the kept entries and revisions in one transaction and forgets those
// saved; n is how many it handled. An entry is written only over its own pending record,
// a revision only over an older one: what a later write saved itself is never
// overwritten.
func (m *Memory) SaveUnsaved() (n int, err error) {
	m.mu.Lock()
	entries := make(Kept, len(m.entries))
	for k, v := range m.entries {
		entries[k] = v
	}
	metas := make(map[string]Meta, len(m.metas))
	for k, v := range m.metas {
		metas[k] = v
	}
	m.mu.Unlock()
	if len(entries) == 0 && len(metas) == 0 {
		return 0, nil
	}
	err = m.commit.Do(func(tx Tx) error {
		if err := m.PutKept(tx, entries); err != nil {
			return err
		}
		for plan, meta := range metas {
			b := tx.Bucket(BucketName(plan))
			var cur Meta
			if err := ReadMeta(b, &cur); err != nil {
				return err
			}
			if cur.Revision < meta.Revision {
				if err := WriteMeta(b, meta); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	m.ForgetKept(entries)
	m.mu.Lock()
	for plan, meta := range metas {
		if cur, ok := m.metas[plan]; ok && cur.Revision <= meta.Revision {
			delete(m.metas, plan)
		}
	}
	m.mu.Unlock()
	return len(entries) + len(metas), nil
}

// PutKept writes applied entries kept in memory over their pending records in tx. An
// entry is written only over its own pending record: what was settled or replaced since
// is never overwritten.
func (m *Memory) PutKept(tx Tx, kept Kept) error {
	for _, u := range kept {
		b := tx.Bucket(BucketName(u.plan))
		cur, err := GetEntry(b, m.keyOf(&u.e))
		if err != nil {
			return err
		}
		if cur == nil || cur.State != StatePending || cur.Seq != u.e.Seq {
			continue
		}
		e := u.e
		if err := PutEntry(b, &e, m.local, m.limit); err != nil {
			return err
		}
	}
	return nil
}

// KeptOf returns the applied entries of plan kept in memory (nil when there are none,
// the usual case, which costs a look at an empty map under the lock).
func (m *Memory) KeptOf(plan string) Kept {
	m.mu.Lock()
	defer m.mu.Unlock()
	var kept Kept
	for k, u := range m.entries {
		if u.plan == plan {
			if kept == nil {
				kept = Kept{}
			}
			kept[k] = u
		}
	}
	return kept
}

// ForgetKept forgets kept entries once a committed transaction has saved them (those
// kept again since, under a later place, stay).
func (m *Memory) ForgetKept(saved Kept) {
	if len(saved) == 0 {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for k, u := range saved {
		if cur, ok := m.entries[k]; ok && cur.e.Seq == u.e.Seq {
			delete(m.entries, k)
		}
	}
}

// Close waits for the settles in flight (Settling), saves what the journal keeps in
// memory (one last try) and stops the background saver. The journal must not be used afterwards.
func (m *Memory) Close() error {
	m.WaitSettles()
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil
	}
	m.closed = true
	saving := m.saving
	close(m.stop)
	m.mu.Unlock()
	if saving {
		<-m.saved
	}
	m.mu.Lock()
	n := len(m.entries) + len(m.metas)
	m.mu.Unlock()
	if n > 0 {
		return fmt.Errorf("plan journal: %d settled write(s) or revision(s) could not be saved; the next start settles them from the plan files", n)
	}
	return nil
}

// Begin marks a write of the request as running until the returned func is called.
func (m *Memory) Begin(key string, ek []byte) func() {
	k := memKey(key, ek)
	m.mu.Lock()
	m.inflight[k]++
	m.mu.Unlock()
	return func() {
		m.mu.Lock()
		if m.inflight[k]--; m.inflight[k] <= 0 {
			delete(m.inflight, k)
		}
		m.mu.Unlock()
	}
}

// Running reports whether a write of the request runs now (Begin).
func (m *Memory) Running(key string, ek []byte) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.inflight[memKey(key, ek)] > 0
}

// Unsaved is the applied entry of the request kept in memory, not yet saved.
func (m *Memory) Unsaved(key string, ek []byte) (*Entry, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	u, ok := m.entries[memKey(key, ek)]
	if !ok {
		return nil, false
	}
	e := u.e
	return &e, true
}

// NewerMeta returns the revision kept in memory for the plan when it is newer than saved.
func (m *Memory) NewerMeta(key string, saved Meta) Meta {
	m.mu.Lock()
	defer m.mu.Unlock()
	if cur, ok := m.metas[key]; ok && cur.Revision > saved.Revision {
		return cur
	}
	return saved
}

// MetaSaved forgets a revision kept in memory once the database holds it or a newer one.
func (m *Memory) MetaSaved(key string, saved Meta) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if cur, ok := m.metas[key]; ok && cur.Revision <= saved.Revision {
		delete(m.metas, key)
	}
}

// Bump gives the plan's current content (checksum sum) the next revision after saved in
// memory, when the database cannot be written to record it. check, run under the
// memory's lock, confirms that the file still has that content (its error is returned).
func (m *Memory) Bump(key, sum string, saved Meta, check func() error) (uint64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := check(); err != nil {
		return 0, err
	}
	cur := saved
	if mc, ok := m.metas[key]; ok && mc.Revision > cur.Revision {
		cur = mc
	}
	if cur.Checksum == sum && cur.Revision > 0 {
		return cur.Revision, nil
	}
	next := Meta{Revision: cur.Revision + 1, Checksum: sum}
	m.metas[key] = next
	return next.Revision, nil
}

// GetEntry reads the entry at ek (nil when there is none).
func GetEntry(b Bucket, ek []byte) (*Entry, error) {
	raw := b.Get(ek)
	if raw == nil {
		return nil, nil
	}
	var e Entry
	if err := json.Unmarshal(raw, &e); err != nil {
		return nil, fmt.Errorf("journal entry %q: %w", ek, err)
	}
	return &e, nil
}
