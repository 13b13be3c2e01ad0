package main

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestNeutralise(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"plain @jörg Müller (M)", "plain @jörg Müller (M)"},
		{"tab\tand\nlines\r\nkept", "tab\tand\nlines\r\nkept"},
		{"\x1b]0;title\x07Label", `\x1b]0;title\x07Label`},
		{"before\x1b[2Jafter", `before\x1b[2Jafter`},
		{"hidden\x1b[8mtext", `hidden\x1b[8mtext`},
		{"lone\rCR", `lone\x0dCR`},
		{"CR at the end\r", `CR at the end\x0d`},
		{"nul\x00 bell\x07 del\x7f", `nul\x00 bell\x07 del\x7f`},
		{"C1 \u009b2J and \u0085", `C1 \u009b2J and \u0085`},
		{"bare 8-bit CSI \x9b2J", `bare 8-bit CSI \x9b2J`},
		{"not C1: \u00a0 \u00e9 \ufeff", "not C1: \u00a0 \u00e9 \ufeff"},
		{"", ""},
	} {
		if got := neutralise(c.in); got != c.want {
			t.Errorf("neutralise(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// terminalSafe fails when out holds anything a terminal acts on besides tab, LF and CRLF.
func terminalSafe(t *testing.T, what, out string) {
	t.Helper()
	for i, r := range out {
		bad := r == utf8.RuneError || r == 0x7f || (r >= 0x80 && r <= 0x9f) ||
			(r < 0x20 && r != '\t' && r != '\n' && !(r == '\r' && strings.HasPrefix(out[i:], "\r\n")))
		if bad {
			t.Fatalf("%s: raw control character %U at byte %d:\n%q", what, r, i, out)
		}
	}
}

// hostileLabel carries a window-title sequence, a screen clear and a C1 CSI.
const hostileLabel = "Pay\x1b]0;owned\x07 now\x1b[2J\u009b8m"

// TestPlanHumanOutputNeutralisesControls: plan inspect, plans and plan show print plan
// text (labels, people, warnings, the error of a plan) with control characters escaped;
// --json carries them unchanged (as JSON escapes).
func TestPlanHumanOutputNeutralisesControls(t *testing.T) {
	label, _ := json.Marshal(hostileLabel)
	text, _ := json.Marshal("- [ ] " + hostileLabel + " #p\r\n\tsecond\x1b[2J\r\n")
	f := newCLIDaemon(t, func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Params struct {
				Name string `json:"name"`
			} `json:"params"`
		}
		raw, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(raw, &req)
		var result string
		switch req.Params.Name {
		case "werkbaum_inspect":
			result = `{"content":[{"type":"text","text":"x"}],"structuredContent":{"base":{"revision":1,"checksum":"c"},` +
				`"nodes":[{"line":1,"depth":0,"id":"p","label":` + string(label) + `,"status":"planned","people":["m\u001b[8m"],"station":true}],` +
				`"warnings":[{"type":"xorConflict","line":1,"text":` + string(label) + `}],` +
				`"path":{"exact":true,"needed":[1],"stations":[1],"cost":1,"assigneeLoads":{"m\u001b[8m":1}}}}`
		case "plans_list":
			result = `{"content":[{"type":"text","text":"x"}],"structuredContent":{"plans":[{"key":"p","access":"write","revision":1,"error":` + string(label) + `}]}}`
		case "werkbaum_read":
			result = `{"content":[{"type":"text","text":"x"}],"structuredContent":{"text":` + string(text) + `,"base":{"revision":1,"checksum":"c"},"lines":3}}`
		}
		io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":`+result+`}`)
	})
	env := map[string]string{"TALK_URL": f.srv.URL}

	out, errOut, code := runCLI(t, env, "", "plan", "inspect", "p")
	if code != exitOK {
		t.Fatalf("plan inspect: code %d, err %s", code, errOut)
	}
	terminalSafe(t, "plan inspect", out)
	if !strings.Contains(out, `Pay\x1b]0;owned\x07 now\x1b[2J\u009b8m`) || !strings.Contains(out, `@m\x1b[8m`) {
		t.Fatalf("plan inspect does not show the escaped label and person:\n%s", out)
	}

	out, _, code = runCLI(t, env, "", "plans")
	if code != exitOK {
		t.Fatalf("plans: code %d", code)
	}
	terminalSafe(t, "plans", out)
	if !strings.Contains(out, `error: Pay\x1b]0;owned`) {
		t.Fatalf("plans does not show the escaped error:\n%s", out)
	}

	out, _, code = runCLI(t, env, "", "plan", "show", "p")
	if code != exitOK {
		t.Fatalf("plan show: code %d", code)
	}
	terminalSafe(t, "plan show", out)
	if want := "- [ ] " + `Pay\x1b]0;owned\x07 now\x1b[2J\u009b8m` + " #p\r\n\tsecond" + `\x1b[2J` + "\r\n"; out != want {
		t.Fatalf("plan show:\n%q\nwant\n%q", out, want)
	}

	// --json is exempt: the label arrives unchanged once the JSON is decoded.
	out, _, code = runCLI(t, env, "", "plan", "inspect", "p", "--json")
	if code != exitOK {
		t.Fatalf("plan inspect --json: code %d", code)
	}
	var doc struct {
		Nodes []struct {
			Label string `json:"label"`
		} `json:"nodes"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || len(doc.Nodes) != 1 || doc.Nodes[0].Label != hostileLabel {
		t.Fatalf("plan inspect --json: %v %q", err, out)
	}
}

// TestCountNoun: the summaries say "1 warning", never "1 warnings".
func TestCountNoun(t *testing.T) {
	for n, want := range map[int]string{0: "0 warnings", 1: "1 warning", 2: "2 warnings"} {
		if got := count(n, "warning"); got != want {
			t.Errorf("count(%d) = %q, want %q", n, got, want)
		}
	}
}

// TestPlansSayWhatIsNotCounted: a plan the daemon is still counting (analysis "pending")
// or could not count ("failed", or an error) has no node and warning counts; talk plans
// and talk status say so instead of showing its zeros as an empty plan.
func TestPlansSayWhatIsNotCounted(t *testing.T) {
	rows := `[{"key":"done","access":"write","revision":3,"lines":240,"nodes":231,"warnings":1},` +
		`{"key":"big","access":"read","revision":1,"lines":12115,"nodes":0,"warnings":0,"analysis":"pending"},` +
		`{"key":"slow","access":"write","revision":2,"lines":9,"nodes":0,"warnings":0,"analysis":"failed","error":"the engine ran out of time"}]`
	f := newCLIDaemon(t, func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"x"}],"structuredContent":{"plans":`+rows+`}}}`)
	})
	out, errOut, code := runCLI(t, map[string]string{"TALK_URL": f.srv.URL}, "", "plans")
	if code != exitOK {
		t.Fatalf("plans: code %d, err %s", code, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 4 {
		t.Fatalf("plans:\n%s", out)
	}
	for i, want := range [][]string{
		{"done", " 240 ", " 231 ", " 1 "},
		{"big", " 12115 ", " - ", "(still being counted)"},
		{"slow", " 9 ", " - ", "error: the engine ran out of time"},
	} {
		for _, w := range want {
			if !strings.Contains(lines[i+1], w) {
				t.Errorf("plans row %d lacks %q:\n%s", i+1, w, out)
			}
		}
	}
	if strings.Contains(lines[2], " 0 ") || strings.Contains(lines[3], " 0 ") {
		t.Errorf("plans shows counts of uncounted plans:\n%s", out)
	}

	var list []json.RawMessage
	if err := json.Unmarshal([]byte(rows), &list); err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{
		"done (write, revision 3, 231 nodes, 1 warning)",
		"big (read, revision 1, still being counted)",
		"slow (write, revision 2, error: the engine ran out of time)",
	} {
		if got := planSummary(list[i]); got != want {
			t.Errorf("status line of plan %d: %q, want %q", i, got, want)
		}
	}
	hostile, _ := json.Marshal(map[string]any{"key": "notes:" + hostileLabel + ".werkbaum", "access": "read", "error": "cannot read " + hostileLabel})
	got := planSummary(hostile)
	terminalSafe(t, "status line", got)
	if !strings.Contains(got, `error: cannot read Pay\x1b]0;owned`) {
		t.Errorf("status line of a hostile plan name: %q", got)
	}
}
