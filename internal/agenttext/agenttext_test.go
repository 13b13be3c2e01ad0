package agenttext

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestSentence(t *testing.T) {
	cases := []struct{ name, in, want string }{
		{"plain", "All tests pass. I also updated the docs.", "All tests pass."},
		{"heading and list", "## Summary\n\n- Fixed the **flaky** test in `queue_test.go`\n- Added a benchmark", "Fixed the flaky test."},
		{"code block dropped", "```go\nfmt.Println(\"x\")\n```\nThe build is green now.", "The build is green now."},
		{"urls and paths", "See https://example.com/x and /home/jörg/src/main.go for details. Done.", "See for details."},
		{"intro passed over", "Here is what I changed:\n\n1. The parser handles tabs now.", "The parser handles tabs now."},
		{"number and abbreviation", "Version 3.5 is out, e.g. with faster builds. More later.", "Version 3.5 is out, e.g. with faster builds."},
		{"link text kept", "I opened [the pull request](https://github.com/x/y/pull/1) for @Müller.", "I opened the pull request for @Müller."},
		{"only code", "```\nmake test\n```", ""},
		{"non-ASCII", "Die Tests für Jörg laufen grün. Weiter geht's.", "Die Tests für Jörg laufen grün."},
		{"dangling words go", "All 12 tests pass now; see https://x.org/pr/3 and `queue.go`. Anything else?", "All 12 tests pass now."},
		{"clause end", "All **12 tests** pass in `internal/queue`; see https://example.com/ci. Anything else?", "All 12 tests pass."},
		{"path at the end", "I changed ./cmd/talk/hook.go. It builds.", "I changed."},
		{"connector kept before words", "See `make test` for details.", "See for details."},
		{"a question stays whole", "What are you waiting for? Tell me.", "What are you waiting for?"},
		{"table dropped", "| a | b |\n|---|---|\n| 1 | 2 |\nTable above.", "Table above."},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := Sentence(c.in); got != c.want {
				t.Errorf("Sentence(%q)\n got %q\nwant %q", c.in, got, c.want)
			}
		})
	}
}

func TestSentenceIsBounded(t *testing.T) {
	long := strings.Repeat("word ", 300)
	got := Sentence(long)
	if n := utf8.RuneCountInString(got); n > MaxRunes+1 || n < MaxRunes/2 {
		t.Errorf("length %d of %q", n, got)
	}
	if strings.Contains(got, "  ") || !strings.HasSuffix(got, ".") {
		t.Errorf("cut badly: %q", got)
	}
}
