// Package agenttext turns what a coding agent last wrote into one sentence worth hearing.
//
// An agent's final message is written for a screen: headings, bullet lists, code, file
// paths and links. Read aloud it is noise, and the daemon's own cleanup (which says a
// URL's host and keeps code text, because a caller of speak chose its words) is too kind
// for it. The hooks of the agents' hosts therefore drop code, URLs and paths here, and
// keep only the first sentence that says something: the rest is on the screen.
package agenttext

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxRunes bounds the sentence: a longer first sentence is cut at a word boundary.
const MaxRunes = 200

var (
	reFence    = regexp.MustCompile("^\\s*(```|~~~)")
	reHeading  = regexp.MustCompile(`^\s*#{1,6}\s`)
	reBullet   = regexp.MustCompile(`^\s*(?:[-*+]|\d{1,3}[.)])\s+`)
	reQuote    = regexp.MustCompile(`^\s*(?:>\s?)+`)
	reTableRow = regexp.MustCompile(`^\s*\|`)
	reRule     = regexp.MustCompile(`^\s*(?:[-*_]\s*){3,}$`)
	reImage    = regexp.MustCompile(`!\[[^\]]*\]\([^)]*\)`)
	reLink     = regexp.MustCompile(`\[([^\]]+)\]\([^)]*\)`)
	reCode     = regexp.MustCompile("`+[^`]*`+")
	reURL      = regexp.MustCompile(`(?i)<?\b(?:(?:https?|ftp|file)://|www\.)[^\s<>"')\]]+>?`)
	// rePath is a token with a slash or backslash between name characters (src/main.go,
	// ~/.config/talk, C:\Users), or a file name with a common source extension.
	rePath     = regexp.MustCompile(`(?:^|[\s(])(?:[~.]{0,2}[/\\])?[\p{L}\p{N}_.@~-]+(?:[/\\][\p{L}\p{N}_.@~-]*)+|(?:^|[\s(])[\p{L}\p{N}_-]+\.(?:go|py|js|ts|tsx|jsx|rs|c|h|cc|cpp|hpp|java|kt|rb|php|sh|md|json|toml|ya?ml|txt|lock|mod|sum|html|css|sql)\b`)
	reEmph     = regexp.MustCompile(`(\*\*|__|\*|_|~~)(\S(?:.*?\S)?)(\*\*|__|\*|_|~~)`)
	reEmpty    = regexp.MustCompile(`\([\s,;\x00]*\)|\[\s*\]`)
	reSpacePct = regexp.MustCompile(`\s+([,.;:!?])`)
	reRepeat   = regexp.MustCompile(`([,;:])(?:\s*[,;:])+`)
)

// Sentence returns the first sentence of text worth saying, cleaned for speech: fenced
// code blocks, inline code, URLs, file paths, headings and tables are dropped, markdown
// markers removed, and the result cut to one sentence of at most MaxRunes characters.
// A sentence that only introduces something (it ends with a colon) is passed over when
// another follows. The result is "" when nothing speakable is left.
func Sentence(text string) string {
	var parts []string
	inFence := false
	for _, raw := range strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n") {
		if reFence.MatchString(raw) {
			inFence = !inFence
			continue
		}
		if inFence || reHeading.MatchString(raw) || reTableRow.MatchString(raw) || reRule.MatchString(raw) {
			continue
		}
		line := reQuote.ReplaceAllString(raw, "")
		line = reBullet.ReplaceAllString(line, "")
		line = cleanInline(line)
		if line == "" {
			continue
		}
		// A line break ends a sentence when the line has no end of its own (a list item,
		// a title line).
		if !endsSentence(line) {
			line += "."
		}
		parts = append(parts, line)
	}
	sentences := splitSentences(strings.Join(parts, " "))
	var pick string
	for _, s := range sentences {
		if !hasWord(s) {
			continue
		}
		if pick == "" {
			pick = s
		}
		if !strings.HasSuffix(s, ":") {
			pick = s
			break
		}
	}
	if strings.HasSuffix(pick, ":") {
		pick = strings.TrimSuffix(pick, ":") + "."
	}
	return cut(closeGaps(pick), MaxRunes)
}

// gap marks where code, a URL or a path was dropped, until closeGaps has looked at the
// words around it.
const gap = "\x00"

// connectors are words that only lead to what follows them: at the end of a sentence, or
// between two dropped things, they lead nowhere once those are gone ("see and ." is
// "see ./a and ./b." without its paths).
var connectors = map[string]bool{
	"see": true, "and": true, "or": true, "in": true, "at": true, "to": true, "from": true, "with": true,
	"for": true, "of": true, "under": true, "via": true, "like": true, "e.g": true, "siehe": true,
	"und": true, "oder": true, "unter": true, "mit": true, "von": true, "nach": true, "bei": true, "im": true, "an": true,
}

