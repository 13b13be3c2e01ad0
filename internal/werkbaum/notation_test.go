package werkbaum

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// notationCase is one data-driven case of testdata/cases/*.json. The same files run under
// Node (js/test/cases.test.js), so this test proves that goja and V8 agree on every rule.
type notationCase struct {
	Name    string          `json:"name"`
	Text    *string         `json:"text"`
	Lines   []string        `json:"lines"`
	CRLF    bool            `json:"crlf"`
	Opts    json.RawMessage `json:"opts"`
	Expect  map[string]any  `json:"expect"`
	Inspect []struct {
		Opts   InspectOptions `json:"opts"`
		Expect map[string]any `json:"expect"`
		Error  string         `json:"error"`
	} `json:"inspect"`
}

func (c notationCase) text() string {
	if c.Text != nil {
		return *c.Text
	}
	sep := "\n"
	if c.CRLF {
		sep = "\r\n"
	}
	return strings.Join(c.Lines, sep)
}

// matchJSON compares a decoded JSON value with a partial expectation, with the semantics of
// cases.test.js: objects key by key (extra keys ignored), lists element by element with
// equal length, numbers within 1e-9, everything else exactly.
func matchJSON(got, want any, where string, out *[]string) {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			*out = append(*out, fmt.Sprintf("%s: got %v, want an object", where, got))
			return
		}
		for k, v := range w {
			matchJSON(g[k], v, where+"."+k, out)
		}
	case []any:
		g, ok := got.([]any)
		if !ok {
			*out = append(*out, fmt.Sprintf("%s: got %v, want a list", where, got))
			return
		}
		if len(g) != len(w) {
			*out = append(*out, fmt.Sprintf("%s: got %d entries %v, want %d %v", where, len(g), g, len(w), w))
			return
		}
		for i := range w {
			matchJSON(g[i], w[i], fmt.Sprintf("%s[%d]", where, i), out)
		}
	case float64:
		g, ok := got.(float64)
		if !ok || math.Abs(g-w) > 1e-9 {
			*out = append(*out, fmt.Sprintf("%s: got %v, want %v", where, got, w))
		}
	default:
		if got != want {
			*out = append(*out, fmt.Sprintf("%s: got %#v, want %#v", where, got, want))
		}
	}
}

// nodeOnLine finds the node object on the given line in a decoded result.
func nodeOnLine(nodes any, line string) (map[string]any, bool) {
	list, _ := nodes.([]any)
	for _, n := range list {
		m, _ := n.(map[string]any)
		if l, ok := m["line"].(float64); ok && strconv.Itoa(int(l)) == line {
			return m, true
		}
	}
	return nil, false
}

// casesDir is the folder of the data-driven notation cases.
func casesDir(t testing.TB) string {
	t.Helper()
	return filepath.Join("testdata", "cases")
}

// loadCases reads every case file, keyed by file name.
func loadCases(t testing.TB) map[string][]notationCase {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(casesDir(t), "*.json"))
	if err != nil || len(files) < 10 {
		t.Fatalf("case files: %v (%d)", err, len(files))
	}
	out := map[string][]notationCase{}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var cs []notationCase
		if err := json.Unmarshal(raw, &cs); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		out[filepath.Base(f)] = cs
	}
	return out
}

// caseEngine is an engine for correctness tests: no cache (every case really runs) and a
// deadline generous enough for a loaded CI machine.
func caseEngine(t testing.TB) *Engine {
	t.Helper()
	e, err := NewEngine(Options{CacheEntries: -1, Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func TestNotationCasesThroughGo(t *testing.T) {
	e := caseEngine(t)
	ctx := context.Background()
	all := loadCases(t)
	names := make([]string, 0, len(all))
	for f := range all {
		names = append(names, f)
	}
	sort.Strings(names)
	for _, f := range names {
		for _, c := range all[f] {
			t.Run(f+"/"+c.Name, func(t *testing.T) {
				text := c.text()
				if c.Expect == nil && c.Inspect == nil {
					t.Fatal("case without expectations")
				}
				if c.Expect != nil {
					checkAnalyzeCase(ctx, t, e, c, text)
				}
				for i, ins := range c.Inspect {
					raw, err := e.InspectJSON(ctx, text, ins.Opts)
					if ins.Error != "" {
						var ie *InputError
						if !errors.As(err, &ie) || ie.Code != "unknownId" {
							t.Errorf("inspect %d %+v: got %v, want an unknownId input error", i, ins.Opts, err)
						}
						continue
					}
					if err != nil {
						t.Fatalf("inspect %d: %v", i, err)
					}
					var got map[string]any
					if err := json.Unmarshal(raw, &got); err != nil {
						t.Fatal(err)
					}
					var diffs []string
					for k, want := range ins.Expect {
						switch k {
						case "nodes":
							for line, wn := range want.(map[string]any) {
								n, ok := nodeOnLine(got["nodes"], line)
								if !ok {
									diffs = append(diffs, "inspect: no node on line "+line)
									continue
								}
								matchJSON(n, wn, "inspect node "+line, &diffs)
							}
						case "absent":
							for _, key := range want.([]any) {
								if _, ok := got[key.(string)]; ok {
									diffs = append(diffs, fmt.Sprintf("inspect: key %v present", key))
								}
							}
						case "nodeLines":
							var lines []any
							list, _ := got["nodes"].([]any)
							for _, n := range list {
								lines = append(lines, n.(map[string]any)["line"])
							}
							if lines == nil {
								lines = []any{}
							}
							matchJSON(lines, want, "inspect nodeLines", &diffs)
						default:
							matchJSON(got[k], want, "inspect "+k, &diffs)
						}
					}
					for _, d := range diffs {
						t.Errorf("inspect %d %+v: %s", i, ins.Opts, d)
					}
				}
			})
		}
	}
}

// checkAnalyzeCase runs one case through Analyze and applies its expectation.
func checkAnalyzeCase(ctx context.Context, t *testing.T, e *Engine, c notationCase, text string) {
	t.Helper()
	var opts struct {
		AnalyzeOptions
		Checksum string `json:"checksum"`
	}
	if len(c.Opts) > 0 {
		if err := json.Unmarshal(c.Opts, &opts); err != nil {
			t.Fatal(err)
		}
	}
	raw, err := e.Analyze(ctx, text, opts.AnalyzeOptions)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatal(err)
	}
	var diffs []string
	for k, want := range c.Expect {
		switch k {
		case "checksum":
			// The Go host computes the checksum itself; Node's case passes one in.
			if got["checksum"] != NotationChecksum(text) {
				diffs = append(diffs, fmt.Sprintf("checksum %v, want %s", got["checksum"], NotationChecksum(text)))
			}
		case "nodes":
			if list, ok := want.([]any); ok {
				matchJSON(got["nodes"], list, "nodes", &diffs)
				continue
			}
			for line, wn := range want.(map[string]any) {
				n, ok := nodeOnLine(got["nodes"], line)
				if !ok {
					diffs = append(diffs, "no node on line "+line)
					continue
				}
				matchJSON(n, wn, "node "+line, &diffs)
			}
		case "labels":
			var labels []any
			for _, n := range got["nodes"].([]any) {
				labels = append(labels, n.(map[string]any)["label"])
			}
			if labels == nil {
				labels = []any{}
			}
			matchJSON(labels, want, "labels", &diffs)
		default:
			matchJSON(got[k], want, k, &diffs)
		}
	}
	for _, d := range diffs {
		t.Error(d)
	}
}
