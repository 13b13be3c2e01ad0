package plans

// Every error of the plan store, grouped by when it happens (as bbolt keeps its errors):
// resolving a plan or a document, opening its file, checking a write, storing it, and
// talking to a document server. Each has a Kind (KindOf), which internal/api renders once
// for both doors: the same kind is the same code and reason as an MCP tool error and as a
// problem on /api/v1/documents.

import (
	"context"
	"errors"
	"fmt"

	"talkd/internal/werkbaum"
	"talkd/internal/werkbaum/plans/planfs"
	"talkd/internal/werkbaum/plans/remote"
)

// Kind is what a plan store error means for the caller, independent of the door.
type Kind string

// The kinds; the names are the codes both doors answer.
const (
	KindInternal       Kind = "failed"           // a fault of the store (500 on the document doors)
	KindUnknownPlan    Kind = "not_found"        // no such plan or document
	KindDeleted        Kind = "deleted"          // the plan's file is gone (its document reads as deleted)
	KindFileRefused    Kind = "file_refused"     // a symlink, FIFO, directory or file over the limit where the plan was
	KindReadOnly       Kind = "read_only"        // the file has no write bit for the daemon's user
	KindTooLarge       Kind = "too_large"        // the new text would pass the engine's input limit
	KindTimeout        Kind = "timeout"          // the notation engine or the store ran out of time
	KindConflict       Kind = "conflict"         // a stale base, or a patch overlapping changes since its base
	KindRefused        Kind = "refused"          // a guard refused the write
	KindRejected       Kind = "rejected"         // a request id refused before
	KindRequestReused  Kind = "request_reused"   // a request id used with other arguments
	KindStaleVersion   Kind = "stale_version"    // a title change on a version that is not current
	KindUnapplicable   Kind = "unapplicable"     // a patch that does not apply (checksum, range, base)
	KindRemoteFailed   Kind = "remote_failed"    // a document server that could not be used
	KindRemoteDocument Kind = "remote_document"  // a document request for a plan kept on another server
	KindNoSuchVersion  Kind = "no_such_version"  // a restore of a version the document never had
	KindVersionGone    Kind = "version_not_kept" // a restore of a version whose text is no longer kept
)

// KindOf classifies err; what is not a refusal of the store is KindInternal. The order
// matters where one error is two things: a missing file below a root is an unknown
// address and a deleted document (deleted wins), a too-large file is a refused file.
func KindOf(err error) Kind {
	var (
		conflict  *ConflictError
		patch     *PatchConflict
		refused   *RefusedError
		rejected  *RejectedError
		remoteErr *RemoteError
		other     *RemotePlanError
	)
	switch {
	case err == nil:
		return ""
	case errors.As(err, &conflict), errors.As(err, &patch):
		return KindConflict
	case errors.As(err, &refused):
		return KindRefused
	case errors.As(err, &rejected):
		return KindRejected
	case errors.Is(err, ErrRequestReused):
		return KindRequestReused
	case errors.As(err, &remoteErr):
		return KindRemoteFailed
	case errors.As(err, &other):
		return KindRemoteDocument
	case errors.Is(err, ErrPlanMissing):
		return KindDeleted
	case errors.Is(err, ErrUnknownPlan), errors.Is(err, ErrUnknownDocument):
		return KindUnknownPlan
	case errors.Is(err, ErrFileRefused):
		return KindFileRefused
	case errors.Is(err, errReadOnly):
		return KindReadOnly
	case errors.Is(err, werkbaum.ErrTooLarge):
		return KindTooLarge
	case errors.Is(err, werkbaum.ErrTimeout), errors.Is(err, context.DeadlineExceeded):
		return KindTimeout
	case errors.Is(err, ErrStaleVersion):
		return KindStaleVersion
	case errors.Is(err, ErrPatchUnapplicable):
		return KindUnapplicable
	case errors.Is(err, ErrNoSuchVersion):
		return KindNoSuchVersion
	case errors.Is(err, ErrVersionNotKept):
		return KindVersionGone
	}
	return KindInternal
}

// Resolving a plan or a document.

var (
	// ErrUnknownPlan: no plan has this key (any more: a reload removed it).
	ErrUnknownPlan = planfs.ErrUnknownPlan
	// ErrUnknownDocument: no plan has this document id (404).
	ErrUnknownDocument = errors.New("unknown document")
)