// closeGaps removes the gap marks and the words that led to what was dropped: before a
// gap that ends a clause or the sentence, trailing connectors go ("tests pass in ; see ."
// is "tests pass."), and a connector between two gaps goes ("see and" of two links).
func closeGaps(s string) string {
	if !strings.Contains(s, gap) {
		return s
	}
	words := strings.Fields(s)
	core := func(w string) string { return strings.ToLower(strings.TrimRight(w, ".,;:!?")) }
	var out []string
	for i, w := range words {
		c := core(w)
		if c == gap {
			punct := w[len(strings.TrimRight(w, ".,;:!?")):]
			if punct != "" || i == len(words)-1 {
				for n := len(out); n > 0 && connectors[core(out[n-1])] && core(out[n-1]) == strings.ToLower(out[n-1]); n = len(out) {
					out = out[:n-1]
				}
				if n := len(out); n > 0 && punct != "" {
					out[n-1] = strings.TrimRight(out[n-1], ",;:") + punct
				}
			}
			continue
		}
		if connectors[c] && i > 0 && i+1 < len(words) && core(words[i-1]) == gap && core(words[i+1]) == gap {
			continue
		}
		if w = strings.ReplaceAll(w, gap, ""); w != "" {
			out = append(out, w)
		}
	}
	res := strings.Join(out, " ")
	if res != "" && !endsSentence(res) {
		res = strings.TrimRight(res, ",;") + "."
	}
	return res
}

// cleanInline drops code, URLs and paths from one line and removes markdown markers.
func cleanInline(s string) string {
	s = reImage.ReplaceAllString(s, "")
	s = reLink.ReplaceAllString(s, "$1")
	s = reCode.ReplaceAllString(s, " "+gap+" ")
	// A URL or path at a sentence's end keeps the sentence's punctuation.
	s = reURL.ReplaceAllStringFunc(s, func(m string) string {
		return " " + gap + m[len(strings.TrimRight(m, ".,;:!?")):] + " "
	})
	s = rePath.ReplaceAllStringFunc(s, func(m string) string {
		lead := " "
		if r, _ := utf8.DecodeRuneInString(m); unicode.IsSpace(r) || r == '(' {
			lead = string(r)
		}
		return lead + gap + m[len(strings.TrimRight(m, ".,;:!?")):] + " "
	})
	for range 2 { // nested emphasis (***bold italic***)
		s = reEmph.ReplaceAllString(s, "$2")
	}
	s = strings.NewReplacer("**", "", "__", "", "~~", "", "`", "").Replace(s)
	s = reEmpty.ReplaceAllString(s, "")
	s = strings.Join(strings.Fields(s), " ")
	s = reSpacePct.ReplaceAllString(s, "$1")
	s = reRepeat.ReplaceAllString(s, "$1")
	return strings.TrimLeft(strings.TrimSpace(s), ",;:.")
}

func endsSentence(s string) bool {
	r, _ := utf8.DecodeLastRuneInString(s)
	return strings.ContainsRune(".!?:…", r)
}

// splitSentences splits after ., !, ?, … or : followed by a space; a dot between digits
// or letters (3.5, e.g.) does not end a sentence because no space follows it.
func splitSentences(s string) []string {
	var out []string
	start := 0
	for i, r := range s {
		if !strings.ContainsRune(".!?:…", r) {
			continue
		}
		next := i + utf8.RuneLen(r)
		if next < len(s) && s[next] != ' ' {
			continue
		}
		if r == '.' && abbreviation(s[start:i]) {
			continue
		}
		out = append(out, strings.TrimSpace(s[start:next]))
		start = next
	}
	if rest := strings.TrimSpace(s[start:]); rest != "" {
		out = append(out, rest)
	}
	return out
}

// abbreviation reports whether the text before a dot ends in a short abbreviation
// ("e.g", "i.e", "etc", "vs") that does not end the sentence.
func abbreviation(before string) bool {
	f := strings.Fields(before)
	if len(f) == 0 {
		return false
	}
	switch strings.ToLower(f[len(f)-1]) {
	case "e.g", "i.e", "vs", "z.b", "bzw", "ca", "cf":
		return true
	}
	return false
}

func hasWord(s string) bool {
	for _, r := range s {
		if unicode.IsLetter(r) {
			return true
		}
	}
	return false
}

// cut shortens s to at most n runes at a word boundary.
func cut(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	runes := []rune(s)
	t := string(runes[:n])
	if i := strings.LastIndexByte(t, ' '); i > n/2 {
		t = t[:i]
	}
	return strings.TrimRight(t, " ,;:") + "."
}
