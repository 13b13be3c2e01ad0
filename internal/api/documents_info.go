package api

import (
	"talkd/internal/config"
	"talkd/internal/werkbaum"
)

// GET /api/v1/info: what this server offers of the document protocol, so an editor can
// tell before it tries (its Share button asks before it creates). DOCUMENTS.md gives
// {name, version, builtAt?, taiga?, taigaWeb?}; talkd adds the protocol version it
// speaks, which optional parts it serves (each answer computed from the configuration in
// force, never a constant that could claim more than the doors do) and its limits.

// documentsProtocolVersion is the version of the document protocol served under
// /api/v1 (the path's version).
const documentsProtocolVersion = "v1"

type infoWire struct {
	Name     string       `json:"name"`
	Version  string       `json:"version"`
	Protocol string       `json:"protocolVersion"`
	Features infoFeatures `json:"features"`
	Limits   infoLimits   `json:"limits"`
}

// infoFeatures says, per optional part of the protocol, whether this server serves it.
type infoFeatures struct {
	// Create: POST /documents makes a new plan (a root with create = true).
	Create bool `json:"create"`
	// Restore: POST /documents/{id}/restore.
	Restore bool `json:"restore"`
	// Rename: PATCH /documents/{id}/title.
	Rename bool `json:"rename"`
	// History: GET /documents/{id}/history.
	History bool `json:"history"`
	// Replace and Delete: PUT and DELETE /documents/{id}.
	Replace bool `json:"replace"`
	Delete  bool `json:"delete"`
	// List: GET /documents.
	List bool `json:"list"`
}

type infoLimits struct {
	// MaxBodyBytes bounds a content PATCH (and a POST /documents) body.
	MaxBodyBytes int64 `json:"maxBodyBytes"`
	// MaxContentBytes bounds a plan's text: the notation engine reads no more.
	MaxContentBytes int `json:"maxContentBytes"`
	// Characters of a title, a clientId, a displayName.
	MaxTitleChars       int `json:"maxTitleChars"`
	MaxClientIDChars    int `json:"maxClientIdChars"`
	MaxDisplayNameChars int `json:"maxDisplayNameChars"`
	// The long poll's wait: the default and the cap, in seconds.
	ChangesWaitDefault int `json:"changesWaitDefaultSeconds"`
	ChangesWaitMax     int `json:"changesWaitMaxSeconds"`
}

// documentInfo is the answer of GET /api/v1/info under cfg.
func (s *Server) documentInfo(cfg *config.Config) infoWire {
	return infoWire{
		Name: "talkd", Version: s.version, Protocol: documentsProtocolVersion,
		Features: infoFeatures{
			Create:  s.createRoot(cfg) != "",
			Restore: s.documents.store != nil,
			Rename:  s.documents.store != nil,
			History: s.documents.store != nil,
		},
		Limits: infoLimits{
			MaxBodyBytes:        s.mcpMaxBody,
			MaxContentBytes:     werkbaum.DefaultMaxInputBytes,
			MaxTitleChars:       maxTitle,
			MaxClientIDChars:    maxClientID,
			MaxDisplayNameChars: maxDisplayName,
			ChangesWaitDefault:  int(DefaultChangesWait.Seconds()),
			ChangesWaitMax:      int(MaxChangesWait.Seconds()),
		},
	}
}

// createRoot is the name of the root that takes documents created with POST /documents,
// "" when none does (no root with create = true, or no plan store that creates).
func (s *Server) createRoot(cfg *config.Config) string {
	if _, ok := s.documents.store.(documentCreator); !ok || cfg.Shared() {
		// Shared mode grants plans by key; a created file would be a plan no grant names
		// (and the config refuses roots there anyway).
		return ""
	}
	r, ok := cfg.CreateRoot()
	if !ok {
		return ""
	}
	return r.Name
}
