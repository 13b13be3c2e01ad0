package plans

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"go.etcd.io/bbolt"

	"talkd/internal/werkbaum"
)

// Journal layout, one bucket per plan ("plan:<key>"):
//
//	meta        → planMeta {revision, checksum}
//	r:<id>      → journalEntry (by request id)
//	o:<seq>     → request id (insertion order, for bounding the journal)
//	seq         → last seq
var (
	keyMeta = []byte("meta")
	keySeq  = []byte("seq")
)

func bucketName(key string) []byte { return []byte("plan:" + key) }
func reqKey(id string) []byte      { return append([]byte("r:"), id...) }

func orderKey(seq uint64) []byte {
	k := make([]byte, 10)
	copy(k, "o:")
	binary.BigEndian.PutUint64(k[2:], seq)
	return k
}

type planMeta struct {
	Revision uint64 `json:"revision"`
	Checksum string `json:"checksum"`
}

// Operation states reported by operation_get.
const (
	StateApplied  = "applied"
	StateRejected = "rejected"
	StateConflict = "conflict"
	StateUnknown  = "unknown"
	statePending  = "pending"
)

// journalEntry is one write request as the journal keeps it.
type journalEntry struct {
	RequestID   string          `json:"requestId"`
	ArgsHash    string          `json:"argsHash"`
	Tool        string          `json:"tool"`
	State       string          `json:"state"`
	Author      Author          `json:"author"`
	At          time.Time       `json:"at"`
	OldChecksum string          `json:"oldChecksum,omitempty"`
	NewChecksum string          `json:"newChecksum,omitempty"`
	Revision    uint64          `json:"revision,omitempty"`
	Result      json.RawMessage `json:"result,omitempty"`
	Error       string          `json:"error,omitempty"`
	// Seq is the entry's place in the order index; trimming that place removes the entry
	// only if it is still the same one (a request id that recovery forgot and that was sent
	// again has a later place). 0 in entries written before Seq existed.
	Seq uint64 `json:"seq,omitempty"`
}

// errFileMoved says that the plan file no longer has the content a read hashed: a write
// (or an outside edit) replaced it in between. The read is simply done again.
var errFileMoved = errors.New("the plan file changed while it was read")

// revisionFor returns the revision of the content with this checksum, giving content the
// daemon has not seen (an edit made outside) the next revision. A new revision is given
// only to what the file holds now, checked inside the journal's write transaction (which
// a write's settling also takes): otherwise a read that hashed the file just before a
// write's rename would, once the write settled, take the old text for an outside edit and
// spend revisions on it (errFileMoved instead).
func (s *Service) revisionFor(key, path, sum string) (uint64, error) {
	var meta planMeta
	err := s.db.View(func(tx *bbolt.Tx) error {
		return readMeta(tx.Bucket(bucketName(key)), &meta)
	})
	if err != nil {
		return 0, fmt.Errorf("plan %s: read revision: %w", key, err)
	}
	if meta.Checksum == sum && meta.Revision > 0 {
		return meta.Revision, nil
	}
	err = s.db.Update(func(tx *bbolt.Tx) error {
		b := tx.Bucket(bucketName(key))
		if err := readMeta(b, &meta); err != nil {
			return err
		}
		if meta.Checksum != sum || meta.Revision == 0 {
			data, err := os.ReadFile(path)
			if err != nil {
				return fmt.Errorf("read plan file: %w", err)
			}
			if werkbaum.Checksum(data) != sum {
				return errFileMoved
			}
			meta = planMeta{Revision: meta.Revision + 1, Checksum: sum}
			return writeMeta(b, meta)
		}
		return nil
	})
	if errors.Is(err, errFileMoved) {
		return 0, err
	}
	if err != nil {
		return 0, fmt.Errorf("plan %s: record revision: %w", key, err)
	}
	return meta.Revision, nil
}

func readMeta(b *bbolt.Bucket, m *planMeta) error {
	raw := b.Get(keyMeta)
	if raw == nil {
		*m = planMeta{}
		return nil
	}
	return json.Unmarshal(raw, m)
}

func writeMeta(b *bbolt.Bucket, m planMeta) error {
	raw, err := json.Marshal(m)
	if err != nil {
		return err
	}
	return b.Put(keyMeta, raw)
}

