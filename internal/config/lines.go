package config

import (
	"strconv"
	"strings"
)

// lineIndex maps key paths of a TOML file to the line that sets them, so that errors found
// after decoding (unknown keys, bad values) can still point at a line. The TOML decoder
// keeps its positions private, hence this small scanner of its own: it understands table
// headers, arrays of tables, dotted and quoted keys and skips multi-line strings. It is
// best-effort by design; when it finds nothing, an error simply carries no line.
//
// Paths are recorded twice: with array-of-table indexes ("plans[1].path") and without
// ("plans.path", first occurrence), the form the decoder's metadata uses.
type lineIndex map[string]int

func indexLines(src string) lineIndex {
	idx := lineIndex{}
	counts := map[string]int{} // occurrences of each [[array]] header
	var header, headerIdx string
	inMulti := "" // the delimiter of the multi-line string being skipped
	for n, raw := range strings.Split(src, "\n") {
		line := strings.TrimSpace(raw)
		if inMulti != "" {
			if strings.Count(line, inMulti)%2 == 1 {
				inMulti = ""
			}
			continue
		}
		if line == "" || line[0] == '#' {
			continue
		}
		lineNo := n + 1
		if strings.HasPrefix(line, "[[") {
			if segs, ok := parseKey(strings.TrimPrefix(line, "[["), "]]"); ok {
				header = strings.Join(segs, ".")
				i := counts[header]
				counts[header]++
				headerIdx = header + "[" + strconv.Itoa(i) + "]"
				idx.add(header, lineNo)
				idx.add(headerIdx, lineNo)
			}
			continue
		}
		if line[0] == '[' {
			if segs, ok := parseKey(line[1:], "]"); ok {
				header = strings.Join(segs, ".")
				headerIdx = header
				idx.add(header, lineNo)
			}
			continue
		}
		segs, ok := parseKey(line, "=")
		if !ok {
			continue
		}
		key := strings.Join(segs, ".")
		if header != "" {
			idx.add(header+"."+key, lineNo)
			idx.add(headerIdx+"."+key, lineNo)
		} else {
			idx.add(key, lineNo)
		}
		for _, d := range []string{`"""`, `'''`} {
			if strings.Count(line, d)%2 == 1 {
				inMulti = d
				break
			}
		}
	}
	return idx
}

func (idx lineIndex) add(key string, line int) {
	if _, seen := idx[key]; !seen {
		idx[key] = line
	}
}

// lookup finds the line of a key path, falling back to its parents: the line of
// "server.allowed_origins[2]" is the line of "server.allowed_origins".
func (idx lineIndex) lookup(key string) int {
	for key != "" {
		if n, ok := idx[key]; ok {
			return n
		}
		cut := strings.LastIndexAny(key, ".[")
		if cut < 0 {
			return 0
		}
		key = key[:cut]
	}
	return 0
}

// parseKey reads a (dotted, possibly quoted) TOML key at the start of s that is followed,
// after optional blanks, by the terminator ("=", "]" or "]]").
func parseKey(s, term string) ([]string, bool) {
	var segs []string
	for {
		s = strings.TrimLeft(s, " \t")
		if s == "" {
			return nil, false
		}
		var seg string
		switch s[0] {
		case '"', '\'':
			end := strings.IndexByte(s[1:], s[0])
			if end < 0 {
				return nil, false
			}
			seg, s = s[1:1+end], s[2+end:]
		default:
			i := 0
			for i < len(s) && isBareKeyByte(s[i]) {
				i++
			}
			if i == 0 {
				return nil, false
			}
			seg, s = s[:i], s[i:]
		}
		segs = append(segs, seg)
		s = strings.TrimLeft(s, " \t")
		switch {
		case strings.HasPrefix(s, "."):
			s = s[1:]
		case strings.HasPrefix(s, term):
			return segs, true
		default:
			return nil, false
		}
	}
}

func isBareKeyByte(b byte) bool {
	return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || b == '_' || b == '-'
}
