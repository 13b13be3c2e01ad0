package werkbaum

import (
	"fmt"
	"regexp"
	"runtime"
	"strings"
	"unicode/utf8"

	"github.com/dop251/goja"
	"github.com/dop251/goja/parser"
)

// This file gives the parser (js/10_parse.js) the groups of its one-regexp line reader,
// FAST_RE, for all lines of a text in one call.
//
// Why: the parser reads a common line with one split by FAST_RE. In goja each split is a
// native call that makes a list object (an object and a Go map in goja) and, for a line
// with a non-ASCII character, converts the line from UTF-16 to UTF-8 and back; on the
// generated 10,000-node plan the splits were 50 ms of a 200 ms parse and a third of its
// allocations. Go's regexp, which goja runs FAST_RE on anyway, matches the UTF-8 text
// here line by line and answers one list for all of them.
//
// One rule, one place: the pattern is the script's own (Werkbaum._fastLineRE),
// translated by goja's own translator and run by the same Go matcher that goja runs it
// on, so a line gets the groups a split gives it (TestHostLineGroupsEqualSplit). Hosts
// without this function (Node, a browser) split each line.

// lineGroupsPerLine is the number of FAST_RE's capturing groups, the entries per line.
const lineGroupsPerLine = 9

// lineMatcher is FAST_RE compiled for Go; safe for concurrent use by all runtimes.
type lineMatcher struct {
	re *regexp.Regexp
}

// newLineMatcher compiles the script's pattern (JavaScript syntax) as goja does. The
// matcher runs on UTF-8 text, which means flag u (code points) and no other flag.
func newLineMatcher(source, flags string) (*lineMatcher, error) {
	if flags != "u" {
		return nil, fmt.Errorf("the parser's line pattern has flags %q, the matcher runs it with u only", flags)
	}
	goSource, err := parser.TransformRegExp(source, false, true)
	if err != nil {
		return nil, fmt.Errorf("translate the parser's line pattern: %w", err)
	}
	re, err := regexp.Compile(goSource)
	if err != nil {
		return nil, fmt.Errorf("compile the parser's line pattern: %w", err)
	}
	if re.NumSubexp() != lineGroupsPerLine {
		return nil, fmt.Errorf("the parser's line pattern has %d groups, want %d", re.NumSubexp(), lineGroupsPerLine)
	}
	return &lineMatcher{re: re}, nil
}

// stopCheckLines is how many lines a matching goroutine matches between two looks at
// stopped: about a millisecond of work, so a call stopped by its deadline leaves Go soon
// (goja's interrupt cannot stop Go code; the largest text, 2 MiB, takes about 100 ms here).
const stopCheckLines = 512

// parallelMinLines is the smallest text (in lines) whose lines are matched on two
// goroutines. The matching is all Go and the script waits for it, so on a machine with a
// second processor a large text's second half is matched beside the first: the generated
// 10,000-node plan's lines took about 13 ms of a fresh daemon's first inspect on one
// goroutine (docs/bench-plans.md, issue 33). Below this a goroutine's start and the
// second list are not worth it.
const parallelMinLines = 2048

// groups answers Werkbaum's hostLineGroups(text): for every line of text (split at '\n'),
// FAST_RE's groups 1 to 9 (undefined for a group that did not take part), or null and
// eight undefined for a line it does not match. It declines (null) a text with U+FFFD:
// goja hands a lone UTF-16 surrogate to Go as U+FFFD, and the script's split would see the
// surrogate, so such a text is left to the split. It declines too once stopped reports
// the call stopped: the script then goes on and goja's interrupt ends it.
func (m *lineMatcher) groups(vm *goja.Runtime, text string, stopped func() bool) goja.Value {
	if strings.ContainsRune(text, utf8.RuneError) {
		return goja.Null()
	}
	lines := strings.Split(text, "\n")
	locs := make([][]int, len(lines))
	if !m.matchAll(lines, locs, stopped) {
		return goja.Null()
	}
	undefined, null := goja.Undefined(), goja.Null()
	vals := make([]any, 0, len(lines)*lineGroupsPerLine)
	for i, line := range lines {
		loc := locs[i]
		if loc == nil {
			vals = append(vals, null)
			for g := 1; g < lineGroupsPerLine; g++ {
				vals = append(vals, undefined)
			}
			continue
		}
		for g := 1; g <= lineGroupsPerLine; g++ {
			if loc[2*g] < 0 {
				vals = append(vals, undefined)
			} else {
				vals = append(vals, vm.ToValue(line[loc[2*g]:loc[2*g+1]]))
			}
		}
	}
	return vm.NewArray(vals...)
}

// matchAll sets locs[i] to FAST_RE's submatch indices in lines[i] (nil: no match), the
// second half of a large text on a goroutine of its own. It answers false if stopped
// reported the call stopped; it returns only after both halves have ended.
func (m *lineMatcher) matchAll(lines []string, locs [][]int, stopped func() bool) bool {
	if len(lines) < parallelMinLines || runtime.GOMAXPROCS(0) < 2 {
		return m.matchLines(lines, locs, stopped)
	}
	half := len(lines) / 2
	second := make(chan bool, 1)
	go func() { second <- m.matchLines(lines[half:], locs[half:], stopped) }()
	first := m.matchLines(lines[:half], locs[:half], stopped)
	return <-second && first
}

// matchLines matches lines into locs, looking at stopped every stopCheckLines lines.
func (m *lineMatcher) matchLines(lines []string, locs [][]int, stopped func() bool) bool {
	for i, line := range lines {
		if (i+1)%stopCheckLines == 0 && stopped() {
			return false
		}
		locs[i] = m.re.FindStringSubmatchIndex(line)
	}
	return true
}

// install gives the runtime's parser the matcher (Werkbaum._setLineGroups).
func (m *lineMatcher) install(rt *jsRuntime, ns *goja.Object) error {
	vm := rt.vm
	set, ok := goja.AssertFunction(ns.Get("_setLineGroups"))
	if !ok {
		return fmt.Errorf("%w: Werkbaum._setLineGroups is not a function", ErrEngine)
	}
	stopped := func() bool { return rt.stopped.Load() != nil }
	fn := func(call goja.FunctionCall) goja.Value {
		return m.groups(vm, call.Argument(0).String(), stopped)
	}
	if _, err := set(goja.Undefined(), vm.ToValue(fn)); err != nil {
		return fmt.Errorf("%w: install the line matcher: %v", ErrEngine, err)
	}
	return nil
}
