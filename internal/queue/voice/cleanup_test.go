package voice

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestCleanURLs(t *testing.T) {
	on := CleanupOptions{URLs: true}
	cases := []struct{ name, in, want string }{
		{"host", "Build failed, see https://github.com/acme/app/actions/runs/1", "Build failed, see github.com"},
		{"www stripped", "Docs at https://www.example.org/guide.", "Docs at example.org."},
		{"bare www", "look at www.golang.org/doc, then go on", "look at golang.org, then go on"},
		{"ip becomes link", "served on http://127.0.0.1:7077/status", "served on link"},
		{"generated host becomes link", "at https://d1234abcd.cloudfront.net/x", "at link"},
		{"long host becomes link", "at https://very-long-subdomain.of-some-example-company.com/", "at link"},
		{"trailing paren kept outside", "(see https://go.dev/doc)", "(see go.dev)"},
		{"paren inside url", "https://en.wikipedia.org/wiki/Go_(language) is it", "en.wikipedia.org is it"},
		{"two urls", "http://a.io and ftp://files.example.com/x", "a.io and files.example.com"},
		{"no url", "nothing to see here.", "nothing to see here."},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := Clean(c.in, on); got != c.want {
				t.Errorf("Clean(%q) = %q, want %q", c.in, got, c.want)
			}
		})
	}
	if got := Clean("see https://github.com/x", CleanupOptions{}); got != "see https://github.com/x" {
		t.Errorf("URLs off must keep the URL, got %q", got)
	}
}

func TestCleanMarkdown(t *testing.T) {
	on := CleanupOptions{Markdown: true, URLs: true}
	cases := []struct{ name, in, want string }{
		{"heading and paragraph", "# Build\nAll green", "Build. All green"},
		{"emphasis", "this is **very** important and *quite* _nice_", "this is very important and quite nice"},
		{"snake_case survives", "rename my_var_name and 2*3*4", "rename my_var_name and 2*3*4"},
		{"inline code keeps content", "run `go test` now", "run go test now"},
		{"link keeps text", "read [the guide](https://example.com/guide) first", "read the guide first"},
		{"image keeps alt", "![a cat](cat.png) sleeps", "a cat sleeps"},
		{"autolink", "<https://go.dev/x>", "go.dev"},
		{"bullets get pauses", "Results:\n- tests pass\n- lint clean\n* docs done", "Results: tests pass. lint clean. docs done."},
		{"numbered list", "1. build\n2) test", "build. test."},
		{"quote", "> quoted words\n> more", "quoted words more"},
		{"code fence dropped", "Fixed it:\n```go\nfunc main() {}\n```\nDone.", "Fixed it: Done."},
		{"tilde fence dropped", "a\n~~~\nx := 1\n~~~\nb", "a b"},
		{"only code keeps code", "```\nmake test\n```", "make test"},
		{"rule dropped", "above\n---\nbelow", "above below"},
		{"table", "| name | state |\n|------|-------|\n| api | done |", "name, state. api, done."},
		{"strike", "~~old~~ new", "old new"},
		{"crlf", "one\r\ntwo", "one two"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := Clean(c.in, on); got != c.want {
				t.Errorf("Clean(%q) = %q, want %q", c.in, got, c.want)
			}
		})
	}
	if got := Clean("**bold** `x`", CleanupOptions{}); got != "**bold** `x`" {
		t.Errorf("markdown off must keep markers, got %q", got)
	}
}

func TestCleanMaxChars(t *testing.T) {
	long := strings.Repeat("word ", 30) // 150 chars, no sentence end
	cases := []struct {
		name, in string
		max      int
		want     string
	}{
		{"short untouched", "Hello. World.", 100, "Hello. World."},
		{"cut at sentence", "First sentence here. Second sentence is longer and goes on.", 40, "First sentence here."},
		{"last sentence end wins", "One. Two two. Three three three.", 20, "One. Two two."},
		{"question mark", "Ready? Then we start the long build now", 15, "Ready?"},
		{"sentence too early uses word boundary", "Hi. " + long, 40, "Hi. word word word word word word word"},
		{"no boundary at all", strings.Repeat("x", 50), 10, strings.Repeat("x", 10)},
		{"decimal point is not a sentence end", "Version 1.5 is out and everyone should upgrade soon", 20, "Version 1.5 is out"},
		{"runes not bytes", "Grüße aus Köln. Und noch mehr Text danach", 20, "Grüße aus Köln."},
		{"zero means no limit", long, 0, strings.TrimSpace(long)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := Clean(c.in, CleanupOptions{MaxChars: c.max})
			if got != c.want {
				t.Errorf("Clean(%q, max %d) = %q, want %q", c.in, c.max, got, c.want)
			}
			if c.max > 0 && utf8.RuneCountInString(got) > c.max {
				t.Errorf("result has %d runes, limit %d", utf8.RuneCountInString(got), c.max)
			}
		})
	}
}

func TestCleanIsDeterministicAndKeepsPlainText(t *testing.T) {
	all := CleanupOptions{URLs: true, Markdown: true, MaxChars: 400}
	plain := "Der Build ist fertig, alle Tests sind grün."
	if got := Clean(plain, all); got != plain {
		t.Errorf("plain text changed: %q", got)
	}
	in := "## Deploy\n**done** at https://ci.example.com/run"
	if a, b := Clean(in, all), Clean(in, all); a != b || a != "Deploy. done at ci.example.com" {
		t.Errorf("got %q and %q", a, b)
	}
}
