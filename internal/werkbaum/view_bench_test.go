package werkbaum

import (
	"context"
	"testing"

	"github.com/dop251/goja"

	"talkd/internal/werkbaum/gen"
)

// BenchmarkWriteInspectParts is the Go side of an inspect alone: the node records written
// from the script's parts (view.go) of the generated 10,000-node plan, the parts computed
// once before the timer starts:
//
//	go test -run '^$' -bench 'WriteInspectParts' ./internal/werkbaum
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
	b.ResetTimer()
	for b.Loop() {
		if _, err := writeInspectParts(parts); err != nil {
			b.Fatal(err)
		}
	}
}
