package werkbaum

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"talkd/internal/werkbaum/gen"
)

// bothPathsScript parses a text with the one-regexp path for common lines and with the
// general path only, and reports the first node line on which the documents differ.
const bothPathsScript = `
Werkbaum.methods.bothPaths = function (a) {
  Werkbaum._fastParse(false);
  var slow;
  try { slow = Werkbaum._parseFresh(a.text); } finally { Werkbaum._fastParse(true); }
  var fast = Werkbaum._parseFresh(a.text);
  if (JSON.stringify(fast) === JSON.stringify(slow)) return { same: true };
  for (var i = 0; i < Math.max(fast.all.length, slow.all.length); i++) {
    var f = JSON.stringify(fast.all[i]), s = JSON.stringify(slow.all[i]);
    if (f !== s) return { same: false, fast: f, slow: s };
  }
  return { same: false, fast: JSON.stringify(fast.warnings), slow: JSON.stringify(slow.warnings) };
};`

// TestFastPathEqualsGeneralPathInGoja: the parser's fast path reads every line like the
// general path in goja too (js/test/fastpath.test.js checks Node), on the generated
// benchmark plans — full of non-ASCII names (@jörg, #prüf12) — the shared examples and
// lines with names the fast path must leave to the general one. Lone surrogates are
// compared in Node only (fastpath.test.js): no text reaches goja from Go with one (a Go
// string is UTF-8, and goja receives U+FFFD for a surrogate's bytes), and goja's trim
// turns one into U+FFFD, so its general path (which trims the label) is no reference
// there.
func TestFastPathEqualsGeneralPathInGoja(t *testing.T) {
	e := newTestEngine(t, Options{Runtimes: 1, Timeout: time.Minute, CacheEntries: -1}, bothPathsScript)
	texts := map[string]string{
		"plan 600 seed 1": gen.Plan(600, 1),
		"plan 600 seed 2": gen.Plan(600, 2),
		"flat":            gen.Flat(600, 3),
		"deep":            gen.Deep(300, 100, 4),
		"names": "- [x] A #prüf1 (S) @jörg @Müller &qualität :#prüf1,#Łódź\n" +
			"- B @e\u0301x (M)\n- C @\U0001d400x &k\n- D #中文 @ß :#中文\n- E @zoë\u00a0(S)\n" +
			"  | [~] F #Łódź: @Łukasz\n  | G (XS) @ana-maria @li.wei\n" +
			"- [ ] Ship 🚀 now (S) @jörg\n  \" note with 😀\n- [ ] 😀 (XS)\n",
	}
	addExamplePlans(t, texts)
	for name, text := range texts {
		expectSame(t, e, "bothPaths", name, text, "the fast path reads a line differently")
	}
}

// expectSame calls method, a test script's comparison of two ways of reading text, and
// fails the test with what (and the script's answer) when it does not answer {"same":true}.
func expectSame(t *testing.T, e *Engine, method, name, text, what string) {
	t.Helper()
	raw, err := e.call(context.Background(), method, struct{}{}, textArg{"text", text})
	if err != nil {
		t.Fatalf("%s: %s: %v", name, method, err)
	}
	if string(raw) != `{"same":true}` {
		t.Errorf("%s: %s:\n%s", name, what, raw)
	}
}

// addExamplePlans adds the shared examples' plans to texts, keyed by file name (none when
// ../shared is not there: the tests then run on their own texts).
func addExamplePlans(t testing.TB, texts map[string]string) {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(sharedDir(t), "werkbaum", "examples", "*.werkbaum"))
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		texts[filepath.Base(f)] = string(src)
	}
}
