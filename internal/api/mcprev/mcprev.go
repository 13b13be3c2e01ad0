// Package mcprev is the one list of MCP protocol revisions talkd speaks. The daemon's /mcp
// door and the stdio bridge (`talk mcp`) both take it from here, so they cannot disagree
// about which revisions exist, which one is the latest of an era, or which allow batches.
// It has no dependencies on purpose: the bridge imports it without pulling in the server.
package mcprev

import "slices"

const (
	// Stateless is the 2026-era revision: no handshake, per-request _meta and headers.
	Stateless = "2026-07-28"
	// Latest2025 is the newest 2025-era revision, answered to an initialize that asks for
	// a revision talkd does not know.
	Latest2025 = "2025-11-25"
	// Assumed2025 is the revision of a request that names none (PROTOCOL.md: assume
	// 2025-03-26 when nothing says otherwise).
	Assumed2025 = "2025-03-26"
)

// revisions2025 are the 2025-era revisions, newest first.
var revisions2025 = []string{"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}

// withBatches are the revisions whose transport defines JSON-RPC batches (2025-06-18
// removed them).
var withBatches = []string{"2025-03-26", "2024-11-05"}

// Revisions2025 returns the 2025-era revisions, newest first (a copy).
func Revisions2025() []string { return slices.Clone(revisions2025) }

// Supported returns every revision talkd serves, newest first (a copy): what
// server/discover offers and every unsupported-version error names.
func Supported() []string { return append([]string{Stateless}, revisions2025...) }

// Is2025 reports whether v is a 2025-era revision.
func Is2025(v string) bool { return slices.Contains(revisions2025, v) }

// Known reports whether talkd serves revision v.
func Known(v string) bool { return v == Stateless || Is2025(v) }

// HasBatches reports whether revision v allows a JSON array of messages in one body. An
// empty v is a request that names no revision, which counts as Assumed2025.
func HasBatches(v string) bool {
	if v == "" {
		v = Assumed2025
	}
	return slices.Contains(withBatches, v)
}
