package journal

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
)

// Layout of the journal in the state database, one bucket per plan ("plan:<key>"):
//
//	meta         → Meta {revision, checksum}
//	r:<id>       → the journal entry of the local client (local mode), by request id
//	c:<n><client><id> → the journal entry of another client: n is the length of the
//	               client id (uvarint), so that no two (client, id) pairs share a key
//	o:<seq>      → the entry key (insertion order, for bounding the journal)
//	seq          → last seq
//	version      → layout version (2: entries keyed by client; version 1 kept every
//	               client's entries under r:<id> and the bare id in o:<seq>)
//
// The entries are Entry values as JSON (entry.go).
var (
	KeyMeta    = []byte("meta")
	KeySeq     = []byte("seq")
	KeyVersion = []byte("version")

	PrefixLocal  = []byte("r:")
	PrefixClient = []byte("c:")
	PrefixOrder  = []byte("o:")
)

// Version is the layout version Migrate brings a bucket to.
const Version = 2

// BucketName is the journal bucket of the plan key.
func BucketName(key string) []byte { return []byte("plan:" + key) }

// EntryKey is where the journal keeps a client's request: request ids are the client's
// own, so the same id from two clients names two requests. The local client (no client,
// or local, the name local mode gives it) keeps the key of layout version 1, so a
// local-mode journal needs no migration.
func EntryKey(client, local, id string) []byte {
	if client == "" || client == local {
		return append(bytes.Clone(PrefixLocal), id...)
	}
	k := binary.AppendUvarint(bytes.Clone(PrefixClient), uint64(len(client)))
	k = append(k, client...)
	return append(k, id...)
}

// OrderKey is the order index's key of seq.
func OrderKey(seq uint64) []byte {
	k := make([]byte, 10)
	copy(k, PrefixOrder)
	binary.BigEndian.PutUint64(k[2:], seq)
	return k
}

// Meta is a plan's revision and the checksum of the file it names.
type Meta struct {
	Revision uint64 `json:"revision"`
	Checksum string `json:"checksum"`
}

// ReadMeta reads the plan's Meta from its bucket (zero when none is kept yet).
func ReadMeta(b Bucket, m *Meta) error {
	raw := b.Get(KeyMeta)
	if raw == nil {
		*m = Meta{}
		return nil
	}
	return json.Unmarshal(raw, m)
}

// WriteMeta writes the plan's Meta into its bucket.
func WriteMeta(b Bucket, m Meta) error {
	raw, err := json.Marshal(m)
	if err != nil {
		return err
	}
	return b.Put(KeyMeta, raw)
}

// PutEntry stores the journal entry e at its key (EntryKey, the local client's name
// being local). An entry already there is replaced in its place: e's Seq if it knows
// it, else the old entry's. A new key gets the next place in the order index (e.Seq is
// set to it), and the journal is bounded to limit entries by dropping the one limit
// places back (if it is still the entry of that place).
func PutEntry(b Bucket, e *Entry, local string, limit int) error {
	ek := EntryKey(e.Author.Client, local, e.RequestID)
	seq := e.Seq
	encode := func(seq uint64) ([]byte, error) {
		e.Seq = seq
		return json.Marshal(e)
	}
	if old := b.Get(ek); old != nil {
		if seq == 0 {
			var prev Entry
			if json.Unmarshal(old, &prev) == nil {
				seq = prev.Seq
			}
		}
		raw, err := encode(seq)
		if err != nil {
			return err
		}
		return b.Put(ek, raw)
	}
	seq = 0
	if v := b.Get(KeySeq); len(v) == 8 {
		seq = binary.BigEndian.Uint64(v)
	}
	seq++
	raw, err := encode(seq)
	if err != nil {
		return err
	}
	if err := b.Put(ek, raw); err != nil {
		return err
	}
	var sv [8]byte
	binary.BigEndian.PutUint64(sv[:], seq)
	if err := b.Put(KeySeq, sv[:]); err != nil {
		return err
	}
	if err := b.Put(OrderKey(seq), ek); err != nil {
		return err
	}
	if seq > uint64(limit) {
		oldSeq := seq - uint64(limit)
		old := OrderKey(oldSeq)
		if v := b.Get(old); v != nil {
			oldKey := bytes.Clone(v)
			if raw := b.Get(oldKey); raw != nil {
				var cur Entry
				if err := json.Unmarshal(raw, &cur); err != nil {
					return fmt.Errorf("journal entry %q: %w", oldKey, err)
				}
				if cur.Seq == 0 || cur.Seq == oldSeq {
					if err := b.Delete(oldKey); err != nil {
						return err
					}
				}
			}
			if err := b.Delete(old); err != nil {
				return err
			}
		}
	}
	return nil
}

// Migrate brings a bucket of layout version 1 to version 2: entries of clients other
// than the local one (named local) move to their client's key, and the order index names
// entry keys instead of bare request ids. A new bucket is simply marked.
func Migrate(b Bucket, local string) error {
	if v := b.Get(KeyVersion); len(v) == 1 && v[0] >= Version {
		return nil
	}
	keyOf := func(raw []byte) ([]byte, error) {
		var e Entry
		if err := json.Unmarshal(raw, &e); err != nil {
			return nil, err
		}
		return EntryKey(e.Author.Client, local, e.RequestID), nil
	}
	type kv struct{ k, v []byte }
	var moves []kv
	err := b.Scan(PrefixLocal, func(k, v []byte) error {
		nk, err := keyOf(v)
		if err != nil {
			return fmt.Errorf("journal entry %q: %w", k, err)
		}
		if !bytes.Equal(nk, k) {
			moves = append(moves, kv{bytes.Clone(k), bytes.Clone(v)})
		}
		return nil
	})
	if err != nil {
		return err
	}
	moved := map[string][]byte{}
	for _, m := range moves {
		nk, err := keyOf(m.v)
		if err != nil {
			return err
		}
		if err := b.Put(nk, m.v); err != nil {
			return err
		}
		if err := b.Delete(m.k); err != nil {
			return err
		}
		moved[string(m.k)] = nk
	}
	var orders []kv
	err = b.Scan(PrefixOrder, func(k, v []byte) error {
		orders = append(orders, kv{bytes.Clone(k), bytes.Clone(v)})
		return nil
	})
	if err != nil {
		return err
	}
	for _, o := range orders {
		ek := append(bytes.Clone(PrefixLocal), o.v...)
		if nk, ok := moved[string(ek)]; ok {
			ek = nk
		}
		if err := b.Put(o.k, ek); err != nil {
			return err
		}
	}
	return b.Put(KeyVersion, []byte{Version})
}
