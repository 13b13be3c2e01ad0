package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestReadmeSnippetsUseTheInstallPath: every "command" of the README's host snippets is
// the talk the Install section builds (GOBIN=~/.local/bin), not a path nothing puts it in.
func TestReadmeSnippetsUseTheInstallPath(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	readme := string(raw)
	if !strings.Contains(readme, "GOBIN=~/.local/bin go install ./cmd/talkd ./cmd/talk") {
		t.Fatal("the README's install no longer puts talk in ~/.local/bin; update this test and the snippets together")
	}
	commands := regexp.MustCompile(`"command": "(/[^"]*)"`).FindAllStringSubmatch(readme, -1)
	if len(commands) == 0 {
		t.Fatal("no host snippet with a command found")
	}
	for _, m := range commands {
		if !strings.HasSuffix(m[1], "/.local/bin/talk") {
			t.Errorf("a snippet runs %s, not the installed ~/.local/bin/talk", m[1])
		}
	}
}
