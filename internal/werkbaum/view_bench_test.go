package werkbaum

import (
	"context"
	"testing"

	"github.com/dop251/goja"

	"talkd/internal/werkbaum/gen"
)

// BenchmarkWriteInspectParts is the Go side of an inspect alone: the node records written
// from the script's parts (view.go) of the generated 10,000-node plan, the parts computed
// once before the timer starts; "outlined" yields the view's outline too (outline.go), and
// "decode" is what the outline cost before: the records written, then the view decoded:
//
//	go test -run '^$' -bench 'WriteInspectParts' -benchmem ./internal/werkbaum
func BenchmarkWriteInspectParts(b *testing.B) {
	e := sizeEngine(b, false)
	rt, err := e.borrow(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	defer e.release(rt)
	res, err := rt.callParts(goja.Undefined(), rt.vm.ToValue(`{}`), rt.vm.ToValue("text"), rt.vm.ToValue(gen.Plan(10000, 1)))
	if err != nil {
		b.Fatal(err)
	}
	parts, ok := res.(*goja.Object)
	if !ok {
		b.Fatalf("callParts answered %v", res)
	}
	for _, c := range []struct {
		name     string
		outlined bool
		decode   bool
	}{{"view", false, false}, {"outlined", true, false}, {"decode", false, true}} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				out, _, err := writeInspectParts(parts, c.outlined)
				if err == nil && c.decode {
					_, err = DecodeOutline(out)
				}
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
