package planfs

// The errors of resolving a plan and of its file, grouped by when they happen. Package
// plans re-exports the exported ones beside its other errors (plans/errors.go), each
// with its Kind.

import (
	"errors"
	"fmt"
	"io/fs"

	"talkd/internal/werkbaum/plans/journal"
)

// Resolving a plan.

// ErrUnknownPlan: no plan has this key (any more: a reload removed it).
var ErrUnknownPlan = errors.New("unknown plan")

// AddressError is a plan key naming a root that cannot stand for a plan file below it:
// a malformed path (.., an absolute part, a backslash), a symlink on the way, or no
// such file. It counts as an unknown plan (errors.Is ErrUnknownPlan) and says why.
type AddressError struct {
	Key    string
	Reason string
	// Missing: the file is not there (nor, maybe, its folder), so a document the plan
	// had reads as deleted (errors.Is(err, ErrPlanMissing)).
	Missing bool
}

func (e *AddressError) Error() string { return fmt.Sprintf("plan %q: %s", e.Key, e.Reason) }

// Unwrap makes errors.Is(err, ErrUnknownPlan) true.
func (e *AddressError) Unwrap() error { return ErrUnknownPlan }

// Is makes errors.Is(err, ErrPlanMissing) true for a missing file.
func (e *AddressError) Is(target error) bool { return e.Missing && target == ErrPlanMissing }

// Opening a plan file.

// ErrSwapped says that the path named another file between the check and the open,
// every time Open tried (a file being saved in a tight loop); like ErrFileMoved, the
// caller reads again or answers a conflict.
var ErrSwapped = errors.New("the plan file was replaced while it was opened")

// ErrPlanMissing marks a read of a plan whose file is not there (deleted, or moved away).
// Its document then reads as deleted (a DELETED version, 404 on GET, the history kept)
// until the file comes back.
var ErrPlanMissing = errors.New("plan file missing")

// missingError is Open's error for a missing file: it names the plan, not the path.
type missingError struct{ key string }

func (e *missingError) Error() string {
	return fmt.Sprintf("the file of plan %q is missing (moved or deleted?); the daemon's log names its path", e.key)
}

func (e *missingError) Is(target error) bool {
	return target == ErrPlanMissing || target == fs.ErrNotExist
}

// ErrFileRefused marks a plan file talkd refuses on purpose: a symlink, something other
// than a regular file (a FIFO, a directory, a device), or a file over the input limit.
var ErrFileRefused = errors.New("plan file refused")

// fileRefusedError names the plan and why its file is refused (never the path: the
// message reaches clients).
type fileRefusedError struct{ msg string }

func (e *fileRefusedError) Error() string        { return e.msg }
func (e *fileRefusedError) Is(target error) bool { return target == ErrFileRefused }

func symlinkError(key string) error {
	return &fileRefusedError{fmt.Sprintf("the file of plan %q was replaced by a symlink; talkd does not follow it (the daemon's log names the path; put the plan file itself there)", key)}
}

func notRegularError(key string) error {
	return &fileRefusedError{fmt.Sprintf("the file of plan %q is not a regular file any more", key)}
}

func tooLargeError(key string, size, limit int64) error {
	return &fileRefusedError{fmt.Sprintf("the file of plan %q has %d bytes, more than the notation engine's input limit of %d bytes; nothing was read", key, size, limit)}
}

// Writing a plan file.

// ErrReadOnly marks a write refused because the plan file has no write bit for the
// daemon's user.
var ErrReadOnly = errors.New("read-only plan file")

// WritableError refuses a plan file its owner made read-only: a rename would replace it
// anyway (renaming needs write access to the folder only), silently undoing the owner's
// intent.
func WritableError(key string, fi fs.FileInfo) error {
	if writableByDaemon(fi) {
		return nil
	}
	return &readOnlyError{key: key, mode: fi.Mode().Perm()}
}

type readOnlyError struct {
	key  string
	mode fs.FileMode
}

func (e *readOnlyError) Error() string {
	return fmt.Sprintf("the file of plan %q is read-only (mode %04o) for the daemon's user; talkd does not replace a plan file made read-only: make it writable (e.g. chmod u+w) to allow writes; nothing was changed", e.key, e.mode)
}

func (e *readOnlyError) Unwrap() error { return ErrReadOnly }

// ErrFileMoved says that the plan file no longer has the content a read hashed: a write
// (or an outside edit) replaced it in between. The read is simply done again. It is the
// journal's (journal.ErrFileMoved), which passes it on when it gives revisions.
var ErrFileMoved = journal.ErrFileMoved

// Unpath drops the path from an *fs.PathError, keeping the operation and the cause: the
// errors reach clients (in shared mode over the network), and the folders of the
// daemon's host are none of their business.
func Unpath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s: %w", pe.Op, pe.Err)
	}
	return err
}
