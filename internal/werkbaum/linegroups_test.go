package werkbaum

import (
	"context"
	"reflect"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dop251/goja"

	"talkd/internal/werkbaum/gen"
)

// hostLinesScript keeps the host's line matcher when the engine installs it and compares
// it with the script's own split per line: lineGroups answers the first line whose groups
// differ, and whether the host answered at all; hostParse compares the whole parse with the
// matcher on and off.
const hostLinesScript = `
(function (W) {
  var host = null;
  var install = W._setLineGroups;
  W._setLineGroups = function (fn) { host = fn; install(fn); };
  var RE = W._fastLineRE;
  W.methods.lineGroups = function (a) {
    var norm = W.normalize(a.text);
    var g = host(norm);
    if (g === null) return { declined: true };
    var lines = norm.split('\n');
    if (g.length !== lines.length * 9) return { line: -1, host: g.length, split: lines.length * 9 };
    for (var i = 0; i < lines.length; i++) {
      var fm = lines[i].split(RE);
      for (var k = 0; k < 9; k++) {
        var want = fm.length === 1 ? (k === 0 ? null : undefined) : fm[k + 1];
        if (g[i * 9 + k] !== want) return { line: i + 1, group: k + 1, host: String(g[i * 9 + k]), split: String(want) };
      }
    }
    return { same: true };
  };
  W.methods.hostParse = function (a) {
    var texts = [a.text, a.text + '\n- [ ] Lone \ud800 surrogate @j\u00f6rg\n'];
    for (var t = 0; t < texts.length; t++) {
      W._hostLines(false);
      var plain;
      try { plain = JSON.stringify(W._parseFresh(texts[t])); } finally { W._hostLines(true); }
      if (JSON.stringify(W._parseFresh(texts[t])) !== plain) return { same: false, text: t };
    }
    return { same: true };
  };
})(Werkbaum);`

// TestHostLineGroupsEqualSplit: the Go matcher of the parser's common lines (linegroups.go)
// answers for every line what the script's split by FAST_RE answers in goja, group by
// group, and the parse with it equals the parse without it — on the generated plans (half
// their lines non-ASCII: @jörg, #prüf12), the shared examples, names the fast path must
// leave to the general one, astral characters, CRLF and a byte-order mark, a separator with
// descriptions, and a text built in the script with a lone surrogate (the matcher declines
// it, TestHostLineGroupsDeclinesReplacementCharacter).
func TestHostLineGroupsEqualSplit(t *testing.T) {
	e := newTestEngine(t, Options{Runtimes: 1, Timeout: time.Minute, CacheEntries: -1}, hostLinesScript)
	texts := map[string]string{
		"plan 2000 seed 1": gen.Plan(2000, 1),
		"plan 600 seed 2":  gen.Plan(600, 2),
		"flat":             gen.Flat(600, 3),
		"deep":             gen.Deep(300, 100, 4),
		"names": "- [x] A #prüf1 (S) @jörg @Müller &qualität :#prüf1,#Łódź\n" +
			"- B @e\u0301x (M)\n- C @\U0001d400x &k\n- D #中文 @ß :#中文\n- E @zoë\u00a0(S)\n" +
			"  | [~] F #Łódź: @Łukasz Straße\n  | G (XS) @ana-maria @li.wei\n" +
			"- [ ] Ship 🚀 now (S) @jörg\n  \" note with 😀\n- [ ] 😀 (XS)\n\n" +
			"- [ ] Cont \\\n  glued @Müller\n- > [ ] Folded https://example.org/ä #x1\n---\n#prüf1\n  Straße ändern\n",
		"crlf and bom": "\ufeff- [ ] A @jörg\r\n  - [x] B (S)\r\n  \" note\r\n",
		"no newline":   "- [ ] Only line @Müller",
	}
	addExamplePlans(t, texts)
	for name, text := range texts {
		expectSame(t, e, "lineGroups", name, text, "the host's line groups differ from the split's")
		expectSame(t, e, "hostParse", name, text, "the parse with the host's line groups differs")
	}
}

// TestHostLineGroupsDeclinesReplacementCharacter: a text with U+FFFD (what goja hands Go
// for a lone surrogate) is left to the script's split.
func TestHostLineGroupsDeclinesReplacementCharacter(t *testing.T) {
	e := newTestEngine(t, Options{Runtimes: 1, Timeout: time.Minute, CacheEntries: -1}, hostLinesScript)
	raw, err := e.call(context.Background(), "lineGroups", struct{}{}, textArg{"text", "- [ ] A \ufffd @jörg\n"})
	if err != nil {
		t.Fatal(err)
	}
	if string(raw) != `{"declined":true}` {
		t.Errorf("the host matched a text with U+FFFD: %s", raw)
	}
}

