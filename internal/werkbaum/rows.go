package werkbaum

import (
	"bytes"
	"errors"
)

// inspectRowFields are the columns of a node row of the script's inspectRows method
// (js/55_inspect.js ROW_FIELDS), in order. The script builds the inspect view with node
// rows because goja makes an array literal in one allocation and serialises it in half
// the time of an object; rowsToRecords then writes the records' JSON in Go.
var inspectRowFields = [...]string{"line", "parentLine", "depth", "id", "label", "gate", "optional", "status",
	"effectiveStatus", "size", "assumedSize", "people", "keywords", "deps", "url", "desc", "taigaSlug",
	"ticketRef", "focus", "inView", "needed", "station"}

// rowKeys holds `"name":` per column, the first with the record's opening brace.
var rowKeys = func() [len(inspectRowFields)][]byte {
	var k [len(inspectRowFields)][]byte
	for i, f := range inspectRowFields {
		p := ","
		if i == 0 {
			p = "{"
		}
		k[i] = []byte(p + `"` + f + `":`)
	}
	return k
}()

var errRows = errors.New("malformed node rows")

// rowsToRecords turns the JSON of inspectRows ({"nodes":[[…],…],…}) into the JSON of
// inspect ({"nodes":[{"line":…},…],…}) byte for byte: every value is copied exactly as
// the script encoded it, only the column names are written. A view without nodes is
// returned unchanged.
func rowsToRecords(raw []byte) ([]byte, error) {
	const prefix = `{"nodes":[`
	if !bytes.HasPrefix(raw, []byte(prefix)) {
		return raw, nil
	}
	out := make([]byte, 0, len(raw)*2)
	out = append(out, prefix...)
	i := len(prefix)
	if i < len(raw) && raw[i] == ']' {
		return append(out, raw[i:]...), nil
	}
	for {
		if i >= len(raw) || raw[i] != '[' {
			return nil, errRows
		}
		i++
		for f := range inspectRowFields {
			if f > 0 {
				if i >= len(raw) || raw[i] != ',' {
					return nil, errRows
				}
				i++
			}
			end := skipJSONValue(raw, i)
			if end <= i {
				return nil, errRows
			}
			out = append(out, rowKeys[f]...)
			out = append(out, raw[i:end]...)
			i = end
		}
		if i >= len(raw) || raw[i] != ']' {
			return nil, errRows
		}
		i++
		out = append(out, '}')
		if i >= len(raw) {
			return nil, errRows
		}
		if raw[i] == ']' {
			break
		}
		if raw[i] != ',' {
			return nil, errRows
		}
		out = append(out, ',')
		i++
	}
	return append(out, raw[i:]...), nil
}

// skipJSONValue returns the end of the compact JSON value (as JSON.stringify writes it:
// no blanks) that starts at raw[i], or i when there is none. Arrays and objects are
// skipped by depth, strings by their closing quote.
func skipJSONValue(raw []byte, i int) int {
	depth := 0
	for j := i; j < len(raw); j++ {
		switch c := raw[j]; c {
		case '"':
			j++
			for j < len(raw) && raw[j] != '"' {
				if raw[j] == '\\' {
					j++
				}
				j++
			}
			if j >= len(raw) {
				return i
			}
			if depth == 0 {
				return j + 1
			}
		case '[', '{':
			depth++
		case ']', '}':
			if depth == 0 {
				return j
			}
			depth--
			if depth == 0 {
				return j + 1
			}
		case ',':
			if depth == 0 {
				return j
			}
		}
	}
	if depth == 0 {
		return len(raw)
	}
	return i
}
