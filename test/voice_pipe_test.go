package test

import (
	"strings"
	"testing"
)

// TestVoicePipedOutputSpeaksItsEnd: `make 2>&1 | talk say` with output far longer than
// max_chars speaks its last lines, where the error is, cut at a line boundary, and talk
// says what was left out; text given as arguments still keeps its start.
func TestVoicePipedOutputSpeaksItsEnd(t *testing.T) {
	t.Parallel()
	d := startDaemon(t, daemonOptions{})
	var b strings.Builder
	for i := 0; i < 3000; i++ {
		b.WriteString("cc -O2 -c src/parser_für_jörg.c -o build/parser.o -Wall -Wextra -Werror\n")
	}
	b.WriteString("src/main.c:12:5: error: expected ';' before '}' token\nmake: *** [Makefile:8: all] Error 1\n")
	r := talkAt(t, d, b.String(), "say", "--now")
	r.want(t, 0, "talk say with long piped output")
	if !strings.Contains(r.stderr, "speaks its end") || !strings.Contains(r.stderr, "left out the first ") || !strings.Contains(r.stderr, " lines (") {
		t.Errorf("talk say stderr does not say what was left out: %q", r.stderr)
	}
	if !strings.Contains(r.stderr, "talk had already left out the first") {
		t.Errorf("talk say does not say it cut the input itself: %q", r.stderr)
	}
	rec := d.waitSpoken(t, 1)[0]
	if n := len([]rune(rec.Text)); n > 400 || !strings.HasSuffix(rec.Text, "make: *** [Makefile:8: all] Error 1") || !strings.HasPrefix(rec.Text, "cc -O2") && !strings.HasPrefix(rec.Text, "src/main.c") {
		t.Fatalf("spoken %d characters: %q", n, rec.Text)
	}

	status, body := d.postJSON(t, "/speak", map[string]any{"text": b.String()[:3000], "keep": "middle"}, nil)
	if e, _ := body["error"].(map[string]any); status != 400 || e["field"] != "keep" {
		t.Errorf("keep = middle: %d %v", status, body)
	}
}
