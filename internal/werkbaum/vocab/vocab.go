// Package vocab is the Werkbaum notation's vocabulary as Go values: the statuses (English
// key, German key, box codes, progress rank), the sizes in order and the gate characters
// (NOTATION.md §3, §9, §10).
//
// The one source is the notation's JavaScript (internal/werkbaum/js/25_vocabulary.js,
// Werkbaum.vocabulary()). The daemon reads it from the running engine
// (werkbaum.Engine.Vocabulary) and builds the MCP tool schemas and descriptions from that.
// This package holds the type and Notation, a copy generated from the same JavaScript for
// programs that must not embed the engine (the talk CLI speaks only HTTP to the daemon):
// internal/werkbaum's TestGeneratedVocabularyIsTheEngines fails when the two differ, and
// `go generate ./internal/werkbaum/vocab` rewrites the copy.
package vocab

//go:generate go run ../cmd/vocabgen -o notation_gen.go

import (
	"slices"
	"strings"
)

// Vocabulary is what Werkbaum.vocabulary() returns.
type Vocabulary struct {
	// Statuses in the order of NOTATION.md §9's table.
	Statuses []Status `json:"statuses"`
	// Neutral are the status arguments that remove the box; the first is the documented one.
	Neutral []string `json:"neutral"`
	// Sizes from the smallest to the largest (rank = index).
	Sizes []string `json:"sizes"`
	// Gates are the gate characters of a node line.
	Gates []Gate `json:"gates"`
}

// Status is one status box.
type Status struct {
	Key    string `json:"key"`    // the English key talkd's JSON uses ("done")
	German string `json:"german"` // upstream's key ("fertig")
	Code   string `json:"code"`   // the canonical box character ("x")
	// Codes are all box characters read as this status, the canonical one first ("x", "X").
	Codes    []string `json:"codes"`
	Rank     int      `json:"rank"`     // progress rank
	Realized bool     `json:"realized"` // [~] [/] [x] [^]
	Done     bool     `json:"done"`     // [x] [^]
	Started  bool     `json:"started"`  // realized but not done
}

// Gate is one gate character and how the parser reads it.
type Gate struct {
	Code     string `json:"code"`
	Type     string `json:"type"` // and, or, xor
	Optional bool   `json:"optional"`
}

// Box returns the status box of an English key ("done" → "[x]").
func (v Vocabulary) Box(key string) (string, bool) {
	for _, s := range v.Statuses {
		if s.Key == key {
			return "[" + s.Code + "]", true
		}
	}
	return "", false
}

// StatusArguments lists every value a status argument may take, each once: the English
// keys, the neutral words, the German keys, then the box characters.
func (v Vocabulary) StatusArguments() []string {
	var out []string
	add := func(w string) {
		if !slices.Contains(out, w) {
			out = append(out, w)
		}
	}
	for _, s := range v.Statuses {
		add(s.Key)
	}
	for _, w := range v.Neutral {
		add(w)
	}
	for _, s := range v.Statuses {
		add(s.German)
	}
	for _, s := range v.Statuses {
		for _, c := range s.Codes {
			add(c)
		}
	}
	return out
}

// GateTypes lists the group types the gates produce, each once, in gate order.
func (v Vocabulary) GateTypes() []string {
	var out []string
	for _, g := range v.Gates {
		if !slices.Contains(out, g.Type) {
			out = append(out, g.Type)
		}
	}
	return out
}

// Keys lists the English status keys in table order.
func (v Vocabulary) Keys() []string {
	out := make([]string, len(v.Statuses))
	for i, s := range v.Statuses {
		out[i] = s.Key
	}
	return out
}

// CodeList lists the canonical box characters in table order, a blank spelled "space"
// (for help texts: "?, space, !, ~, /, x, ^, -").
func (v Vocabulary) CodeList(sep string) string {
	codes := make([]string, len(v.Statuses))
	for i, s := range v.Statuses {
		codes[i] = s.Code
		if s.Code == " " {
			codes[i] = "space"
		}
	}
	return strings.Join(codes, sep)
}

// Clone returns a deep copy, so a caller may keep or change it.
func (v Vocabulary) Clone() Vocabulary {
	c := Vocabulary{Neutral: slices.Clone(v.Neutral), Sizes: slices.Clone(v.Sizes), Gates: slices.Clone(v.Gates)}
	c.Statuses = make([]Status, len(v.Statuses))
	for i, s := range v.Statuses {
		s.Codes = slices.Clone(s.Codes)
		c.Statuses[i] = s
	}
	return c
}
