package mirror

import (
	"strings"
	"testing"

	"talkd/internal/werkbaum"
)

func node(line, parent int, id, label, status, size string) werkbaum.Node {
	return werkbaum.Node{Line: line, ParentLine: parent, ID: id, Label: label, Status: status, Size: size}
}

func TestDiffMatchesByIDAndLabelChain(t *testing.T) {
	before := []werkbaum.Node{
		node(1, 0, "auth", "Login", "progress", "M"),
		node(2, 1, "auth.token", "Token check", "planned", "S"),
		node(3, 1, "", "Form", "planned", ""),
		node(4, 0, "", "Docs", "", ""),
		node(5, 4, "", "Form", "idea", ""), // same label, other parent: another node
		node(6, 0, "old", "Old stuff", "planned", ""),
	}
	// A line was inserted at the top: every line number moved by one.
	after := []werkbaum.Node{
		node(1, 0, "new", "New thing", "planned", ""),
		node(2, 0, "auth", "Login", "progress", "L"),
		node(3, 2, "auth.token", "Token check", "done", "S"),
		node(4, 2, "", "Form", "discarded", ""),
		node(5, 0, "", "Docs", "", ""),
		node(6, 5, "", "Form", "idea", ""),
	}
	got := Diff(before, after)
	want := []Change{
		{Kind: Added, ID: "new", Label: "New thing"},
		{Kind: Resized, ID: "auth", Label: "Login", From: "M", To: "L"},
		{Kind: StatusChanged, ID: "auth.token", Label: "Token check", From: "planned", To: "done"},
		{Kind: StatusChanged, Label: "Form", From: "planned", To: "discarded"},
		{Kind: Removed, ID: "old", Label: "Old stuff"},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d changes %+v, want %+v", len(got), got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("change %d: got %+v, want %+v", i, got[i], want[i])
		}
	}
	if s := Describe(got); s != `added #new, sized #auth to L, set #auth.token to done and 2 more changes` {
		t.Errorf("Describe = %q", s)
	}
}

func TestDiffMove(t *testing.T) {
	before := []werkbaum.Node{node(1, 0, "a", "A", "", ""), node(2, 0, "b", "B", "", ""), node(3, 2, "x", "X", "", "")}
	after := []werkbaum.Node{node(1, 0, "a", "A", "", ""), node(2, 1, "x", "X", "", ""), node(3, 0, "b", "B", "", "")}
	got := Diff(before, after)
	if len(got) != 1 || got[0].Kind != Moved || got[0].From != "#b" || got[0].To != "#a" {
		t.Fatalf("got %+v", got)
	}
	if s := Describe(got); s != "moved #x under #a" {
		t.Errorf("Describe = %q", s)
	}
	if s := Describe(nil); s != "edited the text" {
		t.Errorf("Describe(nil) = %q", s)
	}
}

func TestSentence(t *testing.T) {
	done := func(label, from string) Change {
		return Change{Kind: StatusChanged, Label: label, From: from, To: "done"}
	}
	cases := []struct {
		name, lang, who string
		changes         []Change
		want            string
	}{
		{"de done", "de", "Claude Code", []Change{done("Token prüfen", "progress")}, "Claude Code: Token prüfen ist fertig"},
		{"en done", "en", "Claude Code", []Change{done("Token check", "planned")}, "Claude Code finished Token check"},
		{"de prod", "de", "Codex", []Change{{Kind: StatusChanged, Label: "Login", From: "done", To: "prod"}}, "Codex: Login ist in Produktion"},
		{"en prod", "en", "Codex", []Change{{Kind: StatusChanged, Label: "Login", From: "done", To: "prod"}}, "Codex: Login is in production"},
		{"de discarded", "de", "Codex", []Change{{Kind: StatusChanged, Label: "Marmor", From: "idea", To: "discarded"}}, "Codex: Marmor ist verworfen"},
		{"en discarded", "en", "Codex", []Change{{Kind: StatusChanged, Label: "Marble", From: "idea", To: "discarded"}}, "Codex discarded Marble"},
		{"de several", "de", "Codex", []Change{done("A", ""), done("B", ""), {Kind: StatusChanged, Label: "C", To: "discarded"}},
			"Codex: A und B sind fertig, C ist verworfen"},
		{"en many", "en", "Codex", []Change{done("A", ""), done("B", ""), done("C", ""), done("D", "")}, "Codex finished A, B and 2 more"},
		{"id only", "en", "Codex", []Change{{Kind: StatusChanged, ID: "auth.token", Label: "#auth.token", To: "done"}}, "Codex finished auth token"},
		{"nothing to say", "en", "Codex", []Change{{Kind: StatusChanged, Label: "A", From: "planned", To: "progress"}, {Kind: Added, Label: "B"}}, ""},
		{"unknown lang is english", "fr", "Codex", []Change{done("A", "")}, "Codex finished A"},
	}
	for _, c := range cases {
		if got := Sentence(c.lang, c.who, c.changes); got != c.want {
			t.Errorf("%s: got %q, want %q", c.name, got, c.want)
		}
	}
}

func TestClipKeepsOneLine(t *testing.T) {
	if got := clip("a\nb\tc", 10); strings.ContainsAny(got, "\n\t") {
		t.Errorf("clip left control characters: %q", got)
	}
	if got := clip(strings.Repeat("x", 100), 10); len([]rune(got)) != 10 || !strings.HasSuffix(got, "…") {
		t.Errorf("clip(100 x, 10) = %q", got)
	}
}
