package remote

import "talkd/internal/werkbaum"

// Patch is the body of PATCH …/content (DOCUMENTS.md ContentPatch). A pending journal
// entry keeps it (its JSON is the journal's: change no name).
type Patch struct {
	BaseVersion uint64            `json:"baseVersion"`
	Checksum    string            `json:"checksum"`
	ClientID    string            `json:"clientId"`
	Seq         int64             `json:"seq"`
	DisplayName string            `json:"displayName,omitempty"`
	Milestone   bool              `json:"milestone"`
	Ops         []werkbaum.LineOp `json:"ops"`
}

// Document is a GET's answer (DOCUMENTS.md Document).
type Document struct {
	ID      string `json:"id"`
	Title   string `json:"title"`
	Content string `json:"content"`
	Version uint64 `json:"version"`
}

// PatchAnswer is the body of a PATCH's 200 (version) or 409 (currentVersion).
type PatchAnswer struct {
	Version        uint64            `json:"version"`
	CurrentVersion uint64            `json:"currentVersion"`
	OpsSinceBase   []werkbaum.LineOp `json:"opsSinceBase"`
}