func getEntry(b *bbolt.Bucket, id string) (*journalEntry, error) {
	raw := b.Get(reqKey(id))
	if raw == nil {
		return nil, nil
	}
	var e journalEntry
	if err := json.Unmarshal(raw, &e); err != nil {
		return nil, fmt.Errorf("journal entry %q: %w", id, err)
	}
	return &e, nil
}

// putEntry stores e; a new request id is also appended to the order index and the
// journal is trimmed to the service's limit.
func (s *Service) putEntry(b *bbolt.Bucket, e *journalEntry) error {
	if b.Get(reqKey(e.RequestID)) != nil {
		raw, err := json.Marshal(e)
		if err != nil {
			return err
		}
		return b.Put(reqKey(e.RequestID), raw)
	}
	seq := uint64(0)
	if v := b.Get(keySeq); len(v) == 8 {
		seq = binary.BigEndian.Uint64(v)
	}
	seq++
	e.Seq = seq
	raw, err := json.Marshal(e)
	if err != nil {
		return err
	}
	if err := b.Put(reqKey(e.RequestID), raw); err != nil {
		return err
	}
	var sv [8]byte
	binary.BigEndian.PutUint64(sv[:], seq)
	if err := b.Put(keySeq, sv[:]); err != nil {
		return err
	}
	if err := b.Put(orderKey(seq), []byte(e.RequestID)); err != nil {
		return err
	}
	if seq > uint64(s.limit) {
		oldSeq := seq - uint64(s.limit)
		old := orderKey(oldSeq)
		if id := b.Get(old); id != nil {
			cur, err := getEntry(b, string(id))
			if err != nil {
				return err
			}
			if cur != nil && (cur.Seq == 0 || cur.Seq == oldSeq) {
				if err := b.Delete(reqKey(string(id))); err != nil {
					return err
				}
			}
			if err := b.Delete(old); err != nil {
				return err
			}
		}
	}
	return nil
}

// recover settles the pending entries a crash left: the write happened if the file now
// has the checksum it would have produced; otherwise it did not, and the entry is removed
// so that the request id is unknown and a retry runs it.
func (s *Service) recover(key string) error {
	p := s.plans[key]
	removeStaleTemps(p.Path)
	data, err := os.ReadFile(p.Path)
	if err != nil {
		// A missing plan file is reported on use; it must not keep the daemon from starting.
		s.log.Warn("plan file unreadable at start", "plan", key, "err", err)
		return nil
	}
	sum := werkbaum.Checksum(data)
	return s.db.Update(func(tx *bbolt.Tx) error {
		b := tx.Bucket(bucketName(key))
		var pending []*journalEntry
		c := b.Cursor()
		prefix := []byte("r:")
		for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
			var e journalEntry
			if err := json.Unmarshal(v, &e); err != nil {
				return fmt.Errorf("journal entry %q: %w", k, err)
			}
			if e.State == statePending {
				pending = append(pending, &e)
			}
		}
		for _, e := range pending {
			if e.NewChecksum == sum {
				e.State = StateApplied
				if err := s.putEntry(b, e); err != nil {
					return err
				}
				if err := writeMeta(b, planMeta{Revision: e.Revision, Checksum: sum}); err != nil {
					return err
				}
				s.log.Info("journal: write settled as applied after restart", "plan", key, "request_id", e.RequestID, "revision", e.Revision)
				continue
			}
			if err := b.Delete(reqKey(e.RequestID)); err != nil {
				return err
			}
			s.log.Info("journal: write settled as not applied after restart", "plan", key, "request_id", e.RequestID)
		}
		return nil
	})
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

// Operation reports what became of a write request.
func (s *Service) Operation(ctx context.Context, key, requestID string) (*OperationStatus, error) {
	if _, ok := s.plans[key]; !ok {
		return nil, fmt.Errorf("%w %q", ErrUnknownPlan, key)
	}
	var e *journalEntry
	err := s.db.View(func(tx *bbolt.Tx) error {
		var err error
		e, err = getEntry(tx.Bucket(bucketName(key)), requestID)
		return err
	})
	if err != nil {
		return nil, err
	}
	if e == nil {
		return &OperationStatus{RequestID: requestID, State: StateUnknown}, nil
	}
	st := &OperationStatus{RequestID: requestID, State: e.State, Tool: e.Tool, Author: &e.Author, At: &e.At,
		Revision: e.Revision, Result: e.Result, Error: e.Error}
	if e.State == statePending {
		st.State, st.InProgress = StateUnknown, true
	}
	return st, nil
}
