package api

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"talkd/internal/werkbaum"
	"talkd/internal/werkbaum/vocab"
)

// TestPlanToolsTakeTheEngineVocabulary: set_status's and set_size's enums and descriptions
// are built from the vocabulary the server is given, not from copies in the code: a
// made-up vocabulary shows up in tools/list word for word, and nothing of the real one.
func TestPlanToolsTakeTheEngineVocabulary(t *testing.T) {
	madeUp := werkbaum.Vocabulary{
		Statuses: []vocab.Status{
			{Key: "open", German: "offen", Code: "o", Codes: []string{"o", "O"}, Rank: 0},
			{Key: "closed", German: "zu", Code: "c", Codes: []string{"c"}, Rank: 1, Realized: true, Done: true},
		},
		Neutral: []string{"blank"},
		Sizes:   []string{"tiny", "huge"},
		Gates:   []vocab.Gate{{Code: "-", Type: "and"}},
	}
	f := newMCPFixture(t, nil)
	registerPlanTools(f.srv, nil, madeUp)
	l, err := f.srv.mcp.reg.encoded()
	if err != nil {
		t.Fatal(err)
	}
	var list struct {
		Tools []struct {
			Name        string `json:"name"`
			Description string `json:"description"`
			InputSchema struct {
				Properties map[string]json.RawMessage `json:"properties"`
			} `json:"inputSchema"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(l.tools, &list); err != nil {
		t.Fatal(err)
	}
	found := 0
	for _, tl := range list.Tools {
		switch tl.Name {
		case "werkbaum_set_status":
			found++
			var status struct {
				Enum []string `json:"enum"`
			}
			if err := json.Unmarshal(tl.InputSchema.Properties["status"], &status); err != nil {
				t.Fatal(err)
			}
			if want := []string{"open", "closed", "blank", "offen", "zu", "o", "O", "c"}; !reflect.DeepEqual(status.Enum, want) {
				t.Errorf("set_status status enum %v, want %v", status.Enum, want)
			}
			if !strings.Contains(tl.Description, "an English key (open, closed, or blank to remove the box), a German key, or a box code (o, c).") {
				t.Errorf("set_status description: %s", tl.Description)
			}
		case "werkbaum_set_size":
			found++
			if got, want := string(tl.InputSchema.Properties["size"]),
				`{"anyOf":[{"enum":["tiny","huge"],"type":"string"},{"type":"null"}],"description":"the new size, or null to remove it"}`; got != want {
				t.Errorf("set_size size schema\n got %s\nwant %s", got, want)
			}
			if !strings.Contains(tl.Description, "(tiny, huge)") {
				t.Errorf("set_size description: %s", tl.Description)
			}
		}
		for _, real := range []string{"highrisk", "XXL", "verworfen"} {
			if strings.Contains(tl.Description, real) {
				t.Errorf("%s names %q, which the given vocabulary does not have: %s", tl.Name, real, tl.Description)
			}
		}
	}
	if found != 2 {
		t.Fatalf("found %d of the two tools", found)
	}
	if strings.Contains(string(l.tools), `"XXL"`) || strings.Contains(string(l.tools), `"highrisk"`) {
		t.Errorf("tools/list still carries a word of the real vocabulary: %s", l.tools)
	}
}

// TestGuideNamesTheVocabulary: the notation guide agents read (werkbaum://guide) shows every
// status box and the size range of the engine's vocabulary.
func TestGuideNamesTheVocabulary(t *testing.T) {
	v := vocab.Notation
	for _, s := range v.Statuses {
		if !strings.Contains(werkbaumGuide, "`["+s.Code+"]` ") {
			t.Errorf("the guide does not show the box [%s] (%s)", s.Code, s.Key)
		}
	}
	if r := "`(" + v.Sizes[0] + ")`…`(" + v.Sizes[len(v.Sizes)-1] + ")`"; !strings.Contains(werkbaumGuide, r) {
		t.Errorf("the guide does not show the sizes as %s", r)
	}
}

// TestGuideSaysWhatTheServerDoes: the guide's figures are the server's (a page of a read,
// the largest text a conflict carries, the label cut), and it no longer promises what the
// server does not do (a structuredContent.conflict, a 64 KiB request limit).
func TestGuideSaysWhatTheServerDoes(t *testing.T) {
	thousands := func(n int) string { return fmt.Sprintf("%d,%03d", n/1000, n%1000) }
	for _, want := range []string{
		"about " + thousands(readBudget) + " characters",
		"up to " + thousands(conflictTextMax) + " bytes",
		fmt.Sprintf("labels over %d characters", compactLabelMax),
		"`changes`", "warningCount", "`more:`", `detail: "full"`,
	} {
		if !strings.Contains(werkbaumGuide, want) {
			t.Errorf("the guide does not say %q", want)
		}
	}
	for _, wrong := range []string{"structuredContent.conflict", "64 KiB", "the full `warnings`"} {
		if strings.Contains(werkbaumGuide, wrong) {
			t.Errorf("the guide still says %q", wrong)
		}
	}
}
