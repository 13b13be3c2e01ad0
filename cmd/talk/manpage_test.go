package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var updateManPage = flag.Bool("update", false, "rewrite docs/talk.1 from talk's own help")

// TestManPageCurrent holds docs/talk.1 to talk's own help: its commands, common flags,
// environment and exit codes come from the same tables as talk --help, so the man page
// cannot drift from what talk does. After a change of the help:
//
//	go test ./cmd/talk -run TestManPageCurrent -update
func TestManPageCurrent(t *testing.T) {
	var want bytes.Buffer
	writeManPage(&want)
	path := filepath.Join("..", "..", "docs", "talk.1")
	if *updateManPage {
		if err := os.WriteFile(path, want.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (write it with: go test ./cmd/talk -run TestManPageCurrent -update)", err)
	}
	if !bytes.Equal(got, want.Bytes()) {
		t.Errorf("docs/talk.1 is not talk's help of today; rewrite it with: go test ./cmd/talk -run TestManPageCurrent -update")
	}
	for _, c := range exitCodes {
		if !strings.Contains(want.String(), fmt.Sprintf(".TP\n.B %d\n", c.code)) {
			t.Errorf("the man page lacks exit code %d", c.code)
		}
	}
	for _, c := range commands() {
		if !strings.Contains(want.String(), ".B talk "+roffEscape(c.usage)+"\n") {
			t.Errorf("the man page lacks the command %q", c.name)
		}
	}
}

// writeManPage renders talk(1) in roff from the tables talk --help is made of.
func writeManPage(w *bytes.Buffer) {
	fmt.Fprintln(w, `.\" Generated from talk's help by: go test ./cmd/talk -run TestManPageCurrent -update`)
	fmt.Fprintln(w, `.TH TALK 1 "" "talkd" "User Commands"`)
	fmt.Fprintln(w, ".SH NAME")
	fmt.Fprintln(w, `talk \- the command line of talkd, the voice (and plan keeper) of your agents`)
	fmt.Fprintln(w, ".SH SYNOPSIS")
	fmt.Fprintln(w, `.B talk
[\-\-url URL] [\-\-timeout D] [\-\-json] COMMAND [flags] [arguments]`)
	fmt.Fprintln(w, ".SH COMMANDS")
	fmt.Fprintln(w, `Each command's flags and details: \fBtalk help\fR \fICOMMAND\fR.`)
	for _, c := range commands() {
		fmt.Fprintf(w, ".TP\n.B talk %s\n%s\n", roffEscape(c.usage), roffEscape(c.summary))
	}
	var help bytes.Buffer
	writeMainHelp(&help)
	sections := helpSections(help.String())
	for _, s := range []struct{ heading, title string }{
		{"Common flags (before or after the command):", "OPTIONS"},
		{"Environment:", "ENVIRONMENT"},
	} {
		fmt.Fprintf(w, ".SH %s\n.nf\n%s.fi\n", s.title, roffEscape(sections[s.heading]))
	}
	fmt.Fprintln(w, ".SH EXIT STATUS")
	for _, c := range exitCodes {
		fmt.Fprintf(w, ".TP\n.B %d\n%s\n", c.code, roffEscape(strings.ReplaceAll(c.meaning, "\n", " ")))
	}
	fmt.Fprintf(w, ".SH EXAMPLES\n.nf\n%s.fi\n", roffEscape(sections["Examples:"]))
	fmt.Fprintln(w, ".SH SEE ALSO")
	fmt.Fprintln(w, `\fBtalkd\fR \-\-help; the README of talkd, its sections The CLI and Hearing your coding agents.`)
}

// helpSections splits talk --help at its unindented "Heading:" lines.
func helpSections(help string) map[string]string {
	sections := map[string]string{}
	heading := ""
	for _, line := range strings.SplitAfter(help, "\n") {
		trimmed := strings.TrimRight(line, "\n")
		if trimmed != "" && !strings.HasPrefix(trimmed, " ") && strings.HasSuffix(trimmed, ":") {
			heading = trimmed
			continue
		}
		if heading != "" && trimmed != "" {
			sections[heading] += strings.TrimPrefix(line, "  ")
		}
	}
	return sections
}

// roffEscape keeps text literal in roff: backslashes and hyphens escaped, and a line that
// starts with a dot or quote not read as a request.
func roffEscape(s string) string {
	s = strings.ReplaceAll(s, `\`, `\e`)
	s = strings.ReplaceAll(s, "-", `\-`)
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, ".") || strings.HasPrefix(l, "'") {
			lines[i] = `\&` + l
		}
	}
	return strings.Join(lines, "\n")
}