// TestHostLineGroupsStopWhenTheCallStops: the matcher looks at the call's stop between
// lines (goja's interrupt cannot stop Go code) and declines once it is set, so a stopped
// call leaves Go within stopCheckLines lines of each matching goroutine; it matches every
// line while it is not set. The text is large enough to be matched on two goroutines.
func TestHostLineGroupsStopWhenTheCallStops(t *testing.T) {
	e := newTestEngine(t, Options{Runtimes: 1, Timeout: time.Minute, CacheEntries: -1})
	text := gen.Plan(2000, 1)
	lines := strings.Count(text, "\n") + 1
	if lines < parallelMinLines {
		t.Fatalf("the text has %d lines, the two goroutines start at %d", lines, parallelMinLines)
	}
	vm := goja.New()
	var looks atomic.Int64
	if v := e.lines.groups(vm, text, func() bool { looks.Add(1); return false }); goja.IsNull(v) {
		t.Fatal("the matcher declined a text while the call runs")
	}
	// Each half looks every stopCheckLines of its own lines: one look fewer than the
	// whole text's count at most, for the rest the two halves leave.
	if n := int(looks.Load()); n < lines/stopCheckLines-1 || n > lines/stopCheckLines {
		t.Errorf("the matcher looked at the stop %d times for %d lines, want every %d lines", n, lines, stopCheckLines)
	}
	if v := e.lines.groups(vm, text, func() bool { return true }); !goja.IsNull(v) {
		t.Error("the matcher went on after the call stopped")
	}
	// A stop seen only by the second half's goroutine (the first half runs on the
	// caller's) declines the text too.
	caller := goroutineHeader()
	if v := e.lines.groups(vm, text, func() bool { return goroutineHeader() != caller }); !goja.IsNull(v) {
		t.Error("the matcher went on after the second half saw the call stopped")
	}
}

// goroutineHeader is the first word pair of the running goroutine's stack ("goroutine
// N"), which tells two goroutines apart.
func goroutineHeader() string {
	buf := make([]byte, 64)
	buf = buf[:runtime.Stack(buf, false)]
	fields := strings.Fields(string(buf))
	return fields[0] + " " + fields[1]
}

// TestLineMatcherHalvesEqualOneGoroutine: the indices matched on two goroutines are those
// one goroutine matches, line by line (a generated plan with @jörg and @Müller, and the
// shared examples joined twice into one large text).
func TestLineMatcherHalvesEqualOneGoroutine(t *testing.T) {
	e := newTestEngine(t, Options{Runtimes: 1, Timeout: time.Minute, CacheEntries: -1})
	examples := map[string]string{}
	addExamplePlans(t, examples)
	var joined strings.Builder
	for range 2 {
		for _, text := range examples {
			joined.WriteString(text)
			joined.WriteString("\n- [ ] Joined @jörg @Müller (S)\n")
		}
	}
	for name, text := range map[string]string{"plan 3000 seed 7": gen.Plan(3000, 7), "examples": joined.String()} {
		lines := strings.Split(text, "\n")
		if len(lines) < parallelMinLines {
			t.Fatalf("%s: %d lines, the two goroutines start at %d", name, len(lines), parallelMinLines)
		}
		never := func() bool { return false }
		halves, one := make([][]int, len(lines)), make([][]int, len(lines))
		if !e.lines.matchAll(lines, halves, never) || !e.lines.matchLines(lines, one, never) {
			t.Fatalf("%s: the matcher stopped without a stop", name)
		}
		if !reflect.DeepEqual(halves, one) {
			t.Errorf("%s: the two goroutines' indices differ from one goroutine's", name)
		}
	}
}

// TestLineMatcherRefusesOtherFlags: the matcher runs the pattern on UTF-8 with flag u only;
// a pattern with other flags (i, m) would match differently there, so the engine refuses it.
func TestLineMatcherRefusesOtherFlags(t *testing.T) {
	if _, err := newLineMatcher(`^(a)$`, "ui"); err == nil {
		t.Error("the matcher took a pattern with flag i")
	}
	if _, err := newLineMatcher(`^(a)(b)(c)(d)(e)(f)(g)(h)(i)$`, "u"); err != nil {
		t.Errorf("the matcher refused a pattern with nine groups and flag u: %v", err)
	}
	if _, err := newLineMatcher(`^(a)$`, "u"); err == nil {
		t.Error("the matcher took a pattern with one group; the parser reads nine")
	}
}
