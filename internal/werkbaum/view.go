package werkbaum

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"reflect"
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

// array returns o[key] as an array object and its length. Its entries are read one by one
// with element: exporting the array of nodes as a Go slice went through reflection for
// every entry and cost 1.6 ms for 2,000 nodes.
func (p *partsReader) array(o *goja.Object, key string) (*goja.Object, int) {
	a, ok := o.Get(key).(*goja.Object)
	if !ok {
		p.fail("%s is not an array", key)
		return nil, 0
	}
	return a, int(a.Get("length").ToInteger())
}

// element returns a[i].
func element(a *goja.Object, i int) goja.Value {
	return a.Get(strconv.Itoa(i))
}

// column is a per-node array of the model (plain or typed), exported once.
type column struct {
	plain []any     // a plain array: int64, float64, bool, string or nil per entry
	nums  []float64 // a typed array's numbers
	n     int
}

// column exports a per-node array: Export gives a plain array's values and a typed array's
// Go slice without running any script; a typed array's numbers are converted once here,
// not per read.
func (p *partsReader) column(v goja.Value, what string) column {
	if v == nil || goja.IsUndefined(v) || goja.IsNull(v) {
		p.fail("%s is missing", what)
		return column{}
	}
	exported := v.Export()
	if x, ok := exported.([]any); ok {
		return column{plain: x, n: len(x)}
	}
	rv := reflect.ValueOf(exported)
	if rv.Kind() != reflect.Slice {
		p.fail("%s is not an array", what)
		return column{}
	}
	nums := make([]float64, rv.Len())
	for i := range nums {
		switch e := rv.Index(i); e.Kind() {
		case reflect.Float32, reflect.Float64:
			nums[i] = e.Float()
		case reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			nums[i] = float64(e.Uint())
		case reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			nums[i] = float64(e.Int())
		default:
			p.fail("%s is not an array of numbers", what)
			return column{}
		}
	}
	return column{nums: nums, n: len(nums)}
}

// at returns entry i as a Go value (numbers of typed arrays as float64).
func (c column) at(i int) any {
	if c.plain != nil {
		return c.plain[i]
	}
	return c.nums[i]
}

// number returns entry i as a number (ok false when it is none).
func (c column) number(i int) (float64, bool) {
	switch x := c.at(i).(type) {
	case int64:
		return float64(x), true
	case float64:
		return x, true
	}
	return 0, false
}

// isTrue is JavaScript's c[i] === true.
func (c column) isTrue(i int) bool {
	b, ok := c.at(i).(bool)
	return ok && b
}

// isOne is JavaScript's c[i] === 1.
func (c column) isOne(i int) bool {
	x, ok := c.number(i)
	return ok && x == 1
}

// statusFields are the fields of a status object the records use.
type statusFields struct {
	key  any // exported: a string, or nil
	rank int64
}

