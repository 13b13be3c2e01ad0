package api

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"time"
)

// The JSON Schemas of tools/list are derived from the Go types of each tool's input and
// output, once, when the tool is registered (never per request). One type is then both the
// shape the code builds and the shape hosts validate against: an output field that is not
// in the schema cannot be produced, because the schema is the type.
//
// The rules follow encoding/json, so the schema says what the encoder writes:
//   - struct fields by their json tag; embedded structs are flattened; "-" is skipped;
//   - a field without omitempty/omitzero is required (the encoder always writes it);
//   - strings, booleans, integers, floats, slices (arrays), maps (objects with typed
//     values), time.Time (a date-time string), json.RawMessage and interfaces (any JSON);
//   - a pointer is its element; tagged nullable:"true", or in a result without omitempty
//     (the encoder writes a nil one as null), it is anyOf [element, null];
//   - a slice or map is an array or object, never null: a result must not hold a nil one
//     without omitempty (the write tools turn nil warning lists into []), which the schema
//     test in test/schema_test.go checks on every answer of every tool.
//
// Only portable JSON Schema is emitted: no type arrays ("nullable" is anyOf), no $ref.
//
// Field tags add the annotations hosts show the model: desc (description; inputs only),
// enum (comma-separated), minLength, maxLength, pattern, and default (a JSON value);
// shallow:"true" keeps only a result field's type (shallowSchema); type names
// the JSON type of an interface or raw JSON field, which would otherwise accept anything
// (the Inspector's --strict warns about such schemas).

// schemaMode is whether a schema describes arguments (the decoder refuses unknown fields
// everywhere, so every object is closed) or results (the root object is closed; nested
// objects written by the notation engine stay open to additions).
type schemaMode int

const (
	inputMode schemaMode = iota
	outputMode
)

var (
	timeType = reflect.TypeFor[time.Time]()
	rawType  = reflect.TypeFor[json.RawMessage]()
)

// schemaOf derives the schema of T; the root must be a struct (an MCP schema's root is an
// object).
func schemaOf[T any](mode schemaMode) (map[string]any, error) {
	t := reflect.TypeFor[T]()
	if t.Kind() != reflect.Struct {
		return nil, fmt.Errorf("%s is not a struct: a tool's schema root must be an object", t)
	}
	return deriveSchema(t, mode, true, nil)
}

func deriveSchema(t reflect.Type, mode schemaMode, root bool, seen []reflect.Type) (map[string]any, error) {
	switch {
	case t == timeType:
		return map[string]any{"type": "string", "format": "date-time"}, nil
	case t == rawType:
		return map[string]any{}, nil
	}
	switch t.Kind() {
	case reflect.String:
		return map[string]any{"type": "string"}, nil
	case reflect.Bool:
		return map[string]any{"type": "boolean"}, nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return map[string]any{"type": "integer"}, nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if mode == outputMode {
			return map[string]any{"type": "integer"}, nil // what the server writes needs no bound
		}
		return map[string]any{"type": "integer", "minimum": 0}, nil
	case reflect.Float32, reflect.Float64:
		return map[string]any{"type": "number"}, nil
	case reflect.Interface:
		return map[string]any{}, nil
	case reflect.Pointer:
		return deriveSchema(t.Elem(), mode, root, seen)
	case reflect.Slice, reflect.Array:
		items, err := deriveSchema(t.Elem(), mode, false, seen)
		if err != nil {
			return nil, err
		}
		return map[string]any{"type": "array", "items": items}, nil
	case reflect.Map:
		if t.Key().Kind() != reflect.String {
			return nil, fmt.Errorf("%s: only maps with string keys are JSON objects", t)
		}
		vals, err := deriveSchema(t.Elem(), mode, false, seen)
		if err != nil {
			return nil, err
		}
		return map[string]any{"type": "object", "additionalProperties": vals}, nil
	case reflect.Struct:
		for _, s := range seen {
			if s == t {
				return nil, fmt.Errorf("%s is recursive; declare its schema another way", t)
			}
		}
		return structSchema(t, mode, root, append(seen, t))
	}
	return nil, fmt.Errorf("%s has no JSON Schema", t)
}

