package hostsetup

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// object is a JSON object that keeps its keys in the order of the file: a settings file
// edited by talk setup must read as the user wrote it, with talkd's entries added at the
// end, not re-sorted. Values are *object, []any, json.Number, string, bool or nil.
type object struct {
	keys []string
	vals map[string]any
}

func newObject() *object { return &object{vals: map[string]any{}} }

func (o *object) get(key string) (any, bool) {
	v, ok := o.vals[key]
	return v, ok
}

// set replaces the value of key in place, or appends key.
func (o *object) set(key string, v any) {
	if _, ok := o.vals[key]; !ok {
		o.keys = append(o.keys, key)
	}
	o.vals[key] = v
}

func (o *object) del(key string) {
	if _, ok := o.vals[key]; !ok {
		return
	}
	delete(o.vals, key)
	for i, k := range o.keys {
		if k == key {
			o.keys = append(o.keys[:i], o.keys[i+1:]...)
			break
		}
	}
}

// child returns the object under key, creating it when absent. A key holding something
// else is an error: the file is not what the host documents, and talk setup must not
// guess.
func (o *object) child(key, where string) (*object, error) {
	v, ok := o.vals[key]
	if !ok {
		c := newObject()
		o.set(key, c)
		return c, nil
	}
	c, ok := v.(*object)
	if !ok {
		return nil, fmt.Errorf("%s%q is not a JSON object", where, key)
	}
	return c, nil
}

// parseObject reads a JSON document whose top level is an object. Empty input (a file
// that is not there yet) is an empty object.
func parseObject(raw []byte) (*object, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return newObject(), nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	v, err := parseValue(dec)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("text after the JSON document")
	}
	o, ok := v.(*object)
	if !ok {
		return nil, errors.New("the top level is not a JSON object")
	}
	return o, nil
}

func parseValue(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			o := newObject()
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				key, _ := kt.(string)
				v, err := parseValue(dec)
				if err != nil {
					return nil, err
				}
				o.set(key, v) // a repeated key keeps its first place and its last value, as JSON.parse
			}
			_, err := dec.Token()
			return o, err
		case '[':
			arr := []any{}
			for dec.More() {
				v, err := parseValue(dec)
				if err != nil {
					return nil, err
				}
				arr = append(arr, v)
			}
			_, err := dec.Token()
			return arr, err
		}
		return nil, fmt.Errorf("unexpected %v", t)
	default:
		return t, nil
	}
}

// encode writes v as JSON indented by two spaces (the hosts' own style), with a final
// line break and without HTML escaping (a command with & or > stays readable).
func encode(v any) []byte {
	var b bytes.Buffer
	writeValue(&b, v, 0)
	b.WriteByte('\n')
	return b.Bytes()
}

func writeValue(b *bytes.Buffer, v any, depth int) {
	indent := strings.Repeat("  ", depth+1)
	switch t := v.(type) {
	case *object:
		if len(t.keys) == 0 {
			b.WriteString("{}")
			return
		}
		b.WriteString("{\n")
		for i, k := range t.keys {
			b.WriteString(indent)
			writeString(b, k)
			b.WriteString(": ")
			writeValue(b, t.vals[k], depth+1)
			if i < len(t.keys)-1 {
				b.WriteByte(',')
			}
			b.WriteByte('\n')
		}
		b.WriteString(strings.Repeat("  ", depth) + "}")
	case []any:
		if len(t) == 0 {
			b.WriteString("[]")
			return
		}
		b.WriteString("[\n")
		for i, e := range t {
			b.WriteString(indent)
			writeValue(b, e, depth+1)
			if i < len(t)-1 {
				b.WriteByte(',')
			}
			b.WriteByte('\n')
		}
		b.WriteString(strings.Repeat("  ", depth) + "]")
	case string:
		writeString(b, t)
	case json.Number:
		b.WriteString(t.String())
	case int:
		fmt.Fprintf(b, "%d", t)
	case bool:
		fmt.Fprintf(b, "%t", t)
	case nil:
		b.WriteString("null")
	default:
		panic(fmt.Sprintf("hostsetup: cannot encode %T", v))
	}
}

func writeString(b *bytes.Buffer, s string) {
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	b.Truncate(b.Len() - 1) // Encode's line break
}

// equal reports whether two parsed values are the same JSON (key order ignored).
func equal(a, b any) bool {
	switch x := a.(type) {
	case *object:
		y, ok := b.(*object)
		if !ok || len(x.keys) != len(y.keys) {
			return false
		}
		for _, k := range x.keys {
			yv, ok := y.vals[k]
			if !ok || !equal(x.vals[k], yv) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !equal(x[i], y[i]) {
				return false
			}
		}
		return true
	case int:
		return fmt.Sprint(x) == fmt.Sprint(b)
	case json.Number:
		return fmt.Sprint(x) == fmt.Sprint(b)
	default:
		return a == b
	}
}
