package werkbaum

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"talkd/internal/werkbaum/vocab"
)

// The generated copy for talk (vocab/notation_gen.go) is exactly what cmd/vocabgen writes
// from the engine's Werkbaum.vocabulary(): a change to the scripts' tables without
// `go generate ./internal/werkbaum/vocab` fails here.
func TestGeneratedVocabularyIsTheEngines(t *testing.T) {
	e := newTestEngine(t, Options{})
	v := e.Vocabulary()
	if !reflect.DeepEqual(v, vocab.Notation) {
		t.Fatalf("vocab.Notation differs from the engine's vocabulary; run go generate ./internal/werkbaum/vocab\nengine: %+v\ncopy:   %+v", v, vocab.Notation)
	}
	want, err := VocabularySource(v)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join("vocab", "notation_gen.go"))
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Fatalf("vocab/notation_gen.go is not what cmd/vocabgen writes; run go generate ./internal/werkbaum/vocab\n%s", want)
	}
}

// The vocabulary equals NOTATION.md §9's table (English key, German key, box codes, rank,
// flags), §10's size scale and §3's gate characters.
func TestVocabularyEqualsNotation(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(sharedDir(t), "werkbaum", "NOTATION.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	v := newTestEngine(t, Options{}).Vocabulary()

	sec9 := notationSection(t, doc, 9)
	var want []vocab.Status
	cellCode := regexp.MustCompile("`\\[(.)\\]`")
	for _, line := range strings.Split(sec9, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) != 8 || !strings.HasPrefix(strings.TrimSpace(cells[1]), "`[") {
			continue
		}
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		s := vocab.Status{German: strings.Split(cells[2], "`")[1], Realized: cells[4] == "yes", Done: cells[5] == "yes", Started: cells[6] == "yes"}
		for _, m := range cellCode.FindAllStringSubmatch(cells[1], -1) {
			s.Codes = append(s.Codes, m[1])
		}
		s.Code = s.Codes[0]
		if s.Rank, err = strconv.Atoi(cells[3]); err != nil {
			t.Fatalf("§9 row %q: rank: %v", line, err)
		}
		want = append(want, s)
	}
	para := regexp.MustCompile(`English keys — ([^(]+)\(neutral`).FindStringSubmatch(strings.Join(strings.Fields(sec9), " "))
	if para == nil {
		t.Fatal("§9 does not name the English keys")
	}
	keys := regexp.MustCompile("`([^`]+)`").FindAllStringSubmatch(para[1], -1)
	if len(keys) != len(want) || len(want) != 8 {
		t.Fatalf("§9: %d table rows, %d English keys; want 8 each", len(want), len(keys))
	}
	for i := range want {
		want[i].Key = keys[i][1]
	}
	if !reflect.DeepEqual(v.Statuses, want) {
		t.Errorf("statuses:\n got %+v\nwant %+v", v.Statuses, want)
	}

	scale := regexp.MustCompile("Ordinal scale `([^`]+)`").FindStringSubmatch(notationSection(t, doc, 10))
	if scale == nil || !reflect.DeepEqual(v.Sizes, strings.Split(scale[1], " < ")) {
		t.Errorf("sizes %v, §10 says %v", v.Sizes, scale)
	}

	row := regexp.MustCompile(`\| 2 \| gate character: (.*) — `).FindStringSubmatch(notationSection(t, doc, 3))
	if row == nil {
		t.Fatal("§3 does not name the gate characters")
	}
	var gates []vocab.Gate
	for _, g := range strings.Split(row[1], ", ") {
		m := regexp.MustCompile("^`\\\\?(.)` (and|or|xor|optional)").FindStringSubmatch(g)
		if m == nil {
			t.Fatalf("§3 gate entry %q", g)
		}
		if m[2] == "optional" {
			gates = append(gates, vocab.Gate{Code: m[1], Type: "and", Optional: true})
		} else {
			gates = append(gates, vocab.Gate{Code: m[1], Type: m[2]})
		}
	}
	if !reflect.DeepEqual(v.Gates, gates) {
		t.Errorf("gates:\n got %+v\nwant %+v", v.Gates, gates)
	}
}

func notationSection(t *testing.T, doc string, n int) string {
	t.Helper()
	start := strings.Index(doc, "\n## "+strconv.Itoa(n)+".")
	if start < 0 {
		t.Fatalf("NOTATION.md has no section %d", n)
	}
	end := strings.Index(doc[start+1:], "\n## ")
	if end < 0 {
		return doc[start:]
	}
	return doc[start : start+1+end]
}

// Every status argument the vocabulary lists is one the set_status verb accepts, and a
// word outside it is refused with a message that names the keys.
func TestVocabularyStatusArgumentsAreAccepted(t *testing.T) {
	e := newTestEngine(t, Options{})
	v := e.Vocabulary()
	text := "- [ ] Root #r\n  - [?] Aufgabe von @jörg #t\n"
	for _, word := range v.StatusArguments() {
		if _, err := e.Apply(t.Context(), text, SetStatus{ID: "t", Status: word}); err != nil {
			t.Errorf("status %q: %v", word, err)
		}
	}
	_, err := e.Apply(t.Context(), text, SetStatus{ID: "t", Status: "finished"})
	var ie *InputError
	if !errors.As(err, &ie) || ie.Code != "badStatus" {
		t.Fatalf("status finished: %v, want a badStatus input error", err)
	}
	for _, k := range v.Keys() {
		if !strings.Contains(ie.Message, k) {
			t.Errorf("the badStatus message %q does not name %q", ie.Message, k)
		}
	}
}

// Vocabulary hands out a copy; an engine whose scripts export an incomplete vocabulary
// is not built.
func TestVocabularyCopyAndRefusal(t *testing.T) {
	e := newTestEngine(t, Options{})
	v := e.Vocabulary()
	v.Sizes[0], v.Statuses[0].Codes[0] = "changed", "changed"
	if w := e.Vocabulary(); w.Sizes[0] != "XS" || w.Statuses[0].Codes[0] != "?" {
		t.Fatalf("Vocabulary shares its slices: %+v", w)
	}
	_, err := newEngine(Options{}, "Werkbaum.vocabulary = function () { return { statuses: [], sizes: [], gates: [], neutral: [] }; };")
	if !errors.Is(err, ErrEngine) || !strings.Contains(err.Error(), "vocabulary") {
		t.Fatalf("an empty vocabulary: %v, want an engine error naming the vocabulary", err)
	}
}
