package werkbaum

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// The line rules' costs on the paths a document PATCH takes: the diff of one changed line
// on a real plan (werkbaum.werkbaum, 231 nodes) and on a 2 MiB text, its apply, a rebase,
// and the diff at the LCS cut-off (1000 x 1000 differing lines).

func oneLineChange(text string) string {
	lines := strings.Split(text, "\n")
	lines[len(lines)/2] += " changed"
	return strings.Join(lines, "\n")
}

func text2MiB() string {
	var sb strings.Builder
	for i := 0; sb.Len() < DefaultMaxInputBytes-100; i++ {
		fmt.Fprintf(&sb, "- [ ] task %d @jörg (S)\n", i)
	}
	return sb.String()
}

func benchDiff(b *testing.B, from, to string) {
	e := benchEngine(b)
	ctx := context.Background()
	b.SetBytes(int64(len(from)))
	b.ResetTimer()
	for b.Loop() {
		if _, err := e.DiffLines(ctx, from, to); err != nil {
			b.Fatal(err)
		}
	}
}

func benchApply(b *testing.B, from, to string) {
	e := benchEngine(b)
	ctx := context.Background()
	ops, err := e.DiffLines(ctx, from, to)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(from)))
	b.ResetTimer()
	for b.Loop() {
		if _, err := e.ApplyLines(ctx, from, ops); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDiffLinesOneLineWerkbaum(b *testing.B) {
	t := readExample(b, "werkbaum.werkbaum")
	benchDiff(b, t, oneLineChange(t))
}

func BenchmarkApplyLinesOneLineWerkbaum(b *testing.B) {
	t := readExample(b, "werkbaum.werkbaum")
	benchApply(b, t, oneLineChange(t))
}

func BenchmarkDiffLinesOneLine2MiB(b *testing.B) {
	t := text2MiB()
	benchDiff(b, t, oneLineChange(t))
}

func BenchmarkApplyLinesOneLine2MiB(b *testing.B) {
	t := text2MiB()
	benchApply(b, t, oneLineChange(t))
}

func BenchmarkDiffLinesCutOff1000(b *testing.B) {
	var x, y []string
	for i := range 1000 {
		x = append(x, fmt.Sprintf("a%d", i))
		y = append(y, fmt.Sprintf("b%d", i))
	}
	x[500], y[500] = "K", "K"
	benchDiff(b, strings.Join(x, "\n"), strings.Join(y, "\n"))
}

func BenchmarkRebaseLines(b *testing.B) {
	e := benchEngine(b)
	ctx := context.Background()
	ops := []LineOp{{Op: "replace", Index: 40, Count: 1, Lines: []string{"- [x] mine"}}}
	since := []LineOp{{Op: "insert", Index: 3, Lines: []string{"- [ ] theirs"}}, {Op: "delete", Index: 90, Count: 2}}
	for b.Loop() {
		if _, ok, err := e.RebaseLines(ctx, ops, since); err != nil || !ok {
			b.Fatal(ok, err)
		}
	}
}
