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
