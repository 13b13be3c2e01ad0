package journal

import (
	"encoding/json"
	"time"
)

// Author is who asked for a write: the authenticated client and the agent name it claims.
type Author struct {
	Client string `json:"client"`
	Agent  string `json:"agent,omitempty"`
}

// Operation states of an entry (operation_get reports all but pending).
const (
	StateApplied  = "applied"
	StateRejected = "rejected"
	StateConflict = "conflict"
	StateUnknown  = "unknown"
	StatePending  = "pending"
)

// Entry is one write request as the journal keeps it (JSON, at EntryKey of its author's
// client and request id). What is particular to one kind of write is bytes its owner
// decodes: Result is the answer a retry gets, Remote the PATCH of a plan on a document
// server.
type Entry struct {
	RequestID   string          `json:"requestId"`
	ArgsHash    string          `json:"argsHash"`
	Tool        string          `json:"tool"`
	State       string          `json:"state"`
	Author      Author          `json:"author"`
	At          time.Time       `json:"at"`
	OldChecksum string          `json:"oldChecksum,omitempty"`
	NewChecksum string          `json:"newChecksum,omitempty"`
	Revision    uint64          `json:"revision,omitempty"`
	Result      json.RawMessage `json:"result,omitempty"`
	Error       string          `json:"error,omitempty"`
	// Seq is the entry's place in the order index; trimming that place removes the entry
	// only if it is still the same one (a request id that recovery forgot and that was sent
	// again has a later place). 0 in entries written before Seq existed.
	Seq uint64 `json:"seq,omitempty"`
	// Remote is the PATCH of a write to a plan on a document server (the store's
	// remote.Patch as JSON), kept so that a retry or the settling of a pending entry
	// repeats it with the same (clientId, seq).
	Remote json.RawMessage `json:"remote,omitempty"`
}
