package plans

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"talkd/internal/config"
	"talkd/internal/queue"
	"talkd/internal/werkbaum"
)

// recordLog keeps the messages and attributes of the records logged to it.
type recordLog struct {
	mu   sync.Mutex
	recs []map[string]string // "msg" and each attribute, as text
}

func (l *recordLog) Enabled(context.Context, slog.Level) bool { return true }
func (l *recordLog) WithAttrs([]slog.Attr) slog.Handler       { return l }
func (l *recordLog) WithGroup(string) slog.Handler            { return l }
func (l *recordLog) Handle(_ context.Context, r slog.Record) error {
	rec := map[string]string{"msg": r.Message}
	r.Attrs(func(a slog.Attr) bool {
		rec[a.Key] = a.Value.String()
		return true
	})
	l.mu.Lock()
	l.recs = append(l.recs, rec)
	l.mu.Unlock()
	return nil
}

// with returns the records with message msg.
func (l *recordLog) with(msg string) []map[string]string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []map[string]string
	for _, r := range l.recs {
		if r["msg"] == msg {
			out = append(out, r)
		}
	}
	return out
}

const (
	warmedMsg   = "plan view made after the writes paused"
	computedMsg = "werkbaum: answer computed"
)

// TestWarmAfterWritesMakesTheLastView: once a burst of agent writes pauses, the plan's
// whole view of the last text is made once (not one per write of the burst), by the
// store's summary; the reading after it computes nothing, and its answer (and the compact
// reading's outline, and plans_list's counts) equals a fresh engine's of the file.
func TestWarmAfterWritesMakesTheLastView(t *testing.T) {
	ctx := context.Background()
	var text strings.Builder
	text.WriteString("Plan #root @jörg\n")
	for i := range 40 {
		fmt.Fprintf(&text, "  [ ] Task %d #t%d @Müller (S)\n", i, i)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "plan.werkbaum")
	if err := os.WriteFile(path, []byte(text.String()), 0o640); err != nil {
		t.Fatal(err)
	}
	logs := &recordLog{}
	log := slog.New(logs)
	eng := testEngine(t, werkbaum.Options{Logger: log})
	svc, err := New(Options{Plans: []config.Plan{{Key: "p", Path: path, Lang: "en"}}, Engine: eng, DB: Bolt(stateDB(t, dir)),
		Lanes: &queue.Lanes{}, Log: log, WarmAfter: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { svc.Close() })
	svc.warming.Wait() // the summary at start

	snap, err := svc.Read(ctx, "p")
	if err != nil {
		t.Fatal(err)
	}
	base := snap.Base
	var sums []string
	for i := range 5 {
		res, err := svc.Write(ctx, "p", WriteRequest{Tool: "set_status", RequestID: fmt.Sprintf("w%d", i), ArgsHash: "h", Base: base,
			Verb: werkbaum.SetStatus{ID: fmt.Sprintf("t%d", i), Status: "done"}, Author: Author{Client: "local", Agent: "test"}})
		if err != nil {
			t.Fatal(err)
		}
		base = res.Base
		sums = append(sums, res.Base.Checksum)
	}
	last := sums[len(sums)-1]

	deadline := time.Now().Add(20 * time.Second)
	for len(logs.with(warmedMsg)) == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("no %q logged within 20 s after the writes", warmedMsg)
		}
		time.Sleep(20 * time.Millisecond)
	}
	svc.afterWrites.close() // no later warm-up can add records below
	warmed := logs.with(warmedMsg)
	if len(warmed) != 1 || warmed[0]["checksum"] != last || warmed[0]["plan"] != "p" {
		t.Fatalf("warm-ups after a burst of 5 writes: %v, want one of plan p at the last checksum %s", warmed, last)
	}
	inspects := func(sum string) int {
		n := 0
		for _, r := range logs.with(computedMsg) {
			if r["method"] == "inspect" && r["text_sha256"] == sum {
				n++
			}
		}
		return n
	}
	for _, sum := range sums[:len(sums)-1] {
		if n := inspects(sum); n != 0 {
			t.Errorf("the view of an intermediate text of the burst (%s) was computed %d times", sum, n)
		}
	}
	if n := inspects(last); n != 1 {
		t.Errorf("the view of the last text was computed %d times, want once (the warm-up)", n)
	}

	computed := len(logs.with(computedMsg))
	got, err := svc.Inspect(ctx, "p", werkbaum.InspectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	outlined, err := svc.Outline(ctx, "p")
	if err != nil {
		t.Fatal(err)
	}
	sum := svc.Summarize(ctx, "p")
	if n := len(logs.with(computedMsg)); n != computed {
		t.Errorf("the readings after the warm-up computed %d answers, want none: %v", n-computed, logs.with(computedMsg)[computed:])
	}

	file, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if werkbaum.Checksum(file) != last || got.Base.Checksum != last {
		t.Fatalf("the file's checksum %s, the reading's %s, want the last write's %s", werkbaum.Checksum(file), got.Base.Checksum, last)
	}
	fresh, err := testEngine(t, werkbaum.Options{CacheEntries: -1}).InspectJSON(ctx, string(file), werkbaum.InspectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if want := withBase(got.Base, fresh); string(got.JSON) != string(want) {
		t.Errorf("the reading after the warm-up differs from a fresh analysis:\n got %.300s\nwant %.300s", got.JSON, want)
	}
	wantOutline, err := werkbaum.DecodeOutline(fresh)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := json.Marshal(outlined.Outline)
	b, _ := json.Marshal(wantOutline)
	if string(a) != string(b) {
		t.Errorf("the outline after the warm-up differs from a fresh analysis's:\n got %.300s\nwant %.300s", a, b)
	}
	if sum.Analysis != "" || sum.Nodes != len(wantOutline.Nodes) || sum.Warnings != len(wantOutline.Warnings) {
		t.Errorf("summary after the warm-up: %+v, want %d nodes and %d warnings", sum, len(wantOutline.Nodes), len(wantOutline.Warnings))
	}
}

// TestWarmWaitsForWritesUnderWay: the debounce never makes a view while an agent write is
// under way, and a write that changed nothing leaves the plan written before it waiting.
// (The timer is an hour: fire is called here as the timer would call it.)
func TestWarmWaitsForWritesUnderWay(t *testing.T) {
	var made []string
	w := newWarmer(time.Hour, func(key, sum string) { made = append(made, key+"@"+sum) })
	defer w.close()
	w.begin()
	w.begin()
	w.end("a", "1") // one write still under way
	w.fire()        // a timer that fired late finds it under way
	if len(made) != 0 {
		t.Fatalf("a view was made while a write was under way: %v", made)
	}
	w.end("", "") // changed nothing: "a" still waits
	w.fire()
	w.fire() // nothing waits any more
	if len(made) != 1 || made[0] != "a@1" {
		t.Fatalf("views made: %v, want a@1 once", made)
	}
}
