package werkbaum

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/dop251/goja"
)

// This file writes the node records of an inspect view in Go, from the script's own data.
//
// Why: in goja a node record is 22 values, and building them as objects (or rows) and
// serialising them with JSON.stringify cost about a third of an inspect (13 + 14 ms of a
// 2,000-node plan, 5 of 23 ms for werkbaum.werkbaum). Reading the same values straight from
// the script's node objects and per-node arrays costs a few Go map lookups each. Every value
// is computed by the scripts (js/55_inspect.js inspectParts): Go only copies it into the
// record, and TestHostRecordsEqualTheScriptsRecords compares the result with the script's
// own records (inspect) byte for byte over the examples and generated plans.

var errParts = errors.New("malformed inspect parts")

// partsReader reads the parts object of Werkbaum.callParts.
type partsReader struct {
	vm  *goja.Runtime
	err error
}

func (p *partsReader) fail(format string, args ...any) {
	if p.err == nil {
		p.err = fmt.Errorf("%w: "+format, append([]any{errParts}, args...)...)
	}
}

// object returns o[key] as an object (nil and an error when it is none).
func (p *partsReader) object(o *goja.Object, key string) *goja.Object {
	v := o.Get(key)
	if obj, ok := v.(*goja.Object); ok {
		return obj
	}
	p.fail("%s is not an object", key)
	return nil
}

// values exports the JavaScript array v (plain or typed) as its element values.
func (p *partsReader) values(v goja.Value, what string) []goja.Value {
	var out []goja.Value
	if v == nil || goja.IsUndefined(v) || goja.IsNull(v) {
		p.fail("%s is missing", what)
		return nil
	}
	if err := p.vm.ExportTo(v, &out); err != nil {
		p.fail("%s: %v", what, err)
		return nil
	}
	return out
}

// writeInspectParts returns the inspect view's JSON: the parts' JSON with the records of the
// nodes [lo, hi) written into its empty node list. The records equal js/55_inspect.js
// inspectNode's, key for key and value for value.
func writeInspectParts(vm *goja.Runtime, parts *goja.Object) ([]byte, error) {
	p := &partsReader{vm: vm}
	view := parts.Get("json").String()
	if !parts.Get("tree").ToBoolean() {
		return []byte(view), nil
	}
	const prefix = `{"nodes":[]`
	if len(view) < len(prefix) || view[:len(prefix)] != prefix {
		return nil, fmt.Errorf("%w: the view does not start with an empty node list", errParts)
	}
	lo := int(parts.Get("lo").ToInteger())
	hi := int(parts.Get("hi").ToInteger())
	all := p.values(parts.Get("all"), "all")
	m := p.object(parts, "m")
	path := p.object(parts, "path")
	if p.err != nil {
		return nil, p.err
	}
	if lo < 0 || hi < lo || hi > len(all) {
		return nil, fmt.Errorf("%w: node range [%d, %d) of %d nodes", errParts, lo, hi, len(all))
	}
	rankKeys := p.values(parts.Get("rankKeys"), "rankKeys")
	sizes := p.values(parts.Get("sizes"), "sizes")
	inView := p.values(m.Get("inView"), "m.inView")
	eff := p.values(m.Get("eff"), "m.eff")
	assumed := p.values(m.Get("assumed"), "m.assumed")
	taiga := p.values(m.Get("taiga"), "m.taiga")
	ticket := p.values(m.Get("ticket"), "m.ticket")
	inSet := p.values(path.Get("inSet"), "path.inSet")
	station := p.values(path.Get("station"), "path.station")
	if p.err != nil {
		return nil, p.err
	}
	for _, col := range [][]goja.Value{inView, eff, assumed, taiga, ticket, inSet, station} {
		if len(col) < hi {
			return nil, fmt.Errorf("%w: a per-node array has %d entries, %d nodes are listed", errParts, len(col), hi)
		}
	}

	out := make([]byte, 0, len(view)+(hi-lo)*400)
	out = append(out, `{"nodes":[`...)
	lines := make([]int64, hi-lo) // lines of the listed nodes, for their children's parentLine
	for i := lo; i < hi; i++ {
		n, ok := all[i].(*goja.Object)
		if !ok {
			return nil, fmt.Errorf("%w: node %d is not an object", errParts, i)
		}
		if i > lo {
			out = append(out, ',')
		}
		line := n.Get("line").ToInteger()
		lines[i-lo] = line
		out = append(out, `{"line":`...)
		out = strconv.AppendInt(out, line, 10)

		out = append(out, `,"parentLine":`...)
		if parent := int(n.Get("parent").ToInteger()); parent < 0 {
			out = append(out, "null"...)
		} else if parent >= lo && parent < i {
			out = strconv.AppendInt(out, lines[parent-lo], 10)
		} else if parent < len(all) {
			po, ok := all[parent].(*goja.Object)
			if !ok {
				return nil, fmt.Errorf("%w: node %d is not an object", errParts, parent)
			}
			out = strconv.AppendInt(out, po.Get("line").ToInteger(), 10)
		} else {
			return nil, fmt.Errorf("%w: node %d has parent %d", errParts, i, parent)
		}
		out = append(out, `,"depth":`...)
		out = appendValue(out, n.Get("depth"))
		out = append(out, `,"id":`...)
		out = appendValue(out, n.Get("id"))
		out = append(out, `,"label":`...)
		out = appendValue(out, n.Get("label"))
		out = append(out, `,"gate":`...)
		out = appendValue(out, n.Get("type"))
		out = append(out, `,"optional":`...)
		out = appendValue(out, n.Get("optional"))

		// status and effectiveStatus (inspectNode: the effective rank's key when it is below
		// the node's own rank, else the node's own status; null out of view).
		status := n.Get("status")
		var statusKey goja.Value = goja.Null()
		var rank int64
		if so, ok := status.(*goja.Object); ok {
			statusKey = so.Get("key")
			rank = so.Get("rank").ToInteger()
		}
		out = append(out, `,"status":`...)
		out = appendValue(out, statusKey)
		visible := isTrue(inView[i])
		out = append(out, `,"effectiveStatus":`...)
		if !visible {
			out = append(out, "null"...)
		} else if e := eff[i].ToInteger(); e < rank {
			if e < 0 || e >= int64(len(rankKeys)) {
				return nil, fmt.Errorf("%w: node %d has effective rank %d", errParts, i, e)
			}
			out = appendValue(out, rankKeys[e])
		} else {
			out = appendValue(out, statusKey)
		}
		out = append(out, `,"size":`...)
		out = appendValue(out, n.Get("size"))
		out = append(out, `,"assumedSize":`...)
		if !visible {
			out = append(out, "null"...)
		} else if a := assumed[i].ToInteger(); a >= 0 && a < int64(len(sizes)) {
			out = appendValue(out, sizes[a])
		} else {
			out = append(out, "null"...) // SIZES[a] is undefined, which JSON writes as null
		}
		out = append(out, `,"people":`...)
		out = p.appendList(out, n.Get("tags"))
		out = append(out, `,"keywords":`...)
		out = p.appendList(out, n.Get("marks"))
		out = append(out, `,"deps":`...)
		out = p.appendList(out, n.Get("deps"))
		out = append(out, `,"url":`...)
		out = appendValue(out, n.Get("url"))
		out = append(out, `,"desc":`...)
		out = appendValue(out, n.Get("desc"))
		out = append(out, `,"taigaSlug":`...)
		out = appendValue(out, taiga[i])
		out = append(out, `,"ticketRef":`...)
		out = appendValue(out, ticket[i])
		out = append(out, `,"focus":`...)
		out = appendValue(out, n.Get("focus"))
		out = append(out, `,"inView":`...)
		out = strconv.AppendBool(out, visible)
		out = append(out, `,"needed":`...)
		out = strconv.AppendBool(out, visible && isOne(inSet[i]))
		out = append(out, `,"station":`...)
		out = strconv.AppendBool(out, visible && isOne(station[i]))
		out = append(out, '}')
		if p.err != nil {
			return nil, p.err
		}
	}
	out = append(out, ']')
	return append(out, view[len(prefix):]...), nil
}

