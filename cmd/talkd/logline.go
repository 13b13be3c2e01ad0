package main

import (
	"context"
	"io"
	"log/slog"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
	"unicode"
	"unicode/utf8"
)

// textLines is talkd's text handler: slog.TextHandler, except that the lines talkd writes
// on a request's path — a message and string, integer or boolean attributes, logged on the
// logger itself (no With, no group) — are formatted here, byte for byte as TextHandler
// formats them. The outcome line of every announcement (a refused one too) is such a line;
// TextHandler's generic path (attribute resolution, replace hooks, groups, a pooled state
// per record) formats it in about 0.6 µs of a tools/call speak's 27 µs of CPU under load,
// this in about 0.2 µs (BenchmarkOutcomeLineFormat). Every other record, and every logger
// derived with WithAttrs or WithGroup, goes to TextHandler itself.
// TestTextLinesAsTextHandler holds the two to the same bytes.
type textLines struct {
	text  *slog.TextHandler
	out   io.Writer
	stamp atomic.Pointer[stamp] // the last time written, formatted
}

// stamp is a record time truncated to the millisecond and its text in TextHandler's
// format. Lines logged in the same millisecond (tens of them under load) share it: the
// formatting was about a third of the outcome line's cost. Never changed once stored.
type stamp struct {
	at   time.Time
	text []byte
}

func newTextLines(out io.Writer, level slog.Leveler) *textLines {
	return &textLines{text: slog.NewTextHandler(out, &slog.HandlerOptions{Level: level}), out: out}
}

func (h *textLines) Enabled(ctx context.Context, l slog.Level) bool { return h.text.Enabled(ctx, l) }

func (h *textLines) WithAttrs(attrs []slog.Attr) slog.Handler { return h.text.WithAttrs(attrs) }

func (h *textLines) WithGroup(name string) slog.Handler { return h.text.WithGroup(name) }

// lineBufs holds the buffers lines are formatted in; a line is written with one Write
// call (the logBuffer copies it), so its buffer is free again right after.
var lineBufs = sync.Pool{New: func() any { b := make([]byte, 0, 256); return &b }}

// Handle writes r as TextHandler would: time=… level=… msg=… key=value…, a value quoted
// when TextHandler quotes it.
func (h *textLines) Handle(ctx context.Context, r slog.Record) error {
	if !plainRecord(r) {
		return h.text.Handle(ctx, r)
	}
	bp := lineBufs.Get().(*[]byte)
	b := (*bp)[:0]
	sep := ""
	if !r.Time.IsZero() {
		b = append(b, "time="...)
		b = h.appendTime(b, r.Time.Round(0))
		sep = " "
	}
	b = append(b, sep...)
	b = append(b, "level="...)
	b = appendTextString(b, r.Level.String())
	b = append(b, " msg="...)
	b = appendTextString(b, r.Message)
	r.Attrs(func(a slog.Attr) bool {
		b = append(b, ' ')
		b = appendTextString(b, a.Key)
		b = append(b, '=')
		switch v := a.Value; v.Kind() {
		case slog.KindString:
			b = appendTextString(b, v.String())
		case slog.KindInt64:
			b = strconv.AppendInt(b, v.Int64(), 10)
		case slog.KindUint64:
			b = strconv.AppendUint(b, v.Uint64(), 10)
		case slog.KindBool:
			b = strconv.AppendBool(b, v.Bool())
		}
		return true
	})
	b = append(b, '\n')
	_, err := h.out.Write(b)
	if cap(b) <= 4<<10 {
		*bp = b
		lineBufs.Put(bp)
	}
	return err
}

// appendTime appends t as appendRFC3339Millis does, from the last stamp when t is in its
// millisecond and zone.
func (h *textLines) appendTime(b []byte, t time.Time) []byte {
	at := t.Truncate(time.Millisecond)
	if s := h.stamp.Load(); s != nil && s.at.Equal(at) && s.at.Location() == at.Location() {
		return append(b, s.text...)
	}
	n := len(b)
	b = appendRFC3339Millis(b, t)
	h.stamp.Store(&stamp{at: at, text: slices.Clone(b[n:])})
	return b
}

// plainRecord reports whether every attribute of r is one Handle formats itself: a
// non-empty key with a string, integer or boolean value. TextHandler drops or spells
// differently what is left (empty attributes, groups, LogValuers, times, errors, …).
func plainRecord(r slog.Record) bool {
	plain := true
	r.Attrs(func(a slog.Attr) bool {
		switch a.Value.Kind() {
		case slog.KindString, slog.KindInt64, slog.KindUint64, slog.KindBool:
			plain = a.Key != ""
		default:
			plain = false
		}
		return plain
	})
	return plain
}

// appendTextString appends s as TextHandler writes a string: as it is, or Go-quoted when
// it is empty or holds a space, '=', '"', a control character or a rune that is not
// printable (slog's needsQuoting).
func appendTextString(b []byte, s string) []byte {
	if needsQuoting(s) {
		return strconv.AppendQuote(b, s)
	}
	return append(b, s...)
}

// needsQuoting is log/slog's rule (text_handler.go): quote anything empty, any ASCII byte
// a JSON string would escape except the backslash, space and '=', and any invalid,
// space or unprintable rune.
func needsQuoting(s string) bool {
	if len(s) == 0 {
		return true
	}
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c < ' ' || c == ' ' || c == '=' || c == '"' {
				return true
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError || unicode.IsSpace(r) || !unicode.IsPrint(r) {
			return true
		}
		i += size
	}
	return false
}

// appendRFC3339Millis is log/slog's time format: RFC 3339 with exactly three digits of
// milliseconds, truncated.
func appendRFC3339Millis(b []byte, t time.Time) []byte {
	const prefixLen = len("2006-01-02T15:04:05.000")
	n := len(b)
	t = t.Truncate(time.Millisecond).Add(time.Millisecond / 10)
	b = t.AppendFormat(b, time.RFC3339Nano)
	return append(b[:n+prefixLen], b[n+prefixLen+1:]...) // drop the fourth digit
}
