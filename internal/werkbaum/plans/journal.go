package plans

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"talkd/internal/config"
	"talkd/internal/werkbaum"
	"talkd/internal/werkbaum/plans/docstore"
	"talkd/internal/werkbaum/plans/journal"
	"talkd/internal/werkbaum/plans/planfs"
)

// The journal's layout (buckets, keys, the plan's Meta, migration) is package journal's
// (journal/layout.go); the entries are the store's JSON below.

// entryKey is where the journal keeps a client's request (journal.EntryKey), the local
// client being config.LocalClientID.
func entryKey(client, id string) []byte {
	return journal.EntryKey(client, config.LocalClientID, id)
}

// keyOf is the entry key of e.
func keyOf(e *journalEntry) []byte { return entryKey(e.Author.Client, e.RequestID) }

// Operation states reported by operation_get (journal.Entry's State).
const (
	StateApplied  = journal.StateApplied
	StateRejected = journal.StateRejected
	StateConflict = journal.StateConflict
	StateUnknown  = journal.StateUnknown
	statePending  = journal.StatePending
)

// journalEntry is one write request as the journal keeps it (package journal).
type journalEntry = journal.Entry

// journalState is the plan store's durable record: the database, the group commit every
// change goes through (package journal), and what is kept in memory until it can be saved.
type journalState struct {
	db     Database
	commit *journal.GroupCommit
	mem    *journal.Memory
}

// The journal's database layer lives in package plans/journal; the store's API names it
// as before.
type (
	// Database runs the transactions of the revisions and the request journal.
	Database = journal.Database
	// Tx is one transaction of a Database.
	Tx = journal.Tx
	// Bucket is a set of keys and values in a transaction.
	Bucket = journal.Bucket
	// BoltRunner is what Bolt needs of a bbolt database.
	BoltRunner = journal.BoltRunner
)

// Bolt adapts a bbolt database (the daemon's state database) to the store's Database.
func Bolt(db BoltRunner) Database { return journal.Bolt(db) }

// openJournal prepares the plans' buckets (migrating older layouts) and settles the
// entries a crash left pending.
func (s *Service) openJournal(db Database, set *planfs.Set) error {
	if db == nil {
		return errors.New("plan journal: no database")
	}
	commit := journal.NewGroupCommit(db)
	s.journalState = journalState{db: db, commit: commit, mem: journal.NewMemory(commit, s.log, config.LocalClientID, s.limit)}
	s.docs = docstore.New(db, commit, s.log)
	s.participants = []journal.Participant{s.docs.Participant(s.settledVersion)}
	if err := s.createBuckets(set.Keys()); err != nil {
		return err
	}
	for _, k := range set.Keys() {
		p, _ := set.Plan(k)
		if err := s.recover(planfs.ConfiguredRef(p)); err != nil {
			return fmt.Errorf("plan %s: recover journal: %w", k, err)
		}
		s.ready.Store(k, struct{}{})
	}
	return nil
}

// revisions gives the contents of the plans' files their revisions (journal.Revisions).
func (s *Service) revisions() journal.Revisions {
	return journal.Revisions{DB: s.db, Commit: s.commit, Mem: s.mem, Log: s.log}
}

// revisionFor returns the revision of the plan's content with this checksum
// (journal.Revisions.For), a new one given only when the file still has it (fileIs,
// checked inside the journal's write transaction; errFileMoved otherwise).
func (s *Service) revisionFor(p planfs.Ref, sum string) (uint64, error) {
	return s.revisions().For(p.Key, sum, func() error { return fileIs(p, sum) })
}

// fileIs reports errFileMoved unless the plan's file has the checksum sum.
func fileIs(p planfs.Ref, sum string) error {
	data, err := p.ReadFile()
	if err != nil {
		return fmt.Errorf("read plan file: %w", err)
	}
	if werkbaum.Checksum(data) != sum {
		return errFileMoved
	}
	return nil
}

// latestMeta is the plan's latest revision and checksum: the saved one, or a newer one
// kept in memory (journal.Revisions.Latest).
func (s *Service) latestMeta(key string) (journal.Meta, error) {
	return s.revisions().Latest(key)
}

// entry returns the journal's entry of a request: an applied write not yet saved first,
// else what the database holds (nil when it holds nothing).
func (s *Service) entry(key string, ek []byte) (*journalEntry, error) {
	if e, ok := s.mem.Unsaved(key, ek); ok {
		return e, nil
	}
	var e *journalEntry
	err := s.db.View(func(tx Tx) error {
		var err error
		e, err = journal.GetEntry(tx.Bucket(journal.BucketName(key)), ek)
		return err
	})
	return e, err
}

