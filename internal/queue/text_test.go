package queue

import (
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestCutKeepingEnd: piped build output keeps its last lines, where the error is, cut at
// a line boundary, and says how many lines were left out.
func TestCutKeepingEnd(t *testing.T) {
	var b strings.Builder
	for i := 0; i < 40; i++ {
		b.WriteString("gcc -O2 -c src/parser_für_jörg.c -o build/parser.o -Wall -Wextra\n")
	}
	b.WriteString("src/main.c:12: error: expected ';' before '}'\nmake: *** [Makefile:8: all] Error 1\n")
	text := strings.TrimSpace(b.String())
	kept, leftOut := CutKeepingEnd(text, 400)
	if n := utf8.RuneCountInString(kept); n > 400 || !strings.HasSuffix(kept, "make: *** [Makefile:8: all] Error 1") {
		t.Fatalf("kept %d characters ending %q", n, kept[max(0, len(kept)-40):])
	}
	if !strings.HasPrefix(kept, "gcc ") && !strings.HasPrefix(kept, "src/main.c") {
		t.Errorf("the cut is not at a line start: %q", kept[:40])
	}
	dropped := strings.Count(text, "\n") - strings.Count(kept, "\n")
	if want := "the first " + strconv.Itoa(dropped) + " lines ("; !strings.HasPrefix(leftOut, want) {
		t.Errorf("left out %q, want it to start with %q", leftOut, want)
	}

	one := strings.Repeat("Der Build für @Müller ist fertig. ", 30) + "Nur der letzte Satz zählt."
	kept, leftOut = CutKeepingEnd(one, 100)
	if !strings.HasPrefix(kept, "Der Build") || !strings.HasSuffix(kept, "zählt.") || !strings.HasPrefix(leftOut, "the first ") {
		t.Errorf("one long line: kept %q, left out %q", kept, leftOut)
	}
	if kept, leftOut := CutKeepingEnd("short", 400); kept != "short" || leftOut != "" {
		t.Errorf("a short text: %q %q", kept, leftOut)
	}
}