// writeInspectParts returns the inspect view's JSON: the parts' JSON with the records of the
// nodes [lo, hi) written into its empty node list. The records equal the script's own
// (js/55_inspect.js inspect), key for key and value for value. With outlined, it also
// returns the view's outline (outline.go): the nodes' from the values it writes, the
// warnings' and the path's decoded from the parts' JSON, which holds everything but the
// node records.
func writeInspectParts(parts *goja.Object, outlined bool) ([]byte, *Outline, error) {
	p := &partsReader{}
	view := parts.Get("json").String()
	if !parts.Get("tree").ToBoolean() {
		if !outlined {
			return []byte(view), nil, nil
		}
		o, err := DecodeOutline([]byte(view))
		if err != nil {
			return nil, nil, fmt.Errorf("%w: %v", errParts, err)
		}
		return []byte(view), o, nil
	}
	const prefix = `{"nodes":[]`
	if len(view) < len(prefix) || view[:len(prefix)] != prefix {
		return nil, nil, fmt.Errorf("%w: the view does not start with an empty node list", errParts)
	}
	lo := int(parts.Get("lo").ToInteger())
	hi := int(parts.Get("hi").ToInteger())
	all, count := p.array(parts, "all")
	m := p.object(parts, "m")
	path := p.object(parts, "path")
	if p.err != nil {
		return nil, nil, p.err
	}
	if lo < 0 || hi < lo || hi > count {
		return nil, nil, fmt.Errorf("%w: node range [%d, %d) of %d nodes", errParts, lo, hi, count)
	}
	rankKeys := p.column(parts.Get("rankKeys"), "rankKeys")
	sizes := p.column(parts.Get("sizes"), "sizes")
	inView := p.column(m.Get("inView"), "m.inView")
	eff := p.column(m.Get("eff"), "m.eff")
	assumed := p.column(m.Get("assumed"), "m.assumed")
	taiga := p.column(m.Get("taiga"), "m.taiga")
	ticket := p.column(m.Get("ticket"), "m.ticket")
	inSet := p.column(path.Get("inSet"), "path.inSet")
	station := p.column(path.Get("station"), "path.station")
	if p.err != nil {
		return nil, nil, p.err
	}
	for _, col := range []column{inView, eff, assumed, taiga, ticket, inSet, station} {
		if col.n < hi {
			return nil, nil, fmt.Errorf("%w: a per-node array has %d entries, %d nodes are listed", errParts, col.n, hi)
		}
	}

	out := make([]byte, 0, len(view)+(hi-lo)*400)
	out = append(out, `{"nodes":[`...)
	lines := make([]int64, hi-lo) // lines of the listed nodes, for their children's parentLine
	// The nodes share the scripts' few status objects (05_text.js STATUS_BY_CODE): their
	// fields are read once per call, not twice per node.
	statuses := make(map[*goja.Object]statusFields, 8)
	var nodes []OutlineNode
	if outlined {
		nodes = make([]OutlineNode, 0, hi-lo)
	}
	for i := lo; i < hi; i++ {
		n, ok := element(all, i).(*goja.Object)
		if !ok {
			return nil, nil, fmt.Errorf("%w: node %d is not an object", errParts, i)
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
		} else if parent < count {
			po, ok := element(all, parent).(*goja.Object)
			if !ok {
				return nil, nil, fmt.Errorf("%w: node %d is not an object", errParts, parent)
			}
			out = strconv.AppendInt(out, po.Get("line").ToInteger(), 10)
		} else {
			return nil, nil, fmt.Errorf("%w: node %d has parent %d", errParts, i, parent)
		}
		depth, id, label := export(n.Get("depth")), export(n.Get("id")), export(n.Get("label"))
		out = append(out, `,"depth":`...)
		out = appendAny(out, depth)
		out = append(out, `,"id":`...)
		out = appendAny(out, id)
		out = append(out, `,"label":`...)
		out = appendAny(out, label)
		out = append(out, `,"gate":`...)
		out = appendValue(out, n.Get("type"))
		out = append(out, `,"optional":`...)
		out = appendValue(out, n.Get("optional"))

		// status and effectiveStatus (js/55_inspect.js: the effective rank's key when it is below
		// the node's own rank, else the node's own status; null out of view).
		status := n.Get("status")
		var statusKey any
		var rank int64
		if so, ok := status.(*goja.Object); ok {
			st, seen := statuses[so]
			if !seen {
				st = statusFields{export(so.Get("key")), so.Get("rank").ToInteger()}
				statuses[so] = st
			}
			statusKey, rank = st.key, st.rank
		}
		out = append(out, `,"status":`...)
		out = appendAny(out, statusKey)
		visible := inView.isTrue(i)
		out = append(out, `,"effectiveStatus":`...)
		var effective any // null out of view
		if !visible {
			out = append(out, "null"...)
		} else if e, ok := eff.number(i); !ok {
			return nil, nil, fmt.Errorf("%w: node %d has no effective rank", errParts, i)
		} else if e < float64(rank) {
			k := int(e)
			if float64(k) != e || k < 0 || k >= rankKeys.n {
				return nil, nil, fmt.Errorf("%w: node %d has effective rank %v", errParts, i, e)
			}
			effective = rankKeys.at(k)
			out = appendAny(out, effective)
		} else {
			effective = statusKey
			out = appendAny(out, effective)
		}
		size := export(n.Get("size"))
		out = append(out, `,"size":`...)
		out = appendAny(out, size)
		out = append(out, `,"assumedSize":`...)
		a, ok := assumed.number(i)
		if k := int(a); visible && ok && float64(k) == a && k >= 0 && k < sizes.n {
			out = appendAny(out, sizes.at(k))
		} else {
			out = append(out, "null"...) // out of view, or SIZES[a] is undefined: JSON writes null
		}
		var people, deps stringList
		out = append(out, `,"people":`...)
		out, people = p.appendList(out, n.Get("tags"), outlined)
		out = append(out, `,"keywords":`...)
		out, _ = p.appendList(out, n.Get("marks"), false)
		out = append(out, `,"deps":`...)
		out, deps = p.appendList(out, n.Get("deps"), outlined)
		out = append(out, `,"url":`...)
		out = appendValue(out, n.Get("url"))
		out = append(out, `,"desc":`...)
		out = appendValue(out, n.Get("desc"))
		out = append(out, `,"taigaSlug":`...)
		out = appendAny(out, taiga.at(i))
		out = append(out, `,"ticketRef":`...)
		out = appendAny(out, ticket.at(i))
		out = append(out, `,"focus":`...)
		out = appendValue(out, n.Get("focus"))
		out = append(out, `,"inView":`...)
		out = strconv.AppendBool(out, visible)
		out = append(out, `,"needed":`...)
		out = strconv.AppendBool(out, visible && inSet.isOne(i))
		out = append(out, `,"station":`...)
		out = strconv.AppendBool(out, visible && station.isOne(i))
		out = append(out, '}')
		if outlined {
			nodes = append(nodes, OutlineNode{Line: int(line), Depth: p.outlineInt(depth, "depth"), ID: p.outlineString(id, "id"),
				Label: p.outlineString(label, "label"), Status: p.outlineString(statusKey, "status"),
				EffectiveStatus: p.outlineString(effective, "effectiveStatus"), Size: p.outlineString(size, "size"),
				People: p.outlineList(people, "people"), Deps: p.outlineList(deps, "deps")})
		}
		if p.err != nil {
			return nil, nil, p.err
		}
	}
	out = append(out, ']')
	tail := view[len(prefix):]
	out = append(out, tail...)
	if !outlined {
		return out, nil, nil
	}
	// The warnings and the path: the parts' JSON is the view without its node records.
	o, err := DecodeOutline([]byte(view))
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %v", errParts, err)
	}
	o.Nodes = nodes
	return out, o, nil
}