// AddressError is a plan key naming a root that cannot stand for a plan file below it
// (planfs.AddressError): a malformed path, a symlink on the way, or no such file. It
// counts as an unknown plan and says why.
type AddressError = planfs.AddressError

// RemotePlanError answers a document request for a plan that lives on a document
// server: talkd serves the documents of its file plans only, not another server's; URL is
// where the document lives (plans_list shows it).
type RemotePlanError struct{ Key, URL string }

func (e *RemotePlanError) Error() string {
	return fmt.Sprintf("plan %q is the document %s on another server; talkd does not serve it", e.Key, e.URL)
}

// Opening a plan file (package planfs).

var (
	// errPlanSwapped: the path named another file at every open (planfs.ErrSwapped).
	errPlanSwapped = planfs.ErrSwapped
	// ErrPlanMissing marks a read of a plan whose file is not there (deleted, or moved
	// away). Its document then reads as deleted (a DELETED version, 404 on GET, the
	// history kept) until the file comes back.
	ErrPlanMissing = planfs.ErrPlanMissing
	// ErrFileRefused marks a plan file talkd refuses on purpose: a symlink, something
	// other than a regular file (a FIFO, a directory, a device), or a file over the input
	// limit.
	ErrFileRefused = planfs.ErrFileRefused
)

// Checking a write.

// ConflictError is a write on a stale base; it carries the plan as it is now.
type ConflictError struct {
	Current *Snapshot
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("conflict: the plan changed since your base (now revision %d, checksum %s); redo the change on the current text (carried here, or read it again) under a new request_id",
		e.Current.Base.Revision, e.Current.Base.Checksum)
}

// RefusedError is a write the guards refused; Refusal names the warnings and the switch.
type RefusedError struct {
	Refusal werkbaum.Refusal
}

func (e *RefusedError) Error() string {
	// The switch changes the arguments, so the same request_id would be refused as reused.
	return fmt.Sprintf("refused: %s; to write it anyway, send it again with %s: true and a new request_id", e.Refusal.Reason, e.Refusal.Switch)
}

// RejectedError is the journal's answer for a request id that was rejected before (bad
// input or a guard refusal); nothing was done again.
type RejectedError struct {
	Message string
	Refusal *werkbaum.Refusal
}

func (e *RejectedError) Error() string { return e.Message }

var (
	// ErrRequestReused: a request id the journal knows, sent with other arguments.
	ErrRequestReused = errors.New("request_id was already used with other arguments")
	// ErrPatchUnapplicable: the patch cannot be applied (422): checksum mismatch, an op
	// out of range, or a base version that is no longer kept. Wrapped with the reason.
	ErrPatchUnapplicable = errors.New("the patch does not apply")
	// ErrStaleVersion: an expectedVersion that is not the current version (409).
	ErrStaleVersion = errors.New("stale version")
	// ErrNoSuchVersion: a restore of a version the document never had (404).
	ErrNoSuchVersion = errors.New("no such version")
	// ErrVersionNotKept: a restore of a version whose text the store no longer keeps (422).
	ErrVersionNotKept = errors.New("version not kept")
)

// errReadOnly marks a write refused because the plan file has no write bit for the
// daemon's user (planfs.WritableError).
var errReadOnly = planfs.ErrReadOnly

// PatchConflict is the 409 answer: the patch's ops overlap ops made since its base;
// nothing was applied. OpsSinceBase is the diff from the patch's base to CurrentVersion.
type PatchConflict struct {
	CurrentVersion uint64            `json:"currentVersion"`
	OpsSinceBase   []werkbaum.LineOp `json:"opsSinceBase"`
}

func (e *PatchConflict) Error() string {
	return fmt.Sprintf("conflict: the patch overlaps changes made since its base (the document is at version %d); nothing was applied", e.CurrentVersion)
}

// Storing a write.

// errFileMoved says that the plan file no longer has the content a read hashed: a write
// (or an outside edit) replaced it in between (planfs.ErrFileMoved, which is
// journal.ErrFileMoved: the journal passes it on when it gives revisions). The read is
// simply done again.
var errFileMoved = planfs.ErrFileMoved

// Creating a plan.

// ErrPlanExists is a create whose file name is taken; nothing was written
// (planfs.ErrPlanExists).
var ErrPlanExists = planfs.ErrPlanExists

// Talking to a document server: RemoteError (remote.Error).

// RemoteError is a document server that could not be used (package remote).
type RemoteError = remote.Error
