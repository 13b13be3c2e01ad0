package werkbaum

import (
	"context"
	"errors"
	"strings"
	"testing"
)

func TestLineRulesRoundTrip(t *testing.T) {
	e, err := NewEngine(Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	ops, err := e.DiffLines(ctx, "a\r\nb\nc\n", "a\nB\nc\n@jörg\n")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v", ops)
	out, err := e.ApplyLines(ctx, "a\r\nb\nc\n", ops)
	if err != nil || out != "a\nB\nc\n@jörg\n" {
		t.Fatalf("%q %v", out, err)
	}
	_, err = e.ApplyLines(ctx, "a\nb", []LineOp{{Op: "delete", Index: 1, Count: 5}})
	var ie *InputError
	if !errors.As(err, &ie) || ie.Code != CodeOpOutOfRange || !strings.Contains(err.Error(), "ops[0]") {
		t.Fatalf("%v", err)
	}
	t.Log(err)
	r, ok, err := e.RebaseLines(ctx, []LineOp{{Op: "replace", Index: 3, Count: 1, Lines: []string{"x"}}}, []LineOp{{Op: "insert", Index: 0, Lines: []string{"p", "q"}}})
	if err != nil || !ok || r[0].Index != 5 || r[0].Lines[0] != "x" {
		t.Fatalf("%+v %v %v", r, ok, err)
	}
	_, ok, err = e.RebaseLines(ctx, []LineOp{{Op: "replace", Index: 3, Count: 2, Lines: []string{"x"}}}, []LineOp{{Op: "insert", Index: 4, Lines: []string{"p"}}})
	if err != nil || ok {
		t.Fatal(ok, err)
	}
}
