package main

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// neutraliseTerminal makes the plan commands' human output safe for a terminal: plan text
// (labels, people, warnings quoting labels, the whole text for show) comes from whoever
// edited the plan, and a raw ESC sequence in it could set the window title, clear the
// screen or hide text (issue 15). stdout is wrapped unless --json (JSON escapes control
// characters itself and must carry the text unchanged); stderr always, since refusals
// quote the daemon's text.
func (a *app) neutraliseTerminal() {
	if !a.opts.json {
		a.stdout = termSafe{a.stdout}
	}
	a.stderr = termSafe{a.stderr}
}

// termSafe is a writer that passes each write through neutralise. Each write is
// neutralised on its own: a CRLF split across two writes shows its CR escaped, which
// only the whole text of plan show could contain, and that is written at once.
type termSafe struct{ w io.Writer }

func (t termSafe) Write(p []byte) (int, error) {
	if _, err := io.WriteString(t.w, neutralise(string(p))); err != nil {
		return 0, err
	}
	return len(p), nil
}

// neutralise returns s with every character a terminal would act on replaced by a
// visible escape: C0 controls except tab and LF (a CR directly before LF is a line ending
// and stays), DEL and ESC as \xHH, C1 controls (U+0080–U+009F) as \u00HH, and bytes that
// are not UTF-8 (an 8-bit terminal reads 0x9b as CSI) as \xHH. Text without any of these
// is returned as it is.
func neutralise(s string) string {
	i := 0
	for i < len(s) {
		size, ok := plainAt(s, i)
		if !ok {
			break
		}
		i += size
	}
	if i == len(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	b.WriteString(s[:i])
	for i < len(s) {
		size, ok := plainAt(s, i)
		switch {
		case ok:
			b.WriteString(s[i : i+size])
		case size == 1:
			fmt.Fprintf(&b, "\\x%02x", s[i])
		default: // a C1 control, two bytes in UTF-8
			r, _ := utf8.DecodeRuneInString(s[i:])
			fmt.Fprintf(&b, "\\u%04x", r)
		}
		i += size
	}
	return b.String()
}

// plainAt reports the size of the character at s[i] and whether a terminal shows it as
// text (the one rule of neutralise).
func plainAt(s string, i int) (size int, ok bool) {
	c := s[i]
	if c < utf8.RuneSelf {
		return 1, (c >= 0x20 && c < 0x7f) || c == '\t' || c == '\n' || (c == '\r' && i+1 < len(s) && s[i+1] == '\n')
	}
	r, size := utf8.DecodeRuneInString(s[i:])
	if r == utf8.RuneError && size == 1 {
		return 1, false
	}
	return size, r > 0x9f
}
