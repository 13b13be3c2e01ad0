package plans

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"talkd/internal/config"
	"talkd/internal/queue"
	"talkd/internal/werkbaum"
)

// TestOutlineDecodedOncePerContent: the summary's count and the compact reading share one
// outline per content: the outline a reader gets is the one the engine wrote with the view
// the start-up summary asked for (nothing decoded it), asking again decodes nothing, a new
// content gets its own; at most outlinesKept outlines are kept, and a dropped one is
// decoded again when asked for.
func TestOutlineDecodedOncePerContent(t *testing.T) {
	dir := t.TempDir()
	var cfg []config.Plan
	texts := map[string]string{}
	for i := range outlinesKept + 2 {
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

	kept := func(key string) *Outline {
		svc.cache.mu.Lock()
		defer svc.cache.mu.Unlock()
		return svc.cache.summaries[key].outline.outline.Load()
	}
	var withOutline, dropped []string
	for _, p := range cfg {
		if kept(p.Key) != nil {
			withOutline = append(withOutline, p.Key)
		} else {
			dropped = append(dropped, p.Key)
		}
	}
	if len(withOutline) != outlinesKept || len(dropped) != 2 {
		t.Fatalf("outlines kept for %v, dropped for %v: want %d kept", withOutline, dropped, outlinesKept)
	}

	ctx := context.Background()
	key := withOutline[0]
	got, err := svc.Outline(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	if got.Outline != kept(key) {
		t.Fatal("the compact reading decoded the view again instead of taking the summary's outline")
	}
	if _, written, err := eng.InspectOutline(ctx, texts[key]); err != nil || written == nil || got.Outline != written {
		t.Fatalf("the store's outline is not the one the engine wrote with the view (%v)", err)
	}
	sum := svc.Summarize(ctx, key)
	if sum.Nodes != 3 || sum.Nodes != len(got.Outline.Nodes) || sum.Warnings != len(got.Outline.Warnings) || got.Base.Checksum != sum.Checksum {
		t.Fatalf("summary %+v, outline of %d nodes and %d warnings at %+v", sum, len(got.Outline.Nodes), len(got.Outline.Warnings), got.Base)
	}
	if n := got.Outline.Nodes[1]; n.ID != "auth" || n.Label != "Login" || n.Size != "S" || len(n.People) != 1 || n.People[0] != "jörg" || n.Depth != 1 {
		t.Fatalf("node 2 of the outline: %+v", n)
	}

	again, err := svc.Outline(ctx, dropped[0])
	if err != nil {
		t.Fatal(err)
	}
	if again.Outline == nil || kept(dropped[0]) != again.Outline || len(again.Outline.Nodes) != 3 {
		t.Fatal("a dropped outline was not decoded and kept again")
	}
	if second, _ := svc.Outline(ctx, dropped[0]); second.Outline != again.Outline {
		t.Fatal("asking again decoded the same content again")
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

	// A content superseded while its outline is kept does not keep it beside the new one.
	if _, err := svc.Write(ctx, dropped[0], WriteRequest{Tool: "werkbaum_set_status", RequestID: "r2", ArgsHash: "h2", Base: again.Base,
		Verb: werkbaum.SetStatus{ID: "docs", Status: "done"}, Author: Author{Client: "local", Agent: "test"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Outline(ctx, dropped[0]); err != nil {
		t.Fatal(err)
	}
	svc.cache.mu.Lock()
	defer svc.cache.mu.Unlock()
	for _, e := range svc.cache.outlines {
		if e.outline.outline.Load() == again.Outline {
			t.Fatal("the outline of the content before the write is still kept")
		}
	}
	if again.Outline.Nodes[2].Status == "done" {
		t.Fatal("the superseded outline was changed")
	}
}

// TestDropOutlinesKeepsTheReading: after DropOutlines (the daemon's idle shed) no content
// keeps an outline, and the next reading of a plan is the one before, its outline taken
// from the engine or decoded from the view again, and kept again.
func TestDropOutlinesKeepsTheReading(t *testing.T) {
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
		before := map[string]*Outlined{}
		for _, p := range cfg {
			if before[p.Key], err = svc.Outline(ctx, p.Key); err != nil {
				t.Fatal(err)
			}
		}
		// The engine's cache holds the same outlines; it lets go of its own (ShedIdle).
		eng.ShedIdle()
		if n := svc.DropOutlines(); n != len(cfg) {
			t.Fatalf("DropOutlines dropped %d outlines, want %d", n, len(cfg))
		}
		svc.cache.mu.Lock()
		for key, ent := range svc.cache.summaries {
			if ent.outline.outline.Load() != nil {
				t.Errorf("plan %s still keeps its outline", key)
			}
		}
		svc.cache.mu.Unlock()
		for _, p := range cfg {
			got, err := svc.Outline(ctx, p.Key)
			if err != nil {
				t.Fatal(err)
			}
			if got.Outline == before[p.Key].Outline {
				t.Errorf("plan %s: the outline after the drop is the very one before: nothing was dropped", p.Key)
			}
			if !reflect.DeepEqual(got, before[p.Key]) {
				t.Errorf("plan %s: the reading after DropOutlines differs:\nbefore %+v\nafter  %+v", p.Key, before[p.Key].Outline, got.Outline)
			}
		}
		if n := svc.DropOutlines(); n != len(cfg) {
			t.Fatalf("after the readings %d outlines were kept again, want %d", n, len(cfg))
		}
	}
}
