package plans

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"talkd/internal/config"
	"talkd/internal/queue"
	"talkd/internal/werkbaum"
	"talkd/internal/werkbaum/plans/planfs"
)

// benchPlan builds a seeded plan of about n nodes in 3–5 levels with sizes, statuses,
// people (non-ASCII among them), a few dependencies and descriptions.
func benchPlan(n int) string {
	rng := rand.New(rand.NewPCG(15, 16))
	sizes := []string{"XS", "S", "S", "M", "L"}
	boxes := []string{" ", " ", " ", "x", "~", "?", "!"}
	people := []string{"anna", "ben", "jörg", "Müller", "cleo"}
	var b strings.Builder
	b.WriteString("%% generated benchmark plan\n- [~] #r: Generated root (XXL)\n")
	count := 1
	for e := 0; count < n; e++ {
		fmt.Fprintf(&b, "  - [ ] #e%d: Epic %d (XXL) @%s\n", e, e, people[e%len(people)])
		count++
		for s := 0; s < 10 && count < n; s++ {
			fmt.Fprintf(&b, "    - [ ] #e%d.s%d: Story %d (XL)\n", e, s, s)
			count++
			for k := 0; k < 9 && count < n; k++ {
				fmt.Fprintf(&b, "      - [%s] #e%d.s%d.t%d: Task %d (%s) @%s", boxes[rng.IntN(len(boxes))], e, s, k, k,
					sizes[rng.IntN(len(sizes))], people[rng.IntN(len(people))])
				if e > 0 && k == 3 {
					fmt.Fprintf(&b, " :#e%d.s%d.t%d", e-1, s, k)
				}
				b.WriteString("\n")
				if k == 5 {
					b.WriteString("        Description of the task, one line.\n")
				}
				count++
			}
		}
	}
	return b.String()
}

// storeFor opens a Service on a plan file with text, logging into logs.
func storeFor(tb testing.TB, text string, engOpts werkbaum.Options, logs *syncWriter) (*Service, string) {
	tb.Helper()
	dir := tb.TempDir()
	path := filepath.Join(dir, "plan.werkbaum")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		tb.Fatal(err)
	}
	db, eng := stateDB(tb, dir), testEngine(tb, engOpts)
	var log *slog.Logger
	if logs != nil {
		log = slog.New(slog.NewTextHandler(logs, nil))
	}
	svc, err := New(Options{Plans: []config.Plan{{Key: "p", Path: path, Lang: "en"}}, Engine: eng, DB: Bolt(db), Lanes: &queue.Lanes{}, Log: log})
	if err != nil {
		tb.Fatal(err)
	}
	return svc, path
}

// TestReadNoticesInPlaceEditOfSameSize: an edit outside talkd that keeps the file (inode)
// and its size — and even sets the mtime back — is still noticed (ctime, and the racy
// rule for a content hashed within the same second).
func TestReadNoticesInPlaceEditOfSameSize(t *testing.T) {
	svc, path := storeFor(t, planText, werkbaum.Options{}, nil)
	ctx := context.Background()
	first, err := svc.Read(ctx, "p")
	if err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(path)
	edited := strings.Replace(planText, "[ ] #auth", "[x] #auth", 1)
	if len(edited) != len(planText) {
		t.Fatal("the edit must keep the size")
	}
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte(edited), 0); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if err := os.Chtimes(path, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	second, err := svc.Read(ctx, "p")
	if err != nil {
		t.Fatal(err)
	}
	if second.Text != edited || second.Base.Checksum == first.Base.Checksum || second.Base.Revision != first.Base.Revision+1 {
		t.Fatalf("in-place edit not noticed: %+v after %+v", second.Base, first.Base)
	}
}

