package werkbaum

import (
	"context"
	"reflect"
	"testing"

	"talkd/internal/werkbaum/gen"
)

// TestOutlineOfTheWriterEqualsDecode: the outline the record writer yields with a whole
// plan's view (InspectOutline) is exactly what decoding that view gives (DecodeOutline, the
// outline's definition), on every plan of the view's tests (the shared examples, the case
// plans, non-ASCII names and escapes), generated plans with @jörg and @Müller, warnings
// and a path, and a text that is not valid UTF-8; and the view is the one InspectJSON
// gives.
func TestOutlineOfTheWriterEqualsDecode(t *testing.T) {
	ctx := context.Background()
	e := newTestEngine(t, Options{CacheEntries: -1})
	texts := append(viewTestPlans(t), gen.Plan(1000, 1), gen.Plan(3000, 7), gen.Coupled(6, 5, 1),
		"- [ ] bad \xff\xfe bytes #b @j\xc3rg :#b\n  - [x] \xed\xa0\x80 surrogate #s (M) @Müller\n  - [x] x #s\n")
	var nodes, warnings, withPath int
	for _, text := range texts {
		view, o, err := e.InspectOutline(ctx, text)
		if err != nil {
			t.Fatal(err)
		}
		if o == nil {
			t.Fatalf("no outline with the view of %.80q", text)
		}
		want, err := DecodeOutline(view)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(o, want) {
			for i := range min(len(o.Nodes), len(want.Nodes)) {
				if !reflect.DeepEqual(o.Nodes[i], want.Nodes[i]) {
					t.Logf("node %d: %#v\nwant %#v", i, o.Nodes[i], want.Nodes[i])
					break
				}
			}
			t.Fatalf("the writer's outline of %.80q differs from the decoded view (nodes %d/%d, warnings equal %v, path equal %v)",
				text, len(o.Nodes), len(want.Nodes), reflect.DeepEqual(o.Warnings, want.Warnings), reflect.DeepEqual(o.Path, want.Path))
		}
		plain, err := e.InspectJSON(ctx, text, InspectOptions{})
		if err != nil || string(plain) != string(view) {
			t.Fatalf("InspectOutline's view differs from InspectJSON's (%v)", err)
		}
		nodes += len(o.Nodes)
		warnings += len(o.Warnings)
		if o.Path != nil && len(o.Path.Stations) > 0 {
			withPath++
		}
	}
	if nodes < 5000 || warnings < 50 || withPath < 20 {
		t.Fatalf("too little compared: %d nodes, %d warnings, %d paths with stations", nodes, warnings, withPath)
	}
	t.Logf("%d plans: %d nodes, %d warnings, %d paths with stations", len(texts), nodes, warnings, withPath)
}

// TestInspectOutlineSharedAndFromDisk: the outline is kept with the cached view (a second
// call and a concurrent caller get the same one, no other inspect makes one), and a view
// read back from the persisted analyses comes without one (the reader decodes it).
func TestInspectOutlineSharedAndFromDisk(t *testing.T) {
	ctx := context.Background()
	text := gen.Plan(300, 2)
	dir := t.TempDir()
	p1 := openTestPersist(t, dir, 1<<30, nil)
	e := newTestEngine(t, Options{Persist: p1})
	_, first, err := e.InspectOutline(ctx, text)
	if err != nil || first == nil {
		t.Fatalf("first: %v %v", first, err)
	}
	_, again, _ := e.InspectOutline(ctx, text)
	if again != first {
		t.Fatal("the cached view's outline was not the one written with it")
	}
	ent, err := e.inspect(ctx, text, InspectOptions{Include: []string{"tree"}})
	if err != nil || ent.outline != nil {
		t.Fatalf("a view of some parts has an outline: %v %v", ent.outline, err)
	}
	closePersist(t, p1)

	p2 := openTestPersist(t, dir, 1<<30, nil)
	e2 := newTestEngine(t, Options{Persist: p2})
	view, o, err := e2.InspectOutline(ctx, text)
	if err != nil {
		t.Fatal(err)
	}
	if st := p2.Stats(); st.FromDisk != 1 {
		t.Fatalf("the restarted engine did not read the view from disk: %+v", st)
	}
	if o != nil {
		t.Fatal("a view read from disk came with an outline")
	}
	decoded, err := DecodeOutline(view)
	if err != nil || !reflect.DeepEqual(decoded, first) {
		t.Fatalf("the decoded outline of the view from disk differs from the written one (%v)", err)
	}
}
