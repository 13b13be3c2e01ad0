package docstore

import (
	"encoding/json"
	"fmt"
	"time"

	"talkd/internal/werkbaum"
	"talkd/internal/werkbaum/plans/docs"
	"talkd/internal/werkbaum/plans/journal"
)

// Log is what the state database holds of one plan's document besides the texts: its
// title, when it was created, and its version records under today's retention rule.
type Log struct {
	Title   string
	Created time.Time
	Records []docs.Record // oldest first, at most docs.MaxRecords
}

// Load reads the plan's document log. A plan without one reads as an empty Log.
func (s *Store) Load(key string) (Log, error) {
	var l Log
	err := s.db.View(func(tx journal.Tx) error {
		b := tx.Bucket(docs.BucketName(key))
		if b == nil {
			return nil
		}
		if raw := b.Get(docs.MetaKey); raw != nil {
			var m docs.Meta
			if err := json.Unmarshal(raw, &m); err != nil {
				return fmt.Errorf("document meta: %w", err)
			}
			l.Title, l.Created = m.Title, m.CreatedAt
		}
		return b.Scan([]byte("v"), func(k, v []byte) error {
			var r docs.Record
			if err := json.Unmarshal(v, &r); err != nil {
				return fmt.Errorf("version record %x: %w", k, err)
			}
			l.Records = append(l.Records, r)
			return nil
		})
	})
	if err != nil {
		return Log{}, fmt.Errorf("plan %s: read the document's versions: %w", key, err)
	}
	l.Records = docs.KeptRecords(l.Records, docs.Retain(l.Records))
	return l, nil
}

// PutVersion records a version in tx: its record and text, the document meta (created on
// the first version, renamed when title is set), and drops the records and texts the
// bounds no longer keep, given old, the records before it. It returns rec completed with
// the title, size and checksum it was stored with. tx may run more than once; PutVersion
// changes nothing but tx.
func PutVersion(tx journal.Tx, key string, old []docs.Record, rec docs.Record, text string, title *string) (docs.Record, error) {
	b, err := tx.CreateBucket(docs.BucketName(key))
	if err != nil {
		return rec, err
	}
	var m docs.Meta
	if raw := b.Get(docs.MetaKey); raw != nil {
		if err := json.Unmarshal(raw, &m); err != nil {
			return rec, fmt.Errorf("document meta: %w", err)
		}
	}
	metaChanged := false
	if m.CreatedAt.IsZero() {
		m.CreatedAt, metaChanged = rec.At, true
	}
	if title != nil {
		m.Title, metaChanged = *title, true
	}
	if metaChanged {
		raw, err := json.Marshal(m)
		if err != nil {
			return rec, err
		}
		if err := b.Put(docs.MetaKey, raw); err != nil {
			return rec, err
		}
	}
	rec.Title = m.Title
	rec.Size = len(text)
	rec.Checksum = werkbaum.DocumentChecksum(text)
	raw, err := json.Marshal(rec)
	if err != nil {
		return rec, err
	}
	if err := b.Put(docs.VersionKey('v', rec.Version), raw); err != nil {
		return rec, err
	}
	if err := b.Put(docs.VersionKey('t', rec.Version), []byte(text)); err != nil {
		return rec, err
	}

	all := make([]docs.Record, 0, len(old)+1)
	all = append(all, old...)
	all = append(all, rec)
	before, after := docs.Retain(old), docs.Retain(all)
	kept := docs.KeptRecords(all, after)
	if len(kept) < len(all) {
		stays := make(map[uint64]bool, len(kept))
		for _, r := range kept {
			stays[r.Version] = true
		}
		for _, r := range all {
			if stays[r.Version] {
				continue
			}
			if err := b.Delete(docs.VersionKey('v', r.Version)); err != nil {
				return rec, err
			}
			if err := b.Delete(docs.VersionKey('t', r.Version)); err != nil {
				return rec, err
			}
		}
	}
	for v := range before.Texts {
		if !after.Texts[v] {
			if err := b.Delete(docs.VersionKey('t', v)); err != nil {
				return rec, err
			}
		}
	}
	return rec, nil
}

// Recorded returns the record of version v stored in tx, or nil.
func Recorded(tx journal.Tx, key string, v uint64) (*docs.Record, error) {
	b := tx.Bucket(docs.BucketName(key))
	if b == nil {
		return nil, nil
	}
	raw := b.Get(docs.VersionKey('v', v))
	if raw == nil {
		return nil, nil
	}
	var r docs.Record
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// HasVersion reports whether tx holds a record of version v.
func HasVersion(tx journal.Tx, key string, v uint64) bool {
	b := tx.Bucket(docs.BucketName(key))
	return b != nil && b.Get(docs.VersionKey('v', v)) != nil
}

// MarkMilestone marks the stored record of version v a milestone, marked by name
// (clientID the marking editor's, if any), and returns the record as stored.
func MarkMilestone(tx journal.Tx, key string, v uint64, name, clientID string) (docs.Record, error) {
	var rec docs.Record
	b := tx.Bucket(docs.BucketName(key))
	var raw []byte
	if b != nil {
		raw = b.Get(docs.VersionKey('v', v))
	}
	if raw == nil {
		return rec, fmt.Errorf("document of plan %q: version %d has no record; nothing was marked", key, v)
	}
	if err := json.Unmarshal(raw, &rec); err != nil {
		return rec, fmt.Errorf("version record %d: %w", v, err)
	}
	rec.Milestone, rec.MarkedBy, rec.MarkedByClientID = true, name, clientID
	out, err := json.Marshal(rec)
	if err != nil {
		return rec, err
	}
	return rec, b.Put(docs.VersionKey('v', v), out)
}
