package planfs

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
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
// version before it. An editor that saves in place (truncate and write) takes no lock:
// one that opens the file between that check and the rename writes into the file the
// rename unlinks, so after the rename that file is looked at once more and, when it was
// written meanwhile, its text is put back (keepSaveInPlace) and the answer is
// ErrFileMoved too. One that saves by rename in that moment is seen by the exchange that
// puts the new file in place (putInPlace, Linux) and its file goes back, ErrFileMoved
// again. limit is the largest plan file read (the engine's input limit);
// lockTimeout bounds the wait for the folder lock.
//
// before, when not nil, is waited for once the temp file is synced and before the folder
// lock is taken: what must be durable before the rename (the write's pending journal
// record, committed meanwhile on another goroutine, so that its syncs and the temp file's
// overlap). Its error ends the write before the rename and is returned as it is.
func (fs *Folders) WriteAtomic(p Ref, data []byte, expect string, limit int64, lockTimeout time.Duration, before func() error) (err error) {
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
	tmp, err := writeTemp(p, data, old)
	if err != nil {
		return err
	}
	placing := false // from putInPlace on, the temp file is its business
	defer func() {
		if err != nil && !placing {
			p.RemoveTemp(tmp)
		}
	}()
	if before != nil {
		if err = before(); err != nil {
			return err
		}
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
	defer now.Close()
	curData, err := now.ReadAll(key, limit)
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
	checked, err := now.f.Stat()
	if err != nil {
		return fmt.Errorf("the file of plan %q cannot be read: %w", key, Unpath(err))
	}
	if !renameOverOpenFile {
		now.Close()
	}
	if fs.beforeRename != nil {
		fs.beforeRename()
	}
	placing = true
	moved := putInPlace(p, folder, tmp, checked)
	if moved != nil && !errors.Is(moved, ErrFileMoved) {
		err = moved
		return err
	}
	// Another program's text put back is an answer ErrFileMoved after the folder's sync
	// like a write's: both renames must be durable.
	if moved == nil && renameOverOpenFile {
		moved = keepSaveInPlace(p, now, checked)
	}
	if moved != nil && !errors.Is(moved, ErrFileMoved) {
		err = moved
		return err
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
	return moved
}

// putInPlace puts the temp file tmp in the place of the plan's file, which the write
// checked (checked: its state then, under the folder lock). Where the system can
// (exchangeTemp), the two are swapped in one step and the file swapped out is compared
// with the one checked: another file means a program that takes no folder lock (an
// editor's save by rename, a git checkout) replaced the plan after the check, so that
// file goes back in place (a rename over the write's text) and the answer is
// ErrFileMoved, as for a deletion after the check: the save is later than the text the
// write was computed from. Elsewhere it renames, and such a save is replaced
// (docs/RELIABILITY.md). tmp is gone when it returns, except when putting the other file
// back failed: then tmp holds that file, and the error says so.
func putInPlace(p Ref, folder *os.File, tmp string, checked fs.FileInfo) error {
	exchanged, err := exchangeTemp(folder, p, tmp)
	if !exchanged {
		if err := p.RenameTemp(tmp); err != nil {
			p.RemoveTemp(tmp)
			return fmt.Errorf("rename into place: %w", Unpath(err))
		}
		return nil
	}
	if err != nil {
		p.RemoveTemp(tmp)
		if errors.Is(err, fs.ErrNotExist) {
			return ErrFileMoved // deleted after the check; the deletion stands
		}
		return fmt.Errorf("exchange into place: %w", Unpath(err))
	}
	out, err := p.lstatTemp(tmp)
	if err == nil && os.SameFile(out, checked) {
		p.RemoveTemp(tmp) // the plan's old file, as a rename would have unlinked it
		return nil
	}
	if err := p.RenameTemp(tmp); err != nil {
		return fmt.Errorf("put back the plan %q saved by another program during the write (its text is kept in the temp file %s beside the plan): %w",
			p.Key, filepath.Base(tmp), Unpath(err))
	}
	return ErrFileMoved
}

// writeTemp writes data into a new temp file beside the plan, with the mode, owner and
// group of old (the plan's file), synced; the name is what RenameTemp takes. When it
// fails, the temp file is gone.
func writeTemp(p Ref, data []byte, old fs.FileInfo) (string, error) {
	f, tmp, err := p.CreateTemp()
	if err != nil {
		return "", fmt.Errorf("create temp file: %w", Unpath(err))
	}
	if err := fillTemp(f, data, old); err != nil {
		f.Close()
		p.RemoveTemp(tmp)
		return "", err
	}
	if err := f.Close(); err != nil {
		p.RemoveTemp(tmp)
		return "", fmt.Errorf("close temp file: %w", err)
	}
	return tmp, nil
}

// fillTemp writes data into the temp file f, gives it old's mode, owner and group, and
// syncs it.
func fillTemp(f *os.File, data []byte, old fs.FileInfo) error {
	if _, err := f.Write(data); err != nil {
		return fmt.Errorf("write temp file: %w", err)
	}
	if err := f.Chmod(old.Mode().Perm()); err != nil {
		return fmt.Errorf("keep file mode: %w", err)
	}
	if err := keepOwner(f, old); err != nil && isRoot() {
		// Root can always keep them; failing here means something odd (a file system
		// without owners): refuse rather than hand the user's plan to root.
		return fmt.Errorf("keep the plan's owner and group: %w", err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("sync temp file: %w", err)
	}
	return nil
}

// savedInPlaceSettle bounds the wait for an editor still writing the file it saves in
// place: its text is put back once the file's size and mtime stayed the same for one
// step, or after the last step.
const (
	savedInPlaceStep  = 20 * time.Millisecond
	savedInPlaceSteps = 50
)

// keepSaveInPlace looks at the file the rename replaced (old, open since the check, with
// checked its state then): if it was written after the check, an editor saved in place in
// that moment, and its text went into the file the rename unlinked. That text is put back
// over the write's (a second atomic rename, still under the folder lock) and the answer is
// ErrFileMoved: the editor's save was later than the text the write was computed from.
func keepSaveInPlace(p Ref, old *File, checked fs.FileInfo) error {
	fi, err := old.f.Stat()
	if err != nil || sameState(fi, checked) {
		return nil // unchanged (a file the rename unlinked cannot be opened by anyone else)
	}
	for range savedInPlaceSteps {
		time.Sleep(savedInPlaceStep)
		next, err := old.f.Stat()
		if err != nil || sameState(next, fi) {
			break
		}
		fi = next
	}
	// All of it, whatever its size: it is the user's text, not a read for the engine.
	saved, err := io.ReadAll(io.NewSectionReader(old.f, 0, math.MaxInt64))
	if err != nil {
		return fmt.Errorf("read back the plan %q saved in place during the write: %w", p.Key, Unpath(err))
	}
	tmp, err := writeTemp(p, saved, fi)
	if err != nil {
		return fmt.Errorf("put back the plan %q saved in place during the write: %w", p.Key, err)
	}
	if err := p.RenameTemp(tmp); err != nil {
		p.RemoveTemp(tmp)
		return fmt.Errorf("put back the plan %q saved in place during the write: %w", p.Key, Unpath(err))
	}
	return ErrFileMoved
}

// sameState reports whether a and b, two looks at one file, see the same size and mtime.
func sameState(a, b fs.FileInfo) bool {
	return a.Size() == b.Size() && a.ModTime().Equal(b.ModTime())
}
