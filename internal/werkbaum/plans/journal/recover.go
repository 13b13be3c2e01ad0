package journal

import (
	"encoding/json"
	"fmt"
	"log/slog"
)

// Participant takes part in the journal's settles: the journal calls the participants the
// store registered instead of their code, so it depends on none of them. The document
// store is one: a write's version record is saved in the transaction that settles the
// write.
type Participant interface {
	// Recovering prepares the start-up settle of plan key's pending entries; nil: the
	// participant has nothing to do for it.
	Recovering(key string) RecoverStep
}

// RecoverStep is a participant's part of one start-up settle transaction.
type RecoverStep interface {
	Begin()                                     // the transaction (re)starts
	Applied(tx Tx, e *Entry, text string) error // e was found applied; text is the file's
	Committed()                                 // the transaction committed
}

// Recovery is what Recover settles: a plan's pending entries against its file as read at
// start.
type Recovery struct {
	Plan     string
	Checksum string // of the plan's file now
	Text     string // the file's text, for the participants
	// Participants take part in the settle (the document store).
	Participants []Participant
	Local        string // the local client's name (EntryKey)
	Limit        int    // the journal's bound per plan (PutEntry)
	Log          *slog.Logger
}

// Recover settles the pending entries a crash left in r.Plan's bucket, in one
// transaction: a write happened if the file now has the checksum it would have produced
// (the entry is applied, the plan's revision is its, and the participants record what
// they keep of it); otherwise it did not, and the entry is removed so that the request id
// is unknown and a retry runs it.
func Recover(db Database, r Recovery) error {
	key, sum := r.Plan, r.Checksum
	// The participants prepare before the transaction (a read transaction inside bbolt's
	// write transaction can deadlock) and record what they keep of a write found applied
	// inside it, as its own settle would have.
	var steps []RecoverStep
	for _, pt := range r.Participants {
		if st := pt.Recovering(key); st != nil {
			steps = append(steps, st)
		}
	}
	err := db.Update(func(tx Tx) error {
		for _, st := range steps {
			st.Begin()
		}
		b := tx.Bucket(BucketName(key))
		var pending []*Entry
		err := EachEntry(b, func(_ []byte, e *Entry) error {
			if e.State == StatePending {
				pending = append(pending, e)
			}
			return nil
		})
		if err != nil {
			return err
		}
		for _, e := range pending {
			if e.NewChecksum == sum {
				e.State = StateApplied
				if err := PutEntry(b, e, r.Local, r.Limit); err != nil {
					return err
				}
				if err := WriteMeta(b, Meta{Revision: e.Revision, Checksum: sum}); err != nil {
					return err
				}
				for _, st := range steps {
					if err := st.Applied(tx, e, r.Text); err != nil {
						return err
					}
				}
				r.Log.Info("journal: write settled as applied after restart", "plan", key, "client", e.Author.Client, "request_id", e.RequestID, "revision", e.Revision)
				continue
			}
			if err := b.Delete(EntryKey(e.Author.Client, r.Local, e.RequestID)); err != nil {
				return err
			}
			r.Log.Info("journal: write settled as not applied after restart", "plan", key, "client", e.Author.Client, "request_id", e.RequestID)
		}
		return nil
	})
	if err == nil {
		for _, st := range steps {
			st.Committed()
		}
	}
	return err
}

// EachEntry calls fn for every journal entry of the bucket, of every client.
func EachEntry(b Bucket, fn func(k []byte, e *Entry) error) error {
	for _, prefix := range [][]byte{PrefixLocal, PrefixClient} {
		err := b.Scan(prefix, func(k, v []byte) error {
			var e Entry
			if err := json.Unmarshal(v, &e); err != nil {
				return fmt.Errorf("journal entry %q: %w", k, err)
			}
			return fn(k, &e)
		})
		if err != nil {
			return err
		}
	}
	return nil
}