// The outline's values are what decoding the record's JSON gives (DecodeOutline): null is
// a string's and a number's zero value, and a list decodes to its strings (an empty one
// to an empty, non-nil list). A value decoding would refuse fails the call, as decoding the
// view would have failed the outline before.

// noStrings is the outline's empty list, shared by every node without people or deps.
var noStrings = []string{}

// outlineString is x as a string field of the outline.
func (p *partsReader) outlineString(x any, what string) string {
	switch x := x.(type) {
	case string:
		return x
	case nil:
		return ""
	}
	p.fail("a node's %s is %T, not a string", what, x)
	return ""
}

// outlineInt is x as an int field of the outline.
func (p *partsReader) outlineInt(x any, what string) int {
	switch x := x.(type) {
	case int64:
		return int(x)
	case nil:
		return 0
	case float64:
		if k := int(x); float64(k) == x {
			return k
		}
	}
	p.fail("a node's %s is %v, not an integer", what, x)
	return 0
}

// outlineList is a list of appendList as a list field of the outline.
func (p *partsReader) outlineList(l stringList, what string) []string {
	if !l.strings {
		p.fail("a node's %s holds a value that is no string", what)
	}
	if len(l.s) == 0 {
		return noStrings
	}
	return l.s
}

// stringList is a node list's entries as strings, for the outline; strings is false when
// an entry was neither a string nor null.
type stringList struct {
	s       []string
	strings bool
}

// appendList appends a list of strings (tags, marks, deps) as a JSON array and, with keep,
// returns its entries. Most nodes share the parser's one empty list, so the length is read
// first.
func (p *partsReader) appendList(out []byte, v goja.Value, keep bool) ([]byte, stringList) {
	o, ok := v.(*goja.Object)
	if !ok {
		p.fail("a node list is not an array")
		return out, stringList{}
	}
	n := int(o.Get("length").ToInteger())
	l := stringList{strings: true}
	if keep && n > 0 {
		l.s = make([]string, n)
	}
	out = append(out, '[')
	for k := 0; k < n; k++ {
		if k > 0 {
			out = append(out, ',')
		}
		x := export(element(o, k))
		out = appendAny(out, x)
		if !keep {
			continue
		}
		switch x := x.(type) {
		case string:
			l.s[k] = x
		case nil:
		default:
			l.strings = false
		}
	}
	return append(out, ']'), l
}

// export is v's Go value (nil for a missing value).
func export(v goja.Value) any {
	if v == nil {
		return nil
	}
	return v.Export()
}

// appendValue appends a primitive value as JSON.stringify writes it.
func appendValue(out []byte, v goja.Value) []byte {
	if v == nil {
		return append(out, "null"...)
	}
	return appendAny(out, v.Export())
}

// appendAny appends an exported primitive as JSON.stringify writes it: null for null and
// undefined, numbers, booleans and strings. Objects do not occur among the values copied
// here; they would be written as null, and the equality test would notice.
func appendAny(out []byte, x any) []byte {
	switch x := x.(type) {
	case string:
		return appendJSONString(out, x)
	case bool:
		return strconv.AppendBool(out, x)
	case int64:
		return strconv.AppendInt(out, x, 10)
	case float64:
		return appendJSNumber(out, x)
	}
	return append(out, "null"...)
}

// appendJSNumber writes x as JSON.stringify does (Number::toString): the shortest digits that
// round-trip, in fixed notation from 1e-6 to below 1e21, else as d.ddde±x; null for NaN and
// the infinities.
func appendJSNumber(out []byte, x float64) []byte {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return append(out, "null"...)
	}
	if x == 0 {
		return append(out, '0') // also -0
	}
	if a := math.Abs(x); a >= 1e-6 && a < 1e21 {
		return strconv.AppendFloat(out, x, 'f', -1, 64)
	}
	e := strconv.AppendFloat(nil, x, 'e', -1, 64) // e.g. 1e-07, 1.5e+22
	i := bytes.IndexByte(e, 'e')
	out = append(out, e[:i+2]...)                       // mantissa, 'e' and the sign
	return append(out, bytes.TrimLeft(e[i+2:], "0")...) // JavaScript writes no leading zeros
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
