// Package docstore is the live documents' store: in the state database the document ids
// and each plan's version log, in the layout of package docs
// (docs/ids.go, docs/versions.go). Its writes go through the journal's group commit, so an
// id is created in the same commits as the plans' writes.
//
// It imports plans/docs and plans/journal, never package plans (the façade that serves
// documents over it); plans/docs itself stays light because config and cmd/talk import it.
// In memory it keeps each plan's document (Doc: its version records, title, the feed's
// wake-ups and shared diffs, what a writer in the plan's lane is writing) under one mutex
// that the feed, the history and the titles share, and records the versions a read finds
// (Store.Note) and a crash left pending (Store.Participant, the journal's participant).
// Which version record a write gets and the feed's and history's answers are package
// plans' (documents*.go).
package docstore

import (
	"fmt"
	"log/slog"
	"sync"

	"talkd/internal/werkbaum/plans/docs"
	"talkd/internal/werkbaum/plans/journal"
)

// Store reads and writes the documents' part of the state database. Its ids are kept in
// memory once read or created (an id never changes), under their own mutex.
type Store struct {
	db     journal.Database
	commit *journal.GroupCommit
	log    *slog.Logger

	idMu sync.Mutex
	ids  map[string]string // plan key → document id
	keys map[string]string // document id → plan key

	// mu guards every Doc: the feed, the history and the titles share it.
	mu   sync.Mutex
	docs map[string]*Doc
}

// New returns the store over db; its writes run through commit, the journal's group
// commit over the same database.
func New(db journal.Database, commit *journal.GroupCommit, log *slog.Logger) *Store {
	return &Store{db: db, commit: commit, log: log, ids: map[string]string{}, keys: map[string]string{}, docs: map[string]*Doc{}}
}

// HasID reports whether this process has seen the plan's document id.
func (s *Store) HasID(key string) bool {
	s.idMu.Lock()
	defer s.idMu.Unlock()
	_, ok := s.ids[key]
	return ok
}

// ID returns the plan's document id, creating it (docs.NewUUID) on first use.
func (s *Store) ID(key string) (string, error) {
	s.idMu.Lock()
	id, ok := s.ids[key]
	s.idMu.Unlock()
	if ok {
		return id, nil
	}
	err := s.db.View(func(tx journal.Tx) error {
		if b := tx.Bucket(docs.IndexBucket); b != nil {
			id = string(b.Get([]byte("k:" + key)))
		}
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("plan %s: read document id: %w", key, err)
	}
	if id == "" {
		fresh := docs.NewUUID()
		err = s.commit.Do(func(tx journal.Tx) error {
			b, err := tx.CreateBucket(docs.IndexBucket)
			if err != nil {
				return err
			}
			if cur := b.Get([]byte("k:" + key)); cur != nil {
				id = string(cur) // created meanwhile
				return nil
			}
			id = fresh
			if err := b.Put([]byte("k:"+key), []byte(id)); err != nil {
				return err
			}
			return b.Put([]byte("i:"+id), []byte(key))
		})
		if err != nil {
			return "", fmt.Errorf("plan %s: create document id: %w", key, err)
		}
		if id == fresh {
			s.log.Info("document id created", "plan", key, "document", id)
		}
	}
	s.remember(key, id)
	return id, nil
}

// Key returns the plan key that has the document id (lower case), if any. A failed read
// is logged and answers no key.
func (s *Store) Key(id string) (string, bool) {
	s.idMu.Lock()
	key, ok := s.keys[id]
	s.idMu.Unlock()
	if ok {
		return key, true
	}
	err := s.db.View(func(tx journal.Tx) error {
		if b := tx.Bucket(docs.IndexBucket); b != nil {
			key = string(b.Get([]byte("i:" + id)))
		}
		return nil
	})
	if err != nil {
		s.log.Warn("document id lookup failed", "document", id, "err", err)
		return "", false
	}
	if key == "" {
		return "", false
	}
	s.remember(key, id)
	return key, true
}

func (s *Store) remember(key, id string) {
	s.idMu.Lock()
	s.ids[key], s.keys[id] = id, key
	s.idMu.Unlock()
}

// Text returns the normalised text of a version, if the store still keeps it.
func (s *Store) Text(key string, v uint64) (string, bool, error) {
	var text string
	var ok bool
	err := s.db.View(func(tx journal.Tx) error {
		if b := tx.Bucket(docs.BucketName(key)); b != nil {
			if raw := b.Get(docs.VersionKey('t', v)); raw != nil {
				text, ok = string(raw), true
			}
		}
		return nil
	})
	if err != nil {
		return "", false, fmt.Errorf("plan %s: read version %d: %w", key, v, err)
	}
	return text, ok, nil
}

// Texts returns the texts of recs in one transaction, and whether each is kept (a state
// file of an older talkd may lack a text the rule keeps today).
func (s *Store) Texts(key string, recs []docs.Record) ([]string, []bool, error) {
	out, ok := make([]string, len(recs)), make([]bool, len(recs))
	err := s.db.View(func(tx journal.Tx) error {
		b := tx.Bucket(docs.BucketName(key))
		if b == nil {
			return nil
		}
		for i, r := range recs {
			raw := b.Get(docs.VersionKey('t', r.Version))
			out[i], ok[i] = string(raw), raw != nil
		}
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("plan %s: read versions: %w", key, err)
	}
	return out, ok, nil
}
