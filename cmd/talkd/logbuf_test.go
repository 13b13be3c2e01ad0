package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"talkd/internal/queue"
)

// writes records every Write call to it, as the file or pipe under talkd's log would see
// its write(2) calls.
type writes struct {
	mu    sync.Mutex
	calls []string
}

func (w *writes) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.calls = append(w.calls, string(p))
	return len(p), nil
}

func (w *writes) snapshot() (n int, all string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.calls), strings.Join(w.calls, "")
}

// TestLogInfoLinesBatched: a burst of info lines reaches the output in one write, within
// the flush delay and without anyone calling Flush, and in the order they were logged.
func TestLogInfoLinesBatched(t *testing.T) {
	out := &writes{}
	buf := newLogBuffer(out, 20*time.Millisecond, 1<<20)
	log := slog.New(flushingHandler{slog.NewTextHandler(buf, nil), buf})
	for i := range 100 {
		log.Info("announcement", "id", fmt.Sprintf("a%d", i))
	}
	if n, _ := out.snapshot(); n != 0 {
		t.Fatalf("%d writes before the delay, want the lines held", n)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		n, all := out.snapshot()
		if n > 0 {
			if n != 1 {
				t.Errorf("%d writes for one burst, want 1", n)
			}
			lines := strings.Split(strings.TrimSuffix(all, "\n"), "\n")
			if len(lines) != 100 {
				t.Fatalf("%d lines written, want 100:\n%s", len(lines), all)
			}
			for i, l := range lines {
				if !strings.Contains(l, fmt.Sprintf("msg=announcement id=a%d", i)) {
					t.Fatalf("line %d is %q", i, l)
				}
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the held lines were never written")
		}
		time.Sleep(time.Millisecond)
	}
}

// TestLogWarningWrittenAtOnce: a warning is written before Warn returns, after the info
// lines held before it.
func TestLogWarningWrittenAtOnce(t *testing.T) {
	out := &writes{}
	buf := newLogBuffer(out, time.Hour, 1<<20)
	log := slog.New(flushingHandler{slog.NewTextHandler(buf, nil), buf}).With("door", "/speak")
	log.Info("request refused", "status", 400)
	log.Warn("plan file refused", "plan", "p")
	n, all := out.snapshot()
	if n != 1 || !strings.Contains(all, "level=WARN") {
		t.Fatalf("after Warn: %d writes %q, want the warning written", n, all)
	}
	if i, j := strings.Index(all, "request refused"), strings.Index(all, "plan file refused"); i < 0 || j < i {
		t.Errorf("order lost: %q", all)
	}
	if !strings.Contains(all, "door=/speak") {
		t.Errorf("With's attributes lost: %q", all)
	}
	log.Error("talkd stopped")
	if n, all := out.snapshot(); n != 2 || !strings.HasSuffix(all, "msg=\"talkd stopped\" door=/speak\n") {
		t.Errorf("after Error: %d writes %q", n, all)
	}
}

// TestLogBatchLimit: a batch past the limit is written by the caller that filled it, so
// memory stays bounded under any rate of lines.
func TestLogBatchLimit(t *testing.T) {
	out := &writes{}
	buf := newLogBuffer(out, time.Hour, 1024)
	log := slog.New(flushingHandler{slog.NewTextHandler(buf, nil), buf})
	line := strings.Repeat("x", 100)
	for range 50 {
		log.Info("announcement", "pad", line)
	}
	n, _ := out.snapshot()
	if n < 4 || n > 10 {
		t.Errorf("%d writes for about 7.5 KB with a 1 KiB limit", n)
	}
	if err := buf.Flush(); err != nil {
		t.Fatal(err)
	}
	_, all := out.snapshot()
	if c := strings.Count(all, "\n"); c != 50 {
		t.Errorf("%d lines after Flush, want 50", c)
	}
	buf.mu.Lock()
	held := cap(buf.buf) + cap(buf.spare)
	buf.mu.Unlock()
	if held > 16<<10 {
		t.Errorf("the buffer holds %d bytes of storage for a 1 KiB limit", held)
	}
}

// TestLogConcurrentLinesWhole: lines logged from many goroutines while batches are written
// arrive whole and each exactly once.
func TestLogConcurrentLinesWhole(t *testing.T) {
	out := &writes{}
	buf := newLogBuffer(out, time.Millisecond, 4096)
	log := slog.New(flushingHandler{slog.NewTextHandler(buf, nil), buf})
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 500 {
				if i%100 == 99 {
					log.Warn("w", "g", g, "i", i)
				} else {
					log.Info("announcement", "g", g, "i", i)
				}
			}
		})
	}
	wg.Wait()
	if err := buf.Flush(); err != nil {
		t.Fatal(err)
	}
	_, all := out.snapshot()
	seen := map[string]bool{}
	for _, l := range strings.Split(strings.TrimSuffix(all, "\n"), "\n") {
		i := strings.Index(l, " g=")
		if !strings.HasPrefix(l, "time=") || i < 0 {
			t.Fatalf("broken line %q", l)
		}
		if seen[l[i:]] {
			t.Fatalf("line written twice: %q", l)
		}
		seen[l[i:]] = true
	}
	if len(seen) != 8*500 {
		t.Errorf("%d lines, want %d", len(seen), 8*500)
	}
}

