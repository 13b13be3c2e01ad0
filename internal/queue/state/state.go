// Package state keeps talkd's durable state in one bbolt file under the state directory:
// the mute (saved synchronously, it must survive a crash), the announcement history
// (saved in batches by the queue) and, for the plans, revisions and the request journal
// (their own buckets, opened by the plan store through Bolt).
package state

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"go.etcd.io/bbolt"

	"talkd/internal/queue"
)

var (
	bucketMeta    = []byte("meta")
	bucketHistory = []byte("history")
	keyMute       = []byte("mute")
	keySeq        = []byte("seq")
)

// DB is the daemon's state database.
type DB struct {
	bolt *bbolt.DB
}

// Open opens (or creates) the database at path. A second daemon on the same state
// directory gets a clear error instead of waiting forever for the file lock.
func Open(path string) (*DB, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("create state directory: %w", err)
	}
	b, err := bbolt.Open(path, 0o600, &bbolt.Options{Timeout: 2 * time.Second})
	if err != nil {
		if errors.Is(err, bbolt.ErrTimeout) {
			return nil, fmt.Errorf("state database %s is locked: is another talkd running with the same state directory?", path)
		}
		return nil, fmt.Errorf("open state database %s: %w", path, err)
	}
	err = b.Update(func(tx *bbolt.Tx) error {
		for _, name := range [][]byte{bucketMeta, bucketHistory} {
			if _, err := tx.CreateBucketIfNotExists(name); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Close()
		return nil, fmt.Errorf("prepare state database %s: %w", path, err)
	}
	return &DB{bolt: b}, nil
}

// Bolt exposes the database to other stores of the daemon (the plan journal), which keep
// their own buckets.
func (d *DB) Bolt() *bbolt.DB { return d.bolt }

// Close closes the database file.
func (d *DB) Close() error { return d.bolt.Close() }

// LoadMute returns the saved mute state (not muted when none was saved).
func (d *DB) LoadMute() (queue.MuteState, error) {
	var m queue.MuteState
	err := d.bolt.View(func(tx *bbolt.Tx) error {
		raw := tx.Bucket(bucketMeta).Get(keyMute)
		if raw == nil {
			return nil
		}
		return json.Unmarshal(raw, &m)
	})
	return m, err
}

// SaveMute stores the mute state durably.
func (d *DB) SaveMute(m queue.MuteState) error {
	raw, err := json.Marshal(m)
	if err != nil {
		return err
	}
	return d.bolt.Update(func(tx *bbolt.Tx) error {
		return tx.Bucket(bucketMeta).Put(keyMute, raw)
	})
}

// LoadHistory returns up to limit most recent entries, oldest first.
func (d *DB) LoadHistory(limit int) ([]queue.Entry, error) {
	var out []queue.Entry
	err := d.bolt.View(func(tx *bbolt.Tx) error {
		c := tx.Bucket(bucketHistory).Cursor()
		for k, v := c.Last(); k != nil && len(out) < limit; k, v = c.Prev() {
			var e queue.Entry
			if err := json.Unmarshal(v, &e); err != nil {
				return fmt.Errorf("history entry %x: %w", k, err)
			}
			e.Seq = binary.BigEndian.Uint64(k)
			out = append(out, e)
		}
		return nil
	})
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out, err
}

// SaveHistory writes changed entries in one transaction, remembers the highest number
// used, and trims the history to the newest keep entries.
func (d *DB) SaveHistory(changed []queue.Entry, keep int) error {
	return d.bolt.Update(func(tx *bbolt.Tx) error {
		b := tx.Bucket(bucketHistory)
		meta := tx.Bucket(bucketMeta)
		maxSeq := seqOf(meta.Get(keySeq))
		for _, e := range changed {
			raw, err := json.Marshal(e)
			if err != nil {
				return err
			}
			if err := b.Put(seqKey(e.Seq), raw); err != nil {
				return err
			}
			maxSeq = max(maxSeq, e.Seq)
		}
		if err := meta.Put(keySeq, seqKey(maxSeq)); err != nil {
			return err
		}
		// Numbers are handed out contiguously, so everything at or below maxSeq-keep is
		// outside the window; deleting from the front costs only what is deleted.
		if maxSeq > uint64(keep) {
			limit := maxSeq - uint64(keep)
			var old [][]byte
			c := b.Cursor()
			for k, _ := c.First(); k != nil && seqOf(k) <= limit; k, _ = c.Next() {
				old = append(old, k)
			}
			for _, k := range old {
				if err := b.Delete(k); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

// NextSeq returns the highest announcement number ever saved, so numbering continues
// after a restart.
func (d *DB) NextSeq() (uint64, error) {
	var n uint64
	err := d.bolt.View(func(tx *bbolt.Tx) error {
		n = seqOf(tx.Bucket(bucketMeta).Get(keySeq))
		return nil
	})
	return n, err
}

func seqKey(n uint64) []byte {
	var k [8]byte
	binary.BigEndian.PutUint64(k[:], n)
	return k[:]
}

func seqOf(b []byte) uint64 {
	if len(b) != 8 {
		return 0
	}
	return binary.BigEndian.Uint64(b)
}
