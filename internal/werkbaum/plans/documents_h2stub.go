package plans

// TEMPORARY (branch h2): the shared design's document types of h1, so the document doors
// build before h1's store is merged. Deleted in the merge of h1.

import (
	"errors"
	"time"

	"talkd/internal/werkbaum"
)

type Document struct {
	ID, Title, Content   string
	Version              uint64
	CreatedAt, UpdatedAt time.Time
}

type ContentPatch struct {
	BaseVersion uint64
	Checksum    string
	ClientID    string
	Seq         int64
	DisplayName string
	Milestone   bool
	Ops         []werkbaum.LineOp
}

type PatchResult struct {
	Version      uint64            `json:"version"`
	OpsSinceBase []werkbaum.LineOp `json:"opsSinceBase"`
}

type PatchConflict struct {
	CurrentVersion uint64            `json:"currentVersion"`
	OpsSinceBase   []werkbaum.LineOp `json:"opsSinceBase"`
}

func (c *PatchConflict) Error() string { return "the patch overlaps changes made since its base" }

type ChangeEvent struct {
	Version     uint64 `json:"version"`
	ChangeType  string `json:"changeType"`
	ClientID    string `json:"clientId,omitempty"`
	DisplayName string `json:"displayName,omitempty"`
	Title       string `json:"title,omitempty"`
}

type ChangeFeed struct {
	FromVersion    *uint64           `json:"fromVersion,omitempty"`
	CurrentVersion uint64            `json:"currentVersion"`
	Ops            []werkbaum.LineOp `json:"ops,omitempty"`
	Content        *string           `json:"content,omitempty"`
	Events         []ChangeEvent     `json:"events"`
}

type HistoryEntry struct {
	DocumentID  string    `json:"documentId"`
	Version     uint64    `json:"version"`
	Title       string    `json:"title"`
	Content     string    `json:"content"`
	ChangeType  string    `json:"changeType"`
	Timestamp   time.Time `json:"timestamp"`
	ClientID    string    `json:"clientId,omitempty"`
	DisplayName string    `json:"displayName,omitempty"`
}

var (
	ErrUnknownDocument   = errors.New("unknown document")
	ErrPatchUnapplicable = errors.New("the patch does not apply")
	ErrStaleVersion      = errors.New("stale version")
)