// TestSummaryFailureCachedUntilChange: a plan the engine cannot analyse in time is
// summarised as failed once; later summaries answer from the cache (no second engine
// run, no wait) until the plan changes.
func TestSummaryFailureCachedUntilChange(t *testing.T) {
	logs := &syncWriter{b: &bytes.Buffer{}}
	svc, path := storeFor(t, benchPlan(3000), werkbaum.Options{Timeout: time.Millisecond, TimeoutPerMiB: -1, CacheEntries: -1}, logs)
	ctx := context.Background()
	var first Summary
	deadline := time.Now().Add(10 * time.Second)
	for first = svc.Summarize(ctx, "p"); first.Analysis == "pending" && time.Now().Before(deadline); first = svc.Summarize(ctx, "p") {
		time.Sleep(20 * time.Millisecond)
	}
	if first.Analysis != "failed" || !strings.Contains(first.Error, "deadline") {
		t.Fatalf("summary of a plan that times out: %+v", first)
	}
	for range 5 {
		start := time.Now()
		again := svc.Summarize(ctx, "p")
		if again.Analysis != "failed" || again.Error != first.Error {
			t.Fatalf("second summary: %+v", again)
		}
		if d := time.Since(start); d > summaryWait {
			t.Errorf("a cached failure took %v", d)
		}
	}
	if n := strings.Count(logs.String(), "plan summary failed"); n != 1 {
		t.Fatalf("the engine ran %d times for one content:\n%s", n, logs.String())
	}
	// A change is a new content: summarised again.
	if err := os.WriteFile(path, []byte(planText), 0o644); err != nil {
		t.Fatal(err)
	}
	for s := svc.Summarize(ctx, "p"); ; s = svc.Summarize(ctx, "p") {
		if s.Analysis != "pending" {
			if s.Checksum == first.Checksum {
				t.Fatalf("change not noticed: %+v", s)
			}
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// BenchmarkInspectCacheHit10k: werkbaum_inspect's store call on an unchanged 10,000-node
// plan. Target ≤ 5 ms (issue 16; was 55 ms: re-read, two hashes and three copies of the
// answer). "hit": the file's identity is unchanged (open, stat, revision lookup, the
// cached answer); "rehash": its identity changed but not its content (read and hash the
// file, then the cached answer), the cost every hit had before.
func BenchmarkInspectCacheHit10k(b *testing.B) {
	svc, _ := storeFor(b, benchPlan(10000), werkbaum.Options{Timeout: time.Minute}, nil)
	ctx := context.Background()
	in, err := svc.Inspect(ctx, "p", werkbaum.InspectOptions{})
	if err != nil {
		b.Fatal(err)
	}
	// The identity of a file changed less than planfs.RacyWindow ago is not trusted yet.
	time.Sleep(planfs.RacyWindow + 100*time.Millisecond)
	svc.Inspect(ctx, "p", werkbaum.InspectOptions{})
	b.Logf("10,000-node plan: answer %d bytes", len(in.JSON))
	b.Run("hit", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := svc.Inspect(ctx, "p", werkbaum.InspectOptions{}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("rehash", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			svc.texts.Distrust("p") // as if the file had changed
			if _, err := svc.Inspect(ctx, "p", werkbaum.InspectOptions{}); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkSummarize10k: one plans_list row of an unchanged 10,000-node plan.
func BenchmarkSummarize10k(b *testing.B) {
	svc, _ := storeFor(b, benchPlan(10000), werkbaum.Options{Timeout: time.Minute}, nil)
	ctx := context.Background()
	for svc.Summarize(ctx, "p").Analysis == "pending" {
	}
	time.Sleep(planfs.RacyWindow + 100*time.Millisecond)
	b.ReportAllocs()
	for b.Loop() {
		if s := svc.Summarize(ctx, "p"); s.Nodes == 0 {
			b.Fatalf("summary %+v", s)
		}
	}
}

// syncWriter serialises writes of the log handler (the summary runs in the background).
type syncWriter struct {
	mu sync.Mutex
	b  *bytes.Buffer
}

func (w *syncWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (w *syncWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}
