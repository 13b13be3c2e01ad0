package api

import (
	"bytes"
	"encoding/json"
	"strconv"
	"unicode/utf8"
)

// This file holds the small JSON helpers of the hot MCP path. The door decodes every
// message once: json.Valid checks the whole body, then objectMembers splits objects into
// raw members without building maps or reflecting over structs. Anything unusual (escaped
// or non-ASCII keys that encoding/json would match case-insensitively, values of an
// unexpected type) makes the callers fall back to encoding/json, so both paths accept,
// refuse and answer exactly alike.

// objectMembers iterates the members of one JSON object that json.Valid has accepted.
type objectMembers struct {
	data []byte
	pos  int
}

// newObjectMembers starts at the opening brace of obj (valid JSON, leading space trimmed).
func newObjectMembers(obj []byte) objectMembers { return objectMembers{data: obj, pos: 1} }

// next returns the raw key (with its quotes) and raw value of the next member; ok is false
// at the closing brace.
func (o *objectMembers) next() (key, val []byte, ok bool) {
	o.skipSpace()
	if o.pos >= len(o.data) || o.data[o.pos] == '}' {
		return nil, nil, false
	}
	if o.data[o.pos] == ',' {
		o.pos++
		o.skipSpace()
	}
	start := o.pos
	o.skipValue()
	key = o.data[start:o.pos]
	o.skipSpace()
	o.pos++ // the colon
	o.skipSpace()
	start = o.pos
	o.skipValue()
	return key, o.data[start:o.pos], true
}

func (o *objectMembers) skipSpace() {
	for o.pos < len(o.data) {
		switch o.data[o.pos] {
		case ' ', '\t', '\n', '\r':
			o.pos++
		default:
			return
		}
	}
}

// skipValue moves past one valid JSON value.
func (o *objectMembers) skipValue() {
	d := o.data
	switch d[o.pos] {
	case '"':
		o.pos = skipString(d, o.pos)
	case '{', '[':
		depth := 0
		for o.pos < len(d) {
			switch d[o.pos] {
			case '"':
				o.pos = skipString(d, o.pos)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					o.pos++
					return
				}
			}
			o.pos++
		}
	default: // number, true, false, null
		for o.pos < len(d) {
			switch d[o.pos] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				return
			}
			o.pos++
		}
	}
}

// skipString returns the index after the string starting at d[i] (a quote).
func skipString(d []byte, i int) int {
	for i++; i < len(d); i++ {
		switch d[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return i
}

// plainString returns the content of a raw JSON string that needs no decoding: no escapes
// and valid UTF-8 (encoding/json would replace invalid bytes). ok is false otherwise,
// including for values that are not strings.
func plainString(raw []byte) (s []byte, ok bool) {
	if len(raw) < 2 || raw[0] != '"' {
		return nil, false
	}
	inner := raw[1 : len(raw)-1]
	for _, c := range inner {
		if c == '\\' {
			return nil, false
		}
		if c >= utf8.RuneSelf {
			if !utf8.Valid(inner) {
				return nil, false
			}
			break
		}
	}
	return inner, true
}

// keyName returns the name of a raw member key: its bytes when plain, else as
// encoding/json decodes it.
func keyName(raw []byte) string {
	if s, ok := plainString(raw); ok {
		return string(s)
	}
	var k string
	_ = json.Unmarshal(raw, &k) // the key comes from a valid object, so it is a string
	return k
}

// exactKey reports whether a raw key is plain ASCII, so that comparing it byte for byte
// with a lower-case field name decides a match the way encoding/json would. Keys with
// escapes or non-ASCII bytes (which may fold to a field name, e.g. U+212A to "k") are not.
func exactKey(raw []byte) bool {
	for _, c := range raw[1 : len(raw)-1] {
		if c == '\\' || c >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// foldsToAny reports whether key (plain ASCII) matches one of names only
// case-insensitively, as encoding/json's struct decoding would accept it.
func foldsToAny(key []byte, names ...string) bool {
	for _, n := range names {
		if len(n) == len(key) && string(key) != n && equalFoldASCII(key, n) {
			return true
		}
	}
	return false
}

func equalFoldASCII(a []byte, b string) bool {
	for i := range len(a) {
		x, y := a[i], b[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

// jsonPlainASCII tells the ASCII bytes appendJSONString copies as they are: one lookup per
// byte instead of six comparisons (a speak answer escapes its message twice).
var jsonPlainASCII = func() (t [utf8.RuneSelf]bool) {
	for b := range t {
		t[b] = b >= 0x20 && b != '"' && b != '\\' && b != '<' && b != '>' && b != '&'
	}
	return t
}()

// appendJSONString appends s as a JSON string exactly as encoding/json encodes it
// (HTML-safe: <, > and & escaped; U+2028, U+2029 escaped; invalid UTF-8 as U+FFFD).
func appendJSONString(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if b := s[i]; b < utf8.RuneSelf {
			if jsonPlainASCII[b] {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '\\', '"':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hex[b>>4], hex[b&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// nextElement returns the next raw element of a JSON array that json.Valid has accepted
// (the scanner started at its opening bracket); ok is false at the closing bracket.
func (o *objectMembers) nextElement() (val []byte, ok bool) {
	o.skipSpace()
	if o.pos < len(o.data) && o.data[o.pos] == ',' {
		o.pos++
		o.skipSpace()
	}
	if o.pos >= len(o.data) || o.data[o.pos] == ']' {
		return nil, false
	}
	start := o.pos
	o.skipValue()
	return o.data[start:o.pos], true
}

// invalidUTF8Path names where a valid JSON document holds bytes that are not UTF-8: the
// dotted path of the first such string ("ops[0].lines[2]"), or of the object whose key
// holds them. It is "" for a document without such bytes (or that is not valid JSON).
func invalidUTF8Path(doc []byte) string {
	doc = bytes.TrimSpace(doc)
	if len(doc) == 0 || !json.Valid(doc) {
		return ""
	}
	path, _ := invalidIn(doc, "")
	return path
}

func invalidIn(v []byte, path string) (string, bool) {
	switch v[0] {
	case '"':
		return path, !utf8.Valid(v)
	case '{':
		members := newObjectMembers(v)
		for {
			key, val, ok := members.next()
			if !ok {
				return "", false
			}
			if !utf8.Valid(key) {
				return path, true
			}
			sub := keyName(key)
			if path != "" {
				sub = path + "." + sub
			}
			if p, bad := invalidIn(val, sub); bad {
				return p, true
			}
		}
	case '[':
		elems := newObjectMembers(v)
		for i := 0; ; i++ {
			val, ok := elems.nextElement()
			if !ok {
				return "", false
			}
			if p, bad := invalidIn(val, path+"["+strconv.Itoa(i)+"]"); bad {
				return p, true
			}
		}
	}
	return "", false
}
