package gen

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"talkd/internal/werkbaum"
)

// unintended are the warnings a generated plan must not have (see the package comment).
var unintended = map[string]bool{
	"mixedGate": true, "unknownStatus": true, "descStray": true, "duplicateId": true,
	"unknownDep": true, "unknownDesc": true, "xorConflict": true, "sizeConflict": true,
}

// TestPlansParseAsIntended runs every generated plan through the engine: exactly the
// requested number of nodes, no unintended warning, depth and people as promised, under the
// input limit.
func TestPlansParseAsIntended(t *testing.T) {
	eng, err := werkbaum.NewEngine(werkbaum.Options{Runtimes: 1, Timeout: 20 * time.Second, CacheEntries: -1})
	if err != nil {
		t.Fatal(err)
	}
	type plan struct {
		name     string
		text     string
		nodes    int
		minDepth int
		maxDepth int
	}
	var plans []plan
	sizes := Sizes
	if testing.Short() {
		sizes = sizes[:3]
	}
	for _, n := range sizes {
		plans = append(plans, plan{"plan", Plan(n, 1), n, 2, 7})
	}
	plans = append(plans,
		plan{"plan seed 2", Plan(1000, 2), 1000, 2, 7},
		plan{"tiny", Plan(1, 3), 1, 0, 0},
		plan{"flat", Flat(5000, 1), 5000, 1, 1},
		plan{"deep", Deep(3000, 300, 1), 3000, 300, 300},
	)
	for _, p := range plans {
		if len(p.text) > werkbaum.DefaultMaxInputBytes {
			t.Errorf("%s %d: %d bytes, over the input limit", p.name, p.nodes, len(p.text))
			continue
		}
		in, err := eng.Inspect(context.Background(), p.text, werkbaum.InspectOptions{})
		if err != nil {
			t.Fatalf("%s %d: %v", p.name, p.nodes, err)
		}
		if len(in.Nodes) != p.nodes {
			t.Errorf("%s %d: %d nodes", p.name, p.nodes, len(in.Nodes))
		}
		for _, w := range in.Warnings {
			if unintended[w.Type] {
				t.Errorf("%s %d: unintended warning %+v", p.name, p.nodes, w)
			}
		}
		deepest := 0
		nonASCII := false
		for _, n := range in.Nodes {
			deepest = max(deepest, n.Depth)
			for _, who := range n.People {
				if who == "jörg" || who == "Müller" {
					nonASCII = true
				}
			}
		}
		if deepest < p.minDepth || deepest > p.maxDepth {
			t.Errorf("%s %d: deepest node at depth %d, want %d..%d", p.name, p.nodes, deepest, p.minDepth, p.maxDepth)
		}
		if p.nodes >= 1000 && !nonASCII {
			t.Errorf("%s %d: no @jörg or @Müller", p.name, p.nodes)
		}
	}
}

// TestPlansAreDeterministic: the same parameters give the same bytes, another seed others.
func TestPlansAreDeterministic(t *testing.T) {
	if Plan(2000, 7) != Plan(2000, 7) || Flat(300, 7) != Flat(300, 7) || Deep(300, 50, 7) != Deep(300, 50, 7) {
		t.Fatal("same seed, different plans")
	}
	if Plan(2000, 7) == Plan(2000, 8) {
		t.Fatal("different seeds, same plan")
	}
	// The shape the benchmarks rely on: realistic plans use all four gates, descriptions of
	// both kinds and dependencies.
	text := Plan(2000, 7)
	for _, want := range []string{"\n  | ", "= ", "+ ", "- ", "\" ", "\n---\n", " :#", "@jörg", "@Müller", "&taiga.", "> "} {
		if !strings.Contains(text, want) {
			t.Errorf("plan has no %q", want)
		}
	}
}

// TestCoupledIsTheExactSearchsHardCase: gen.Coupled(k, …) has k coupled groups and, up to
// 2^14 = 16,384 assignments (NOTATION §20 step 6's limit is 20,000), an exact path with
// no warning but the path's own notes; at k = 15 the search falls back to the greedy path
// (cheapApprox). Its line count is 4 + k·(2·width + 3), and it is deterministic.
func TestCoupledIsTheExactSearchsHardCase(t *testing.T) {
	if Coupled(14, 20, 1) != Coupled(14, 20, 1) || Coupled(14, 20, 1) == Coupled(14, 20, 2) {
		t.Fatal("Coupled is not a function of its parameters")
	}
	eng, err := werkbaum.NewEngine(werkbaum.Options{Runtimes: 1, Timeout: 20 * time.Second, CacheEntries: -1})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		k, width int
		exact    bool
	}{{14, 20, true}, {14, 5, true}, {15, 2, false}} {
		text := Coupled(c.k, c.width, 1)
		if lines := strings.Count(text, "\n"); lines != 4+c.k*(2*c.width+3) {
			t.Errorf("k=%d width=%d: %d lines, want %d", c.k, c.width, lines, 4+c.k*(2*c.width+3))
		}
		raw, err := eng.Analyze(context.Background(), text, werkbaum.AnalyzeOptions{File: "coupled.werkbaum"})
		if err != nil {
			t.Fatalf("k=%d: %v", c.k, err)
		}
		var a struct {
			Path struct {
				Exact bool `json:"exact"`
			} `json:"path"`
			Warnings []struct {
				Type string `json:"type"`
			} `json:"warnings"`
		}
		if err := json.Unmarshal(raw, &a); err != nil {
			t.Fatal(err)
		}
		if a.Path.Exact != c.exact {
			t.Errorf("k=%d: exact path %v, want %v", c.k, a.Path.Exact, c.exact)
		}
		for _, w := range a.Warnings {
			if unintended[w.Type] {
				t.Errorf("k=%d: unintended warning %s", c.k, w.Type)
			}
		}
	}
}