// appendList appends a list of strings (tags, marks, deps) as a JSON array.
func (p *partsReader) appendList(out []byte, v goja.Value) []byte {
	items := p.values(v, "a node list")
	out = append(out, '[')
	for k, item := range items {
		if k > 0 {
			out = append(out, ',')
		}
		out = appendValue(out, item)
	}
	return append(out, ']')
}

// isTrue is JavaScript's v === true.
func isTrue(v goja.Value) bool {
	b, ok := v.Export().(bool)
	return ok && b
}

// isOne is JavaScript's v === 1.
func isOne(v goja.Value) bool {
	switch x := v.Export().(type) {
	case int64:
		return x == 1
	case float64:
		return x == 1
	}
	return false
}

// appendValue appends a primitive value as JSON.stringify writes it: null for null and
// undefined, numbers, booleans and strings. Objects do not occur among the fields copied
// here; they would be written as null, and the equality test would notice.
func appendValue(out []byte, v goja.Value) []byte {
	if v == nil {
		return append(out, "null"...)
	}
	switch x := v.Export().(type) {
	case string:
		return appendJSONString(out, x)
	case bool:
		return strconv.AppendBool(out, x)
	case int64:
		return strconv.AppendInt(out, x, 10)
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return append(out, "null"...)
		}
		if x == math.Trunc(x) && math.Abs(x) < 1e21 {
			return strconv.AppendFloat(out, x, 'f', -1, 64)
		}
		return append(out, v.String()...) // JavaScript's own number formatting
	}
	return append(out, "null"...)
}

// appendJSONString quotes s exactly like goja's JSON.stringify: `"` and `\` escaped, the
// control characters as \b \t \n \f \r or \u00xx, everything else (also U+2028/U+2029 and
// <, >, &) written as is.
func appendJSONString(out []byte, s string) []byte {
	const hex = "0123456789abcdef"
	out = append(out, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= utf8.RuneSelf {
			i++
			continue
		}
		if c >= 0x20 && c != '"' && c != '\\' {
			i++
			continue
		}
		out = append(out, s[start:i]...)
		switch c {
		case '"', '\\':
			out = append(out, '\\', c)
		case '\b':
			out = append(out, '\\', 'b')
		case '\t':
			out = append(out, '\\', 't')
		case '\n':
			out = append(out, '\\', 'n')
		case '\f':
			out = append(out, '\\', 'f')
		case '\r':
			out = append(out, '\\', 'r')
		default:
			out = append(out, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		}
		i++
		start = i
	}
	out = append(out, s[start:]...)
	return append(out, '"')
}
