package planfs

import (
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"talkd/internal/werkbaum"
)

// WriteAtomic replaces the plan's file with data so that a crash leaves the old or the
// new file: temp file in the same folder (mode, owner and group of the plan), fsync,
// rename, fsync of the folder.
//
// expect is the checksum the file had when the write read it. Right before the rename the
// file is hashed again under an exclusive lock on the plan's folder (lockFolder), which
// every talkd process writing into that folder takes for the check and the rename: if
// someone saved the file meanwhile (the engine may have worked for a while), or another
// talkd wrote it, nothing is renamed and the answer is ErrFileMoved, so an edit or
// another daemon's acknowledged write is never replaced by a text computed from the
// version before it. limit is the largest plan file read (the engine's input limit);
// lockTimeout bounds the wait for the folder lock.
func (fs *Folders) WriteAtomic(p Ref, data []byte, expect string, limit int64, lockTimeout time.Duration) (err error) {
	key := p.Key
	cur, err := Open(p, limit)
	if errors.Is(err, ErrSwapped) {
		return ErrFileMoved
	}
	if err != nil {
		return err
	}
	old := cur.fi
	cur.Close()
	if err := WritableError(key, old); err != nil {
		return err
	}
	f, tmp, err := p.CreateTemp()
	if err != nil {
		return fmt.Errorf("create temp file: %w", Unpath(err))
	}
	defer func() {
		if err != nil {
			p.RemoveTemp(tmp)
		}
	}()
	if _, err = f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("write temp file: %w", err)
	}
	if err = f.Chmod(old.Mode().Perm()); err != nil {
		f.Close()
		return fmt.Errorf("keep file mode: %w", err)
	}
	if cerr := keepOwner(f, old); cerr != nil && isRoot() {
		// Root can always keep them; failing here means something odd (a file system
		// without owners): refuse rather than hand the user's plan to root.
		f.Close()
		err = fmt.Errorf("keep the plan's owner and group: %w", cerr)
		return err
	}
	if err = f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("sync temp file: %w", err)
	}
	if err = f.Close(); err != nil {
		return fmt.Errorf("close temp file: %w", err)
	}

	folder, err := p.OpenFolder()
	if err != nil {
		return fmt.Errorf("open the plan's folder: %w", Unpath(err))
	}
	defer folder.Close()
	share, done := fs.use(filepath.Dir(p.Path), folder)
	defer done()
	unlock, err := share.lockFolder(folder, lockTimeout)
	if err != nil {
		return err
	}
	locked := true
	defer func() {
		if locked {
			unlock()
		}
	}()
	now, err := Open(p, limit)
	if errors.Is(err, ErrSwapped) {
		err = ErrFileMoved
		return err
	}
	if err != nil {
		return err
	}
	curData, err := now.ReadAll(key, limit)
	now.Close()
	if err != nil {
		return err
	}
	if werkbaum.Checksum(curData) != expect {
		err = ErrFileMoved
		return err
	}
	if err = WritableError(key, now.fi); err != nil {
		return err
	}
	if err = p.RenameTemp(tmp); err != nil {
		return fmt.Errorf("rename into place: %w", Unpath(err))
	}
	// The lock guards the check and the rename, not the folder's sync: other plans in this
	// folder (and other daemons) need not wait for it, and whoever syncs the folder makes
	// every rename done before durable, ours included; writes of this process that rename
	// meanwhile share the next sync (Folders).
	locked = false
	unlock()
	if serr := share.sync(folder); serr != nil {
		return fmt.Errorf("sync folder: %w", serr)
	}
	return nil
}
