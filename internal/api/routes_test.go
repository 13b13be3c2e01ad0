package api

import (
	"testing"

	"talkd/internal/config"
)

// TestMatchPattern: {id} stands for exactly one non-empty segment; every other segment,
// and the number of segments, must be equal (a trailing slash is one more segment).
func TestMatchPattern(t *testing.T) {
	for _, c := range []struct {
		path   string
		wantID string
		ok     bool
	}{
		{"/api/v1/documents/abc/content", "abc", true},
		{"/api/v1/documents/ABC/content", "ABC", true}, // lookup lower-cases, not the matcher
		{"/api/v1/documents//content", "", false},
		{"/api/v1/documents/abc/content/", "", false},
		{"/api/v1/documents/abc/content/x", "", false},
		{"/api/v1/documents/abc", "", false},
		{"/api/v1/documents/abc/title", "", false},
		{"/api/v1//documents/abc/content", "", false},
		{"api/v1/documents/abc/content", "", false},
	} {
		id, ok := matchPattern(documentPattern+"/content", c.path)
		if ok != c.ok || id != c.wantID {
			t.Errorf("matchPattern(%q) = %q, %v; want %q, %v", c.path, id, ok, c.wantID, c.ok)
		}
	}
}

// TestRouteLookup: every document path finds its row, with the id lower-cased; a path
// the protocol does not have finds none (and is answered by notFound).
func TestRouteLookup(t *testing.T) {
	cfg := &config.Config{Version: 1}
	cfg.Server.MaxBodyBytes = 64 << 10
	s := New(Options{Config: cfg, Voice: &mcpTestVoice{}, Version: "test"})
	table := s.routes()
	for _, c := range []struct {
		path, id string
		ok       bool
	}{
		{"/speak", "", true},
		{"/api/v1/info", "", true},
		{"/api/v1/documents", "", true},
		{"/api/v1/documents/AbC", "abc", true},
		{"/api/v1/documents/abc/changes", "abc", true},
		{"/api/v1/documents/abc/restore", "abc", true},
		{"/api/v1/documents/", "", false},
		{"/api/v1/info/", "", false},
		{"/api/v1", "", false},
		{"/speak/", "", false},
	} {
		_, id, ok := table.lookup(c.path)
		if ok != c.ok || id != c.id {
			t.Errorf("lookup(%q) = %q, %v; want %q, %v", c.path, id, ok, c.id, c.ok)
		}
	}
}
