package test

import (
	"encoding/json"
	"strings"
	"testing"
)

// controlPlan has labels carrying terminal control sequences: a window title (OSC 0 …
// BEL), a screen clear (CSI 2J) and "hidden text" (CSI 8m).
const controlPlan = "- [ ] #pay: Pay \x1b]0;title\x07now (S) @m\n" +
	"- [ ] #wipe: Wipe\x1b[2J screen (M)\n" +
	"- [ ] #hide: Shown \x1b[8mhidden (XS)\n"

// TestCLIPlanOutputNeutralisesControls (issue 15 item 10): talk plan inspect, plans and
// plan show print plan text from a live daemon with every terminal control character
// shown as an escape, while --json carries the labels unchanged.
func TestCLIPlanOutputNeutralisesControls(t *testing.T) {
	t.Parallel()
	d, _ := startPlanDaemon(t, planFile{Key: "ctl", Text: controlPlan})

	raw := func(what, out string) {
		t.Helper()
		for i, r := range out {
			if r == 0x1b || r == 0x07 || r == 0x7f || (r >= 0x80 && r <= 0x9f) ||
				(r == '\r' && !strings.HasPrefix(out[i:], "\r\n")) {
				t.Fatalf("%s prints a raw control character %U at byte %d:\n%q", what, r, i, out)
			}
		}
	}

	r := talkAt(t, d, "", "plan", "inspect", "ctl")
	r.want(t, 0, "plan inspect")
	raw("plan inspect", r.stdout)
	for _, want := range []string{`Pay \x1b]0;title\x07now`, `Wipe\x1b[2J screen`, `Shown \x1b[8mhidden`} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("plan inspect lacks %q:\n%s", want, r.stdout)
		}
	}

	r = talkAt(t, d, "", "plan", "show", "ctl")
	r.want(t, 0, "plan show")
	raw("plan show", r.stdout)
	if !strings.Contains(r.stdout, `#wipe: Wipe\x1b[2J screen (M)`+"\n") {
		t.Errorf("plan show:\n%s", r.stdout)
	}

	r = talkAt(t, d, "", "plan", "inspect", "ctl", "--json")
	r.want(t, 0, "plan inspect --json")
	var doc struct {
		Nodes []struct {
			Label string `json:"label"`
		} `json:"nodes"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil || len(doc.Nodes) != 3 {
		t.Fatalf("plan inspect --json: %v\n%s", err, r.stdout)
	}
	if got := doc.Nodes[0].Label; got != "Pay \x1b]0;title\x07now" {
		t.Errorf("--json label %q, want the raw label", got)
	}
	if got := doc.Nodes[1].Label; got != "Wipe\x1b[2J screen" {
		t.Errorf("--json label %q, want the raw label", got)
	}
}
