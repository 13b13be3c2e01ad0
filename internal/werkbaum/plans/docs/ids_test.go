package docs

import "testing"

// TestValidDocumentID: the canonical form only (lower case; the config lowers a URL's id
// before it asks).
func TestValidDocumentID(t *testing.T) {
	for id, want := range map[string]bool{
		"3f2c9a1e-0b7d-4c55-9e61-2a8f4d0c7b13":  true,
		"3F2C9A1E-0B7D-4C55-9E61-2A8F4D0C7B13":  false,
		"3f2c9a1e0b7d-4c55-9e61-2a8f4d0c7b13-":  false,
		"3f2c9a1e-0b7d-4c55-9e61-2a8f4d0c7b1":   false,
		"3f2c9a1e-0b7d-4c55-9e61-2a8f4d0c7b13a": false,
		"3f2c9a1e-0b7d-4c55-9e61-2a8f4d0c7g13":  false,
		"":                                      false,
	} {
		if got := ValidDocumentID(id); got != want {
			t.Errorf("ValidDocumentID(%q) = %t, want %t", id, got, want)
		}
	}
}
