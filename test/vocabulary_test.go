package test

import (
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"talkd/internal/werkbaum/vocab"
)

// TestVocabularyAtTheDoors: the daemon's tool schemas, its set_status verb and talk's box
// table all speak the one vocabulary the notation's scripts export. tools/list's status and
// size enums equal the generated copy talk is built with (so the daemon's engine and talk
// agree), every listed status argument is accepted by a real write and gives the box its
// status has, and `talk plan inspect` shows each status with that box.
func TestVocabularyAtTheDoors(t *testing.T) {
	t.Parallel()
	v := vocab.Notation
	var plan strings.Builder
	plan.WriteString("- [ ] Wurzel von @Müller #root\n  - [?] Ziel @jörg #t\n")
	for _, s := range v.Statuses {
		plan.WriteString("  - [" + s.Code + "] Node " + s.Key + " @jörg #n-" + s.Key + "\n")
	}
	d, paths := startPlanDaemon(t, planFile{Key: "v", Text: plan.String()})

	status, list := d.postJSON(t, "/mcp", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`,
		map[string]string{"Content-Type": "application/json"})
	if status != http.StatusOK {
		t.Fatalf("tools/list: %d %v", status, list)
	}
	raw, _ := json.Marshal(list["result"])
	var tools struct {
		Tools []struct {
			Name        string `json:"name"`
			Description string `json:"description"`
			InputSchema struct {
				Properties map[string]struct {
					Enum  []string `json:"enum"`
					AnyOf []struct {
						Enum []string `json:"enum"`
					} `json:"anyOf"`
				} `json:"properties"`
			} `json:"inputSchema"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(raw, &tools); err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, tl := range tools.Tools {
		switch tl.Name {
		case "werkbaum_set_status":
			seen++
			if got := tl.InputSchema.Properties["status"].Enum; !reflect.DeepEqual(got, v.StatusArguments()) {
				t.Errorf("set_status's status enum %q, talk's vocabulary %q", got, v.StatusArguments())
			}
			for _, s := range v.Statuses {
				if !strings.Contains(tl.Description, s.Key) {
					t.Errorf("set_status's description lacks %q: %s", s.Key, tl.Description)
				}
			}
		case "werkbaum_set_size":
			seen++
			p := tl.InputSchema.Properties["size"]
			if len(p.AnyOf) == 0 || !reflect.DeepEqual(p.AnyOf[0].Enum, v.Sizes) {
				t.Errorf("set_size's size enum %+v, talk's vocabulary %q", p, v.Sizes)
			}
		}
	}
	if seen != 2 {
		t.Fatalf("tools/list has %d of werkbaum_set_status and werkbaum_set_size", seen)
	}

	// Every status argument the schema lists is one the daemon accepts, with its box.
	c := newMCPClient(d)
	boxOf := map[string]string{}
	for _, s := range v.Statuses {
		for _, w := range append([]string{s.Key, s.German}, s.Codes...) {
			boxOf[w] = "[" + s.Code + "] "
		}
	}
	for _, w := range v.Neutral {
		boxOf[w] = ""
	}
	for i, arg := range v.StatusArguments() {
		want, ok := boxOf[arg]
		if !ok {
			t.Fatalf("status argument %q belongs to no status", arg)
		}
		base := c.read(t, "v").Base
		var w writeAnswer
		c.ok(t, "werkbaum_set_status", writeArgs("v", base, "vocab-"+string(rune('a'+i)), map[string]any{
			"id": "t", "status": arg, "allowWarnings": true, "allowProd": true}), &w)
		text := string(readFile(t, paths["v"]))
		if !strings.Contains(text, "\n  - "+want+"Ziel @jörg #t\n") {
			t.Errorf("status %q: the file has\n%s\nwant the box %q", arg, text, want)
		}
	}

	// talk's box table: each status shows with its box.
	r := talkAt(t, d, "", "plan", "inspect", "v")
	r.want(t, 0, "plan inspect")
	for _, s := range v.Statuses {
		if want := "[" + s.Code + "] Node " + s.Key + "  #n-" + s.Key; !strings.Contains(r.stdout, want) {
			t.Errorf("talk plan inspect lacks %q:\n%s", want, r.stdout)
		}
	}
}
