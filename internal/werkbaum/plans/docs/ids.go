package docs

// ValidDocumentID reports whether id looks like a lower-case UUID (36 characters, hyphens
// at 8, 13, 18, 23, hex digits elsewhere), the form of every document id; the document
// doors check it before a lookup.
func ValidDocumentID(id string) bool {
	if len(id) != 36 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
				return false
			}
		}
	}
	return true
}
