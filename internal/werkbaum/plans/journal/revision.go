package journal

import (
	"errors"
	"fmt"
	"log/slog"
)

// ErrFileMoved says that the plan file no longer has the content a read hashed: a write
// (or an outside edit) replaced it in between. The read is simply done again. It is the
// journal's because giving revisions depends on it (Revisions.For passes it on as it is);
// planfs answers it for a write that finds the file moved, and plans re-exports it.
var ErrFileMoved = errors.New("the plan file changed while it was read")

// Revisions gives each content of a plan file its revision: the plan's Meta in the
// database, a newer one kept in Mem while the database cannot be written.
type Revisions struct {
	DB     Database
	Commit *GroupCommit
	Mem    *Memory
	Log    *slog.Logger
}

// Latest is the plan's latest revision and checksum: the saved one, or a newer one kept
// in memory.
func (r Revisions) Latest(key string) (Meta, error) {
	var meta Meta
	err := r.DB.View(func(tx Tx) error {
		return ReadMeta(tx.Bucket(BucketName(key)), &meta)
	})
	if err != nil {
		return Meta{}, err
	}
	return r.Mem.NewerMeta(key, meta), nil
}

// For returns the revision of the plan's content with checksum sum, giving content the
// daemon has not seen (an edit made outside) the next revision. A new revision is given
// only to what the file holds now: fileIs (nil, or an error wrapping ErrFileMoved when the
// file no longer has checksum sum) runs inside the journal's write transaction, which a
// write's settling also takes; otherwise a read that hashed the file just before a
// write's rename would, once the write settled, take the old text for an outside edit and
// spend revisions on it (ErrFileMoved instead). When the new revision cannot be saved
// (the state disk is full or read-only) it is kept in memory and saved later: a read
// must not fail because the state cannot be written.
func (r Revisions) For(key, sum string, fileIs func() error) (uint64, error) {
	meta, err := r.Latest(key)
	if err != nil {
		return 0, fmt.Errorf("plan %s: read revision: %w", key, err)
	}
	if meta.Checksum == sum && meta.Revision > 0 {
		return meta.Revision, nil
	}
	wrote := false // meta is saved now (else it may be one kept in memory only)
	err = r.Commit.Do(func(tx Tx) error {
		wrote = false
		b := tx.Bucket(BucketName(key))
		if err := ReadMeta(b, &meta); err != nil {
			return err
		}
		meta = r.Mem.NewerMeta(key, meta)
		if meta.Checksum != sum || meta.Revision == 0 {
			if err := fileIs(); err != nil {
				return err
			}
			meta, wrote = Meta{Revision: meta.Revision + 1, Checksum: sum}, true
			return WriteMeta(b, meta)
		}
		return nil
	})
	switch {
	case errors.Is(err, ErrFileMoved):
		return 0, err
	case err == nil:
		if wrote {
			r.Mem.MetaSaved(key, meta)
		}
		return meta.Revision, nil
	}
	var saved Meta
	merr := r.DB.View(func(tx Tx) error { return ReadMeta(tx.Bucket(BucketName(key)), &saved) })
	var rev uint64
	if merr == nil {
		rev, merr = r.Mem.Bump(key, sum, saved, fileIs)
	}
	if merr != nil {
		if errors.Is(merr, ErrFileMoved) {
			return 0, merr
		}
		return 0, fmt.Errorf("plan %s: record revision: %w", key, err)
	}
	r.Log.Warn("journal: the plan's new revision cannot be saved now; kept in memory and saved in the background", "plan", key, "revision", rev, "err", err)
	r.Mem.StartSaver()
	return rev, nil
}

// Settle says how SettleApplied settles an entry: the local client's name and the
// journal's bound, as PutEntry takes them.
type Settle struct {
	Local string
	Limit int
}

// SettleApplied settles e, a pending entry whose writer is gone (it failed, or its settle
// was lost), as applied: the caller found the plan file holding the text the write
// produced (sum, its checksum). Unless the entry was settled or replaced meanwhile, the
// applied entry is saved with the revision e was given, or, when the database cannot be
// written now, kept in memory and saved in the background. The file's content is not
// given e's revision when the journal knows it already or gave a later revision since:
// the file may hold that text by now, and a read gives it its revision with the file
// checked, which this settle cannot.
func (r Revisions) SettleApplied(key string, e *Entry, sum string, how Settle) *Entry {
	applied := *e
	applied.State = StateApplied
	var meta Meta
	settled := false // by this call, not by someone else meanwhile
	wrote := false   // meta is saved now (else it may be one kept in memory only)
	err := r.Commit.Do(func(tx Tx) error {
		settled, wrote = false, false
		b := tx.Bucket(BucketName(key))
		cur, err := GetEntry(b, EntryKey(e.Author.Client, how.Local, e.RequestID))
		if err != nil || cur == nil || cur.State != StatePending || cur.Seq != e.Seq {
			return err // settled or replaced meanwhile: nothing to do
		}
		settled = true
		if err := PutEntry(b, &applied, how.Local, how.Limit); err != nil {
			return err
		}
		if err := ReadMeta(b, &meta); err != nil {
			return err
		}
		if meta = r.Mem.NewerMeta(key, meta); meta.Checksum == sum || meta.Revision >= e.Revision {
			return nil
		}
		meta, wrote = Meta{Revision: e.Revision, Checksum: sum}, true
		return WriteMeta(b, meta)
	})
	if err != nil {
		r.Log.Error("journal: settling a write whose writer is gone failed; kept in memory and saved in the background", "plan", key, "request_id", e.RequestID, "err", err)
		r.Mem.KeepApplied(key, &applied, Meta{Revision: e.Revision, Checksum: sum})
	} else if settled {
		if wrote {
			r.Mem.MetaSaved(key, meta)
		}
		r.Log.Info("journal: pending write of a writer that is gone settled as applied", "plan", key, "client", e.Author.Client, "request_id", e.RequestID, "revision", e.Revision)
	}
	return &applied
}