// putEntry stores e; a new request is also appended to the order index and the journal
// is trimmed to the service's limit. An entry that replaces one keeps its place.
func (s *Service) putEntry(b Bucket, e *journalEntry) error {
	return journal.PutEntry(b, e, config.LocalClientID, s.limit)
}

// recover settles the pending entries a crash left (journal.Recover): the write happened
// if the file now has the checksum it would have produced; otherwise it did not, and the
// entry is removed so that the request id is unknown and a retry runs it.
func (s *Service) recover(p planfs.Ref) error {
	key := p.Key
	if p.Remote() {
		return nil // no file to judge by: settle repeats the PATCH on the next retry or operation_get
	}
	p.RemoveStaleTemps()
	data, err := p.ReadFile()
	if err != nil {
		// A missing plan file is reported on use; it must not keep the daemon from starting.
		s.log.Warn("plan file unreadable at start", "plan", key, "err", err)
		return nil
	}
	return journal.Recover(s.db, journal.Recovery{Plan: key, Checksum: werkbaum.Checksum(data), Text: string(data),
		Participants: s.participants, Local: config.LocalClientID, Limit: s.limit, Log: s.log})
}

// settleByFile settles a pending entry whose writer is gone (it failed, or its settle
// was lost) by the checksum rule of recover: applied if the file has the text the write
// produced, else not applied (nil). The applied settle is saved, or kept in memory and
// saved in the background when the database cannot be written now.
func (s *Service) settleByFile(p planfs.Ref, e *journalEntry) (*journalEntry, error) {
	_, sum, err := s.texts.Load(p, s.maxBytes)
	if err != nil {
		return nil, err
	}
	if sum != e.NewChecksum {
		return nil, nil
	}
	return s.revisions().SettleApplied(p.Key, e, sum, journal.Settle{Local: config.LocalClientID, Limit: s.limit}), nil
}

// OperationStatus is the answer of operation_get.
type OperationStatus struct {
	RequestID string          `json:"request_id"`
	State     string          `json:"state"`
	Tool      string          `json:"tool,omitempty"`
	Author    *Author         `json:"author,omitempty"`
	At        *time.Time      `json:"at,omitempty"`
	Revision  uint64          `json:"revision,omitempty"`
	Result    json.RawMessage `json:"result,omitempty"`
	Error     string          `json:"error,omitempty"`
	// InProgress is set when the write is running right now (state unknown until it settles).
	InProgress bool `json:"inProgress,omitempty"`
}

// Operation reports what became of a write request of client (request ids are each
// client's own; "" or config.LocalClientID is the local client).
func (s *Service) Operation(ctx context.Context, key, client, requestID string) (*OperationStatus, error) {
	p, err := s.resolve(key)
	if err != nil {
		return nil, err
	}
	defer p.Release()
	ek := entryKey(client, requestID)
	e, err := s.entry(key, ek)
	if err != nil {
		return nil, fmt.Errorf("read journal: %w", err)
	}
	if e != nil && e.State == statePending {
		if s.mem.Running(key, ek) {
			return &OperationStatus{RequestID: requestID, State: StateUnknown, Tool: e.Tool, Author: &e.Author, At: &e.At, InProgress: true}, nil
		}
		// No writer runs now, but the entry was read before that was asked: its writer may
		// have settled it and ended in between (a write marks itself running before its
		// pending record and until it is settled), and the file may have moved on since.
		// Read it again; only an entry still pending belongs to a writer that is gone.
		if e, err = s.entry(key, ek); err != nil {
			return nil, fmt.Errorf("read journal: %w", err)
		}
		if e != nil && e.State == statePending {
			// Its writer is gone without settling it: the file says what happened.
			if e, err = s.targetOf(p).settle(ctx, e); err != nil {
				return nil, err
			}
		}
	}
	if e == nil {
		return &OperationStatus{RequestID: requestID, State: StateUnknown}, nil
	}
	return &OperationStatus{RequestID: requestID, State: e.State, Tool: e.Tool, Author: &e.Author, At: &e.At,
		Revision: e.Revision, Result: e.Result, Error: e.Error}, nil
}

// Close saves what the journal keeps in memory (one last try) and stops the background
// saver (journal.Memory.Close), after the follower. The service must not be used
// afterwards.
func (s *Service) Close() error {
	s.stopFollower()
	s.afterWrites.close()
	return s.mem.Close()
}
