package queue

import (
	"fmt"
	"slices"
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

// CutKeepingEnd shortens s to at most max runes by dropping its beginning, for text
// whose end matters most: piped build output, where the error is the last line. It starts
// at the first line that leaves at least a third of the allowance, else after the first
// sentence end, else after the first word boundary. leftOut says what was dropped, for
// the answer ("the first 37 lines (1813 characters)"); it is "" when s fits.
func CutKeepingEnd(s string, limit int) (kept, leftOut string) {
	r := []rune(s)
	if len(r) <= limit {
		return s, ""
	}
	offset := len(r) - limit
	window := r[offset:]
	start := -1
	for i, c := range window {
		if len(window)-(i+1) < limit/3 {
			break
		}
		if c == '\n' {
			start = i + 1
			break
		}
	}
	byLine := start >= 0
	if !byLine {
		for i := 0; i < len(window)-1 && len(window)-(i+1) >= limit/3; i++ {
			if strings.ContainsRune(".!?…。！？", window[i]) && unicode.IsSpace(window[i+1]) {
				start = i + 1
				break
			}
		}
	}
	if start < 0 {
		start = max(0, slices.IndexFunc(window, unicode.IsSpace))
	}
	dropped := string(r[:offset+start])
	kept = strings.TrimSpace(string(window[start:]))
	chars := len([]rune(dropped))
	if byLine {
		lines := strings.Count(dropped, "\n")
		if lines == 1 {
			return kept, fmt.Sprintf("the first line (%d characters)", chars)
		}
		return kept, fmt.Sprintf("the first %d lines (%d characters)", lines, chars)
	}
	return kept, fmt.Sprintf("the first %d characters", chars)
}