func structSchema(t reflect.Type, mode schemaMode, root bool, seen []reflect.Type) (map[string]any, error) {
	props := map[string]any{}
	var required []string
	if err := addFields(t, mode, props, &required, seen); err != nil {
		return nil, err
	}
	s := map[string]any{"type": "object", "properties": props}
	if len(required) > 0 {
		s["required"] = required
	}
	if mode == inputMode || root {
		s["additionalProperties"] = false
	}
	return s, nil
}

func addFields(t reflect.Type, mode schemaMode, props map[string]any, required *[]string, seen []reflect.Type) error {
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			et := f.Type
			if et.Kind() == reflect.Pointer {
				et = et.Elem()
			}
			if et.Kind() == reflect.Struct {
				if err := addFields(et, mode, props, required, seen); err != nil {
					return err
				}
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		optional := strings.Contains(","+opts+",", ",omitempty,") || strings.Contains(","+opts+",", ",omitzero,")
		fs, err := deriveSchema(f.Type, mode, false, seen)
		if err != nil {
			return fmt.Errorf("%s.%s: %w", t, f.Name, err)
		}
		if f.Tag.Get("shallow") == "true" {
			fs = shallowSchema(fs)
		}
		if err := annotate(fs, f, mode); err != nil {
			return fmt.Errorf("%s.%s: %w", t, f.Name, err)
		}
		// A pointer may be null where it says so, and in a result wherever the encoder
		// writes a nil one (no omitempty).
		if f.Type.Kind() == reflect.Pointer && (f.Tag.Get("nullable") == "true" || (mode == outputMode && !optional)) {
			desc := fs["description"]
			delete(fs, "description")
			fs = map[string]any{"anyOf": []any{fs, map[string]any{"type": "null"}}}
			if desc != nil {
				fs["description"] = desc
			}
		}
		props[name] = fs
		if !optional {
			*required = append(*required, name)
		}
	}
	return nil
}

// shallowSchema keeps of s its type and, for an array, its items' type: for result fields
// whose records are documented elsewhere (the guide, detail "full" of werkbaum_inspect),
// whose full schema would cost tools/list hundreds of bytes per tool.
func shallowSchema(s map[string]any) map[string]any {
	t, ok := s["type"]
	if !ok {
		return s
	}
	out := map[string]any{"type": t}
	if items, ok := s["items"].(map[string]any); ok && items["type"] != nil {
		out["items"] = map[string]any{"type": items["type"]}
	}
	return out
}

// annotate applies a field's schema tags to its schema. Output schemas get no
// descriptions: hosts do not show them to the model (they validate with them), yet every
// byte of tools/list is paid for in each request of a session; the desc tags of result
// types stay as documentation beside the code.
func annotate(s map[string]any, f reflect.StructField, mode schemaMode) error {
	if jt := f.Tag.Get("type"); jt != "" {
		// The JSON type of a value Go cannot tell (an interface or raw JSON), so the schema
		// still constrains it.
		if len(s) != 0 {
			return fmt.Errorf("tag type=%q: only for interface and raw JSON fields", jt)
		}
		s["type"] = jt
	}
	if d := f.Tag.Get("desc"); d != "" && mode == inputMode {
		s["description"] = d
	}
	if e := f.Tag.Get("enum"); e != "" {
		target := s
		if items, ok := s["items"].(map[string]any); ok && s["type"] == "array" {
			target = items // an enum on a list field constrains its items
		}
		vals := []any{}
		for _, v := range strings.Split(e, ",") {
			vals = append(vals, v)
		}
		target["enum"] = vals
	}
	for _, k := range []string{"minLength", "maxLength", "minimum", "maximum"} {
		if v := f.Tag.Get(k); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil {
				return fmt.Errorf("tag %s=%q: %w", k, v, err)
			}
			s[k] = n
		}
	}
	if p := f.Tag.Get("pattern"); p != "" {
		s["pattern"] = p
	}
	if d := f.Tag.Get("default"); d != "" {
		var v any
		if err := json.Unmarshal([]byte(d), &v); err != nil {
			return fmt.Errorf("tag default=%q is not JSON: %w", d, err)
		}
		s["default"] = v
	}
	return nil
}
