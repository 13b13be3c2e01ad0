package api

import (
	"bytes"
	"encoding/json"
	"strconv"
	"unicode/utf8"
)

// This file holds the small JSON helpers of the hot MCP path. The door decodes every
// message once: validJSON (json.Valid's answer, faster) checks the whole body, then
// objectMembers splits objects into raw members without building maps or reflecting
// over structs. Anything unusual (escaped or non-ASCII keys that encoding/json would
// match case-insensitively, values of an unexpected type) makes the callers fall back to
// encoding/json, so both paths accept, refuse and answer exactly alike.

// objectMembers iterates the members of one JSON object that validJSON has accepted.
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

// appendJSONString appends s as a JSON string exactly as encoding/json encodes it
// (HTML-safe: <, > and & escaped; U+2028, U+2029 escaped; invalid UTF-8 as U+FFFD).
func appendJSONString(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if b := s[i]; b < utf8.RuneSelf {
			if b >= 0x20 && b != '"' && b != '\\' && b != '<' && b != '>' && b != '&' {
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

// nextElement returns the next raw element of a JSON array that validJSON has accepted
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
	if len(doc) == 0 || !validJSON(doc) {
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

// maxNesting is encoding/json's limit of nested arrays and objects; json.Valid refuses a
// deeper document, and so does validJSON.
const maxNesting = 10000

// validJSON reports whether data is exactly one JSON value with optional whitespace
// around it, with json.Valid's answer for every input (RFC 8259; bytes that are not
// UTF-8 are accepted inside strings, as encoding/json accepts them; nesting as deep as
// encoding/json allows). It checks every message of the MCP door and every speak body:
// json.Valid's state machine makes a function call per byte and was the largest part of
// decoding a tools/call; this is one pass of plain loops. FuzzValidJSON holds the two
// equal.
func validJSON(data []byte) bool {
	i, ok := validValue(data, skipSpaceAt(data, 0), 0)
	return ok && skipSpaceAt(data, i) == len(data)
}

// skipSpaceAt returns the index of the first byte at or after i that is not JSON
// whitespace.
func skipSpaceAt(d []byte, i int) int {
	for i < len(d) && (d[i] == ' ' || d[i] == '\n' || d[i] == '\r' || d[i] == '\t') {
		i++
	}
	return i
}

// validValue checks the value starting at d[i] (depth enclosing arrays and objects) and
// returns the index after it.
func validValue(d []byte, i, depth int) (int, bool) {
	if i >= len(d) {
		return i, false
	}
	switch c := d[i]; c {
	case '{', '[':
		if depth++; depth > maxNesting {
			return i, false
		}
		end := byte('}')
		if c == '[' {
			end = ']'
		}
		i = skipSpaceAt(d, i+1)
		if i < len(d) && d[i] == end {
			return i + 1, true
		}
		for {
			var ok bool
			if c == '{' {
				if i >= len(d) || d[i] != '"' {
					return i, false
				}
				if i, ok = validString(d, i); !ok {
					return i, false
				}
				if i = skipSpaceAt(d, i); i >= len(d) || d[i] != ':' {
					return i, false
				}
				i = skipSpaceAt(d, i+1)
			}
			if i, ok = validValue(d, i, depth); !ok {
				return i, false
			}
			if i = skipSpaceAt(d, i); i >= len(d) {
				return i, false
			}
			switch d[i] {
			case end:
				return i + 1, true
			case ',':
				i = skipSpaceAt(d, i+1)
			default:
				return i, false
			}
		}
	case '"':
		return validString(d, i)
	case 't':
		return validLiteral(d, i, "true")
	case 'f':
		return validLiteral(d, i, "false")
	case 'n':
		return validLiteral(d, i, "null")
	}
	return validNumber(d, i)
}

// validString checks the string starting at the quote d[i] and returns the index after
// its closing quote.
func validString(d []byte, i int) (int, bool) {
	for i++; i < len(d); i++ {
		switch c := d[i]; {
		case c == '"':
			return i + 1, true
		case c < 0x20:
			return i, false
		case c == '\\':
			if i++; i >= len(d) {
				return i, false
			}
			switch d[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if i+4 >= len(d) {
					return i, false
				}
				for _, h := range d[i+1 : i+5] {
					if !isHex(h) {
						return i, false
					}
				}
				i += 4
			default:
				return i, false
			}
		}
	}
	return i, false
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// validLiteral checks that word starts at d[i].
func validLiteral(d []byte, i int, word string) (int, bool) {
	if len(d)-i < len(word) || string(d[i:i+len(word)]) != word {
		return i, false
	}
	return i + len(word), true
}

// validNumber checks the number starting at d[i]: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
func validNumber(d []byte, i int) (int, bool) {
	if i < len(d) && d[i] == '-' {
		i++
	}
	switch {
	case i < len(d) && d[i] == '0':
		i++
	case i < len(d) && '1' <= d[i] && d[i] <= '9':
		i = skipDigits(d, i+1)
	default:
		return i, false
	}
	if i < len(d) && d[i] == '.' {
		j := skipDigits(d, i+1)
		if j == i+1 {
			return j, false
		}
		i = j
	}
	if i < len(d) && (d[i] == 'e' || d[i] == 'E') {
		i++
		if i < len(d) && (d[i] == '+' || d[i] == '-') {
			i++
		}
		j := skipDigits(d, i)
		if j == i {
			return j, false
		}
		i = j
	}
	return i, true
}

func skipDigits(d []byte, i int) int {
	for i < len(d) && '0' <= d[i] && d[i] <= '9' {
		i++
	}
	return i
}
