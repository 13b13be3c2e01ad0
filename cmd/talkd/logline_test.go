package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"
)

// lineRunes are the pieces random strings are made of: plain letters, everything
// TextHandler quotes for (space, '=', '"', control bytes, Unicode spaces, unprintable and
// invalid runes) and what it leaves as it is (a backslash, DEL, non-ASCII letters).
var lineRunes = []string{"a", "Z", "0", "-", "/", ":", ".", "_", " ", "=", `"`, `\`, "\n", "\t", "\x00", "\x1f", "\x7f",
	"ä", "ö", "@jörg", "Müller", "€", "日本", "🙂", "\u00a0", "\u2028", "\u200b", "\u0301", "\xff", "\xc3", "\xed\xa0\x80"}

func randomLineString(rng *rand.Rand) string {
	var sb strings.Builder
	for range rng.IntN(6) {
		sb.WriteString(lineRunes[rng.IntN(len(lineRunes))])
	}
	return sb.String()
}

// randomLineAttr is an attribute of any kind, mostly the kinds textLines formats itself.
func randomLineAttr(rng *rand.Rand) slog.Attr {
	key := randomLineString(rng)
	switch rng.IntN(12) {
	case 0, 1, 2, 3:
		return slog.String(key, randomLineString(rng))
	case 4:
		return slog.Int64(key, rng.Int64()-rng.Int64())
	case 5:
		return slog.Int(key, rng.IntN(600))
	case 6:
		return slog.Uint64(key, rng.Uint64())
	case 7:
		return slog.Bool(key, rng.IntN(2) == 0)
	case 8:
		return slog.Duration(key, time.Duration(rng.Int64N(1e12)))
	case 9:
		return slog.Any(key, errors.New(randomLineString(rng)))
	case 10:
		return slog.Group(key, slog.String("k", randomLineString(rng)))
	}
	return slog.Float64(key, rng.Float64())
}

// TestTextLinesAsTextHandler: textLines writes every record as slog.TextHandler writes it,
// byte for byte — the outcome line, and random records of every level, time zone and
// attribute kind, with strings made of everything TextHandler quotes for.
func TestTextLinesAsTextHandler(t *testing.T) {
	var want, got bytes.Buffer
	text := slog.NewTextHandler(&want, &slog.HandlerOptions{Level: slog.LevelDebug})
	lines := newTextLines(&got, slog.LevelDebug)
	berlin := time.FixedZone("CET", 3600)
	check := func(r slog.Record) {
		t.Helper()
		want.Reset()
		got.Reset()
		if err := text.Handle(context.Background(), r.Clone()); err != nil {
			t.Fatal(err)
		}
		if err := lines.Handle(context.Background(), r.Clone()); err != nil {
			t.Fatal(err)
		}
		if got.String() != want.String() {
			t.Fatalf("textLines wrote\n%q\nslog.TextHandler\n%q", got.String(), want.String())
		}
	}
	outcome := slog.NewRecord(time.Now(), slog.LevelInfo, "announcement", 0)
	outcome.AddAttrs(slog.String("id", "a12"), slog.String("caller", "local"), slog.String("agent", "claude code"),
		slog.String("priority", "high"), slog.String("outcome", "muted"), slog.String("text", "Tests sind grün, @jörg"))
	check(outcome)
	// The same millisecond in two zones, and two instants of one millisecond: the time
	// written is the record's, not the last one's (textLines keeps the last one formatted).
	noon := time.Date(2026, 12, 6, 12, 0, 0, 400_000, berlin)
	for _, at := range []time.Time{noon, noon.UTC(), noon.Add(time.Millisecond - 400_001), noon.Add(time.Millisecond - 400_000), noon} {
		r := outcome.Clone()
		r.Time = at
		check(r)
	}
	rng := rand.New(rand.NewPCG(33, 1))
	levels := []slog.Level{slog.LevelDebug, slog.LevelInfo, slog.LevelWarn, slog.LevelError, slog.LevelInfo + 2, slog.LevelDebug - 1}
	times := []time.Time{{}, time.Now(), time.Now().UTC(), time.Date(2026, 12, 6, 12, 0, 0, 0, berlin),
		time.Date(2026, 1, 2, 3, 4, 5, 999_999_999, time.UTC), time.Date(1999, 12, 31, 23, 59, 59, 1_000_000, berlin)}
	plain := 0
	for range 20000 {
		r := slog.NewRecord(times[rng.IntN(len(times))], levels[rng.IntN(len(levels))], randomLineString(rng), 0)
		for range rng.IntN(8) {
			r.AddAttrs(randomLineAttr(rng))
		}
		if plainRecord(r) {
			plain++
		}
		check(r)
	}
	if plain < 2000 {
		t.Errorf("only %d of the random records were formatted by textLines itself", plain)
	}
}

// lockedLines collects the lines written to it from any goroutine.
type lockedLines struct {
	mu    sync.Mutex
	lines []string
}

func (l *lockedLines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, string(p))
	return len(p), nil
}

// TestTextLinesConcurrentTimes: goroutines logging at once, in milliseconds and zones that
// keep changing, each get their own record's time (the shared last-millisecond text is
// replaced, never changed, while others read it).
func TestTextLinesConcurrentTimes(t *testing.T) {
	var got lockedLines
	lines := newTextLines(&got, slog.LevelInfo)
	zones := []*time.Location{time.UTC, time.FixedZone("CET", 3600), time.FixedZone("NPT", 5*3600+45*60)}
	base := time.Date(2026, 12, 6, 15, 0, 0, 0, time.UTC)
	const workers, each = 4, 500
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				at := base.Add(time.Duration(i%7) * 700 * time.Microsecond).In(zones[(w+i)%len(zones)])
				r := slog.NewRecord(at, slog.LevelInfo, "announcement", 0)
				r.AddAttrs(slog.Int("worker", w), slog.Int("i", i))
				if err := lines.Handle(context.Background(), r); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	var want bytes.Buffer
	text := slog.NewTextHandler(&want, nil)
	wantLines := map[string]bool{}
	for w := range workers {
		for i := range each {
			at := base.Add(time.Duration(i%7) * 700 * time.Microsecond).In(zones[(w+i)%len(zones)])
			r := slog.NewRecord(at, slog.LevelInfo, "announcement", 0)
			r.AddAttrs(slog.Int("worker", w), slog.Int("i", i))
			want.Reset()
			if err := text.Handle(context.Background(), r); err != nil {
				t.Fatal(err)
			}
			wantLines[want.String()] = true
		}
	}
	if len(got.lines) != workers*each {
		t.Fatalf("%d lines, want %d", len(got.lines), workers*each)
	}
	for _, l := range got.lines {
		if !wantLines[l] {
			t.Fatalf("textLines wrote %q, which slog.TextHandler writes for none of the records", l)
		}
		delete(wantLines, l)
	}
}

// TestTextLinesDerivedLoggers: a logger made With attributes or a group writes through
// TextHandler, with them.
func TestTextLinesDerivedLoggers(t *testing.T) {
	var got bytes.Buffer
	log := slog.New(newTextLines(&got, slog.LevelInfo))
	log.With("door", "/speak").WithGroup("g").Info("request refused", "status", 403)
	if s := got.String(); !strings.Contains(s, `level=INFO msg="request refused" door=/speak g.status=403`) {
		t.Errorf("derived logger wrote %q", s)
	}
	got.Reset()
	log.Debug("hidden")
	if got.Len() != 0 {
		t.Errorf("a debug line passed the info level: %q", got.String())
	}
}

// BenchmarkOutcomeLineFormat is the outcome line of a refused announcement alone, as
// internal/queue hands it to the handler, through slog.TextHandler and through textLines
// (BenchmarkOutcomeLine has the whole announcement).
//
//	go test ./cmd/talkd -run '^$' -bench OutcomeLineFormat -benchmem
func BenchmarkOutcomeLineFormat(b *testing.B) {
	for _, c := range []struct {
		name string
		h    slog.Handler
	}{
		{"TextHandler", slog.NewTextHandler(io.Discard, nil)},
		{"textLines", newTextLines(io.Discard, slog.LevelInfo)},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				r := slog.NewRecord(time.Now(), slog.LevelInfo, "announcement", 0)
				r.AddAttrs(slog.String("id", "a123456"), slog.String("caller", "local"))
				r.AddAttrs(slog.String("priority", "high"), slog.String("outcome", "muted"))
				_ = c.h.Handle(context.Background(), r)
			}
		})
	}
}