// BenchmarkOutcomeLine: one muted announcement, whose outcome is one info line, with the
// log in a file: through talkd's logger (batched, textLines), through the same batching
// with slog.TextHandler formatting every line (batched-texthandler, as before textLines),
// through a plain TextHandler (one write(2) per line, as before the batching), and with no
// log at all (the floor).
//
//	go test -run '^$' -bench OutcomeLine -benchmem ./cmd/talkd
func BenchmarkOutcomeLine(b *testing.B) {
	for _, variant := range []string{"batched", "batched-texthandler", "unbatched", "discard"} {
		b.Run(variant, func(b *testing.B) {
			f, err := os.Create(filepath.Join(b.TempDir(), "talkd.log"))
			if err != nil {
				b.Fatal(err)
			}
			defer f.Close()
			var log *slog.Logger
			flush := func() error { return nil }
			if variant == "batched" {
				log, flush = newLogger(f, slog.LevelInfo)
			} else if variant == "batched-texthandler" {
				buf := newLogBuffer(f, logFlushDelay, logFlushBytes)
				log, flush = slog.New(flushingHandler{slog.NewTextHandler(buf, nil), buf}), buf.Flush
			} else if variant == "unbatched" {
				log = slog.New(slog.NewTextHandler(f, nil))
			} else {
				log = slog.New(slog.DiscardHandler)
			}
			v := mutedVoice(b, log)
			a := queue.Announcement{Text: "Tests are green on main", Priority: queue.High, Caller: "local"}
			ctx := context.Background()
			b.ReportAllocs()
			cpu := processCPU()
			n := 0
			for b.Loop() {
				if out, err := v.Submit(ctx, a); err != nil || out.Status != queue.StatusMuted {
					b.Fatalf("%+v %v", out, err)
				}
				n++
			}
			if err := flush(); err != nil {
				b.Fatal(err)
			}
			// CPU time (user + system, all threads, the last flush included) is what the
			// buffer saves; on a busy machine it is also steadier than the wall time.
			b.ReportMetric(float64(processCPU()-cpu)/float64(n), "cpu-ns/op")
		})
	}
}

// mutedVoice is a queue that answers every announcement "muted" at once, with stand-ins
// for the speaker and the store (nothing is spoken, history saves are dropped).
func mutedVoice(b *testing.B, log *slog.Logger) *queue.Voice {
	cfg := queue.Config{Capacity: 100, HistorySize: 500, FlushEvery: time.Hour}
	v, err := queue.New(cfg, silentSpeaker{}, nullStore{}, time.Now, log)
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go v.Run(ctx)
	b.Cleanup(func() {
		v.Close(ctx)
		cancel()
	})
	if _, err := v.Mute(context.Background(), nil); err != nil {
		b.Fatal(err)
	}
	return v
}

type silentSpeaker struct{}

func (silentSpeaker) Prepare(context.Context, queue.Utterance) (queue.Audio, error) {
	return nil, fmt.Errorf("silent")
}
func (silentSpeaker) Play(context.Context, queue.Utterance, queue.Audio) error { return nil }

type nullStore struct{}

func (nullStore) LoadMute() (queue.MuteState, error)     { return queue.MuteState{}, nil }
func (nullStore) SaveMute(queue.MuteState) error         { return nil }
func (nullStore) LoadHistory(int) ([]queue.Entry, error) { return nil, nil }
func (nullStore) SaveHistory([]queue.Entry, int) error   { return nil }
func (nullStore) NextSeq() (uint64, error)               { return 1, nil }

// processCPU is the user and system CPU time this process has used so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
