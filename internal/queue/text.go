package queue

import (
	"strings"
	"unicode"
)

// CutAtSentence shortens s to at most max runes, preferring the last sentence end that
// keeps at least a third of the allowance, else the last word boundary. It is the one rule
// for long announcements: the API cuts what it admits with it, and the voice what its
// text cleanup leaves.
func CutAtSentence(s string, max int) string {
	r := []rune(s)
	if len(r) <= max {
		return s
	}
	head := r[:max]
	for i := len(head) - 1; i >= max/3; i-- {
		if strings.ContainsRune(".!?…。！？", head[i]) && (i+1 == len(r) || unicode.IsSpace(r[i+1])) {
			return string(head[:i+1])
		}
	}
	if i := strings.LastIndexFunc(string(head), unicode.IsSpace); i > 0 {
		return strings.TrimRightFunc(string(head)[:i], func(r rune) bool {
			return unicode.IsSpace(r) || strings.ContainsRune(",;:-", r)
		})
	}
	return string(head)
}
