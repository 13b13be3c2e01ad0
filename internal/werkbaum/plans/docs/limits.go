// Package docs holds the rules of the live-document protocol (shared/werkbaum/DOCUMENTS.md)
// that more than one package enforces: the config checks a remote plan's display name,
// the document doors decode requests, and the plan store checks what reaches it and what
// it sends to a document server. It also holds the version log's layout, records and
// retention rule (versions.go), which the document store applies. It imports nothing of
// talkd (nor goja: config, and so talk, import it), so each of them can use it.
package docs

// Bounds of the protocol's strings, in characters (Unicode code points).
const (
	// MaxClientID bounds ContentPatch.clientId.
	MaxClientID = 64
	// MaxDisplayName bounds ContentPatch.displayName and TitlePatch.displayName.
	MaxDisplayName = 64
	// MaxTitle bounds a document's title (at least one character).
	MaxTitle = 255
)
