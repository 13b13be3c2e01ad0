package plans

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"weak"

	"talkd/internal/config"
	"talkd/internal/queue"
	"talkd/internal/werkbaum"
)

// TestOutlineIsTheEngines: the summary's count and the compact reading share the engine's
// outline of a content: the one a reader gets is the engine's (the one it wrote with the
// view the start-up summary asked for), asking again gives the same, a new content gets its
// own and leaves the old one as it was; and reading the outline makes no answer with the
// base in the store (only werkbaum_inspect's full reading does).
func TestOutlineIsTheEngines(t *testing.T) {
	dir := t.TempDir()
	var cfg []config.Plan
	texts := map[string]string{}
	for i := range 3 {
		path := filepath.Join(dir, fmt.Sprintf("p%d.werkbaum", i))
		text := fmt.Sprintf("%%%% plan %d\n[~] #root: Release (L)\n  - [ ] #auth: Login @jörg (S)\n  - [ ] #docs: Docs @Müller (XS)\n", i)
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		cfg = append(cfg, config.Plan{Key: fmt.Sprintf("p%d", i), Path: path, Lang: "en"})
		texts[fmt.Sprintf("p%d", i)] = text
	}
	eng := testEngine(t, werkbaum.Options{})
	svc, err := New(Options{Plans: cfg, Engine: eng, DB: Bolt(stateDB(t, t.TempDir())), Lanes: &queue.Lanes{}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { svc.Close() })
	svc.warming.Wait() // the start-up summaries of every plan

	ctx := context.Background()
	key := cfg[0].Key
	got, err := svc.Outline(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	if written, err := eng.Outline(ctx, texts[key]); err != nil || got.Outline != written {
		t.Fatalf("the store's outline is not the engine's (%v)", err)
	}
	if again, _ := svc.Outline(ctx, key); again.Outline != got.Outline {
		t.Fatal("asking again gave another outline of the same content")
	}
	sum := svc.Summarize(ctx, key)
	if sum.Nodes != 3 || sum.Nodes != len(got.Outline.Nodes) || sum.Warnings != len(got.Outline.Warnings) || got.Base.Checksum != sum.Checksum {
		t.Fatalf("summary %+v, outline of %d nodes and %d warnings at %+v", sum, len(got.Outline.Nodes), len(got.Outline.Warnings), got.Base)
	}
	if n := got.Outline.Nodes[1]; n.ID != "auth" || n.Label != "Login" || n.Size != "S" || len(n.People) != 1 || n.People[0] != "jörg" || n.Depth != 1 {
		t.Fatalf("node 2 of the outline: %+v", n)
	}
	whole := viewKey(got.Base.Revision, werkbaum.InspectOptions{})
	if _, ok := svc.texts.View(key, got.Base.Checksum, whole); ok {
		t.Fatal("the summary or the compact reading made the store's answer with the base: a second copy of the view")
	}
	if _, err := svc.Inspect(ctx, key, werkbaum.InspectOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, ok := svc.texts.View(key, got.Base.Checksum, whole); !ok {
		t.Fatal("the full reading's answer with the base is not kept")
	}

	res, err := svc.Write(ctx, key, WriteRequest{Tool: "werkbaum_set_status", RequestID: "r1", ArgsHash: "h1", Base: got.Base,
		Verb: werkbaum.SetStatus{ID: "auth", Status: "done"}, Author: Author{Client: "local", Agent: "test"}})
	if err != nil || !res.Changed {
		t.Fatalf("write: %v %+v", err, res)
	}
	after, err := svc.Outline(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	if after.Outline == got.Outline || after.Outline.Nodes[1].Status != "done" || after.Base != res.Base {
		t.Fatalf("after the write: %+v at %+v (write at %+v)", after.Outline.Nodes[1], after.Base, res.Base)
	}
	if got.Outline.Nodes[1].Status == "done" {
		t.Fatal("the superseded outline was changed")
	}
}

// TestShedIdleFreesTheOutlines: after the engine's idle shed no outline is held anywhere
// (the store keeps none: each one becomes garbage), and the next reading of every plan,
// the compact one and the summary, is the one before, its outline decoded again. With and
// without the engine's result cache.
func TestShedIdleFreesTheOutlines(t *testing.T) {
	dir := t.TempDir()
	var cfg []config.Plan
	for i := range 3 {
		path := filepath.Join(dir, fmt.Sprintf("p%d.werkbaum", i))
		text := fmt.Sprintf("%%%% plan %d\n[~] #root: Release (L)\n  - [ ] #auth: Login @jörg (S)\n  - [x] #docs: Docs @Müller (XS) :#auth\n", i)
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		cfg = append(cfg, config.Plan{Key: fmt.Sprintf("p%d", i), Path: path, Lang: "en"})
	}
	for _, engineOpts := range []werkbaum.Options{{}, {CacheEntries: -1}} {
		eng := testEngine(t, engineOpts)
		svc, err := New(Options{Plans: cfg, Engine: eng, DB: Bolt(stateDB(t, t.TempDir())), Lanes: &queue.Lanes{}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { svc.Close() })
		svc.warming.Wait()
		ctx := context.Background()
		reading := func(key string) (string, *Outline) {
			t.Helper()
			got, err := svc.Outline(ctx, key)
			if err != nil {
				t.Fatal(err)
			}
			b, err := json.Marshal(struct {
				Base    Base
				Outline *Outline
				Summary Summary
			}{got.Base, got.Outline, svc.Summarize(ctx, key)})
			if err != nil {
				t.Fatal(err)
			}
			return string(b), got.Outline
		}
		before := map[string]string{}
		held := map[string]weak.Pointer[Outline]{}
		for _, p := range cfg {
			var o *Outline
			before[p.Key], o = reading(p.Key)
			held[p.Key] = weak.Make(o)
		}
		outlines, _, _ := eng.ShedIdle()
		if want := map[bool]int{true: 0, false: len(cfg)}[engineOpts.CacheEntries < 0]; outlines != want {
			t.Fatalf("ShedIdle dropped %d outlines, want %d", outlines, want)
		}
		runtime.GC()
		runtime.GC()
		for key, w := range held {
			if w.Value() != nil {
				t.Errorf("plan %s: its outline is still held after the engine's idle shed", key)
			}
		}
		for _, p := range cfg {
			if got, _ := reading(p.Key); got != before[p.Key] {
				t.Errorf("plan %s: the reading after the shed differs:\nbefore %s\nafter  %s", p.Key, before[p.Key], got)
			}
		}
	}
}
