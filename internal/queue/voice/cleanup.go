package voice

import (
	"net/url"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"talkd/internal/queue"
)

// CleanupOptions switches the speech text rules. Listeners hate hearing punctuation, URLs
// and code read out, so every rule defaults to on in the configuration.
type CleanupOptions struct {
	// URLs replaces each URL with its host name ("github.com") when that is short and
	// pronounceable, else with the word "link".
	URLs bool
	// Markdown drops markdown markers (headings, emphasis, bullets, quotes, tables, link
	// targets) and whole fenced code blocks.
	Markdown bool
	// MaxChars cuts longer texts at the last sentence end before the limit (else the last
	// word boundary); <= 0 means no limit.
	MaxChars int
}

var (
	reFence      = regexp.MustCompile("^\\s*(```|~~~)")
	reHeading    = regexp.MustCompile(`^#{1,6}\s+`)
	reQuote      = regexp.MustCompile(`^(>\s?)+`)
	reBullet     = regexp.MustCompile(`^([-*+]|\d{1,3}[.)])\s+`)
	reRule       = regexp.MustCompile(`^([-*_]\s*){3,}$`)
	reTableSep   = regexp.MustCompile(`^\|?(\s*:?-{2,}:?\s*\|)+\s*:?-*:?\s*\|?$`)
	reImage      = regexp.MustCompile(`!\[([^\]]*)\]\([^)]*\)`)
	reLink       = regexp.MustCompile(`\[([^\]]+)\]\([^)]*\)`)
	reAutolink   = regexp.MustCompile(`<((?:https?|ftp)://[^>\s]+)>`)
	reCode       = regexp.MustCompile("`+([^`]+)`+")
	reStrong     = regexp.MustCompile(`(\*\*|__)(\S(?:.*?\S)?)(\*\*|__)`)
	reEmphasis   = regexp.MustCompile(`(^|[^\w*])[*_](\S(?:[^*_]*?\S)?)[*_]($|[^\w*])`)
	reStrike     = regexp.MustCompile(`~~(\S(?:.*?\S)?)~~`)
	reURL        = regexp.MustCompile(`(?i)\b(?:(?:https?|ftp)://|www\.)[^\s<>"'` + "`" + `]+`)
	reSentenceOK = regexp.MustCompile(`[.!?:;,…。！？]$`)
)

// Clean turns a message written for eyes into text for ears according to o. It is a pure
// function: the same input and options always give the same output.
func Clean(text string, o CleanupOptions) string {
	s := strings.ReplaceAll(text, "\r\n", "\n")
	var lines []string
	if o.Markdown {
		lines = stripMarkdown(s)
	} else {
		lines = strings.Split(s, "\n")
	}
	joined := joinLines(lines)
	if o.URLs {
		joined = reURL.ReplaceAllStringFunc(joined, spokenURL)
	}
	joined = strings.Join(strings.Fields(joined), " ")
	if o.MaxChars > 0 {
		joined = queue.CutAtSentence(joined, o.MaxChars)
	}
	return joined
}

// line is one line of text after markdown stripping; block lines (headings, list items)
// get a spoken pause after them when they end without punctuation.
type line struct {
	text  string
	block bool
}

// stripMarkdown removes markdown syntax line by line. Fenced code blocks are dropped
// whole; when that would leave nothing to say, their content is kept instead.
func stripMarkdown(s string) []string {
	var out []line
	var code []string
	inFence := false
	for _, raw := range strings.Split(s, "\n") {
		if reFence.MatchString(raw) {
			inFence = !inFence
			continue
		}
		if inFence {
			code = append(code, raw)
			continue
		}
		t := strings.TrimSpace(raw)
		if reRule.MatchString(t) || reTableSep.MatchString(t) {
			continue
		}
		block := false
		t = reQuote.ReplaceAllString(t, "")
		if reHeading.MatchString(t) {
			t, block = reHeading.ReplaceAllString(t, ""), true
		}
		if reBullet.MatchString(t) {
			t, block = reBullet.ReplaceAllString(t, ""), true
		}
		if strings.HasPrefix(t, "|") || strings.HasSuffix(t, "|") {
			cells := strings.Split(strings.Trim(t, "|"), "|")
			for i := range cells {
				cells[i] = strings.TrimSpace(cells[i])
			}
			t, block = strings.Join(cells, ", "), true
		}
		out = append(out, line{text: stripInline(t), block: block})
	}
	res := make([]string, 0, len(out))
	for i, l := range out {
		txt := strings.TrimSpace(l.text)
		if txt == "" {
			continue
		}
		nextBlock := i+1 < len(out) && out[i+1].block
		if (l.block || nextBlock) && !reSentenceOK.MatchString(txt) {
			txt += "."
		}
		res = append(res, txt)
	}
	if len(res) == 0 && len(code) > 0 {
		return code
	}
	return res
}

// stripInline removes inline markdown: images and links keep their text, code spans
// their content, emphasis and strike-through their words.
func stripInline(t string) string {
	if !strings.ContainsAny(t, "*_`[]<~") {
		return t // the common plain line: no regular expression has anything to do
	}
	t = reImage.ReplaceAllString(t, "$1")
	t = reLink.ReplaceAllString(t, "$1")
	t = reAutolink.ReplaceAllString(t, "$1")
	t = reCode.ReplaceAllString(t, "$1")
	t = reStrong.ReplaceAllString(t, "$2")
	t = reStrike.ReplaceAllString(t, "$1")
	// Applied twice because adjacent emphasized words share their separator.
	t = reEmphasis.ReplaceAllString(t, "$1$2$3")
	t = reEmphasis.ReplaceAllString(t, "$1$2$3")
	return t
}

// joinLines joins lines with single spaces, dropping empty ones.
func joinLines(lines []string) string {
	var b strings.Builder
	for _, l := range lines {
		l = strings.TrimSpace(l)
		if l == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(l)
	}
	return b.String()
}

// spokenURL says a URL as its host name when the host is short and made of words
// ("github.com", "example.org"), else as "link". Trailing sentence punctuation is kept
// out of the URL.
func spokenURL(m string) string {
	trail := ""
	for len(m) > 0 {
		r, size := utf8.DecodeLastRuneInString(m)
		if !strings.ContainsRune(".,;:!?'\")]}", r) {
			break
		}
		if r == ')' && strings.Count(m, "(") >= strings.Count(m, ")") {
			break
		}
		trail = string(r) + trail
		m = m[:len(m)-size]
	}
	raw := m
	if !strings.Contains(raw, "://") {
		raw = "http://" + raw
	}
	host := ""
	if u, err := url.Parse(raw); err == nil {
		host = strings.TrimPrefix(strings.ToLower(u.Hostname()), "www.")
	}
	if !pronounceableHost(host) {
		host = "link"
	}
	return host + trail
}

// pronounceableHost accepts hosts of at most 30 characters whose labels are letters and
// hyphens: these read well aloud, while IP addresses and generated names do not.
func pronounceableHost(h string) bool {
	if h == "" || len(h) > 30 {
		return false
	}
	for _, r := range h {
		if !(unicode.IsLetter(r) || r == '.' || r == '-') {
			return false
		}
	}
	return true
}
