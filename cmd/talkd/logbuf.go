package main

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"time"
)

// talkd writes one info line per announcement outcome (and per refusal). Written one
// write(2) each, that line was the largest of talkd's own costs per tools/call speak at one
// connection (about 4 µs of the syscall on top of the formatting, on the request's critical
// path). Lines are therefore collected in memory and written together: at most
// logFlushDelay after the first line of a batch, at once when a batch grows past
// logFlushBytes, at once for every warning and error (with the lines before it, so the
// order is kept), and before talkd exits. What a SIGKILL or a crash outside the request
// handlers can lose is the info lines of the last logFlushDelay; warnings and errors are
// never held back.
const (
	logFlushDelay = 10 * time.Millisecond
	logFlushBytes = 32 << 10
)

// logBuffer is the io.Writer under talkd's slog handler. The handler writes each record
// with one Write call, so lines are never split between batches.
type logBuffer struct {
	out   io.Writer
	delay time.Duration
	limit int

	// wmu orders the writes to out: a batch is taken (under mu) and written (under wmu
	// only) so that callers appending a line never wait for the syscall, and batches
	// still reach out in the order they were taken.
	wmu sync.Mutex

	mu    sync.Mutex
	buf   []byte
	spare []byte      // the previous batch's storage, reused
	timer *time.Timer // armed while buf holds lines
	armed bool
	err   error // the first write error of out, reported by Flush
}

func newLogBuffer(out io.Writer, delay time.Duration, limit int) *logBuffer {
	b := &logBuffer{out: out, delay: delay, limit: limit}
	b.timer = time.AfterFunc(time.Hour, func() { _ = b.Flush() })
	b.timer.Stop()
	return b
}

// Write appends p, which the caller may reuse after Write returns. It writes to out itself
// only when the batch is past the limit.
func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	b.buf = append(b.buf, p...)
	full := len(b.buf) >= b.limit
	if !full && !b.armed {
		b.armed = true
		b.timer.Reset(b.delay)
	}
	b.mu.Unlock()
	if full {
		_ = b.Flush()
	}
	return len(p), nil
}

// Flush writes every line appended so far and returns the first error out has returned.
func (b *logBuffer) Flush() error {
	b.wmu.Lock()
	defer b.wmu.Unlock()
	b.mu.Lock()
	batch := b.buf
	b.buf = b.spare[:0]
	b.spare = nil
	if b.armed {
		b.armed = false
		b.timer.Stop()
	}
	b.mu.Unlock()
	var err error
	if len(batch) > 0 {
		_, err = b.out.Write(batch)
	}
	b.mu.Lock()
	if b.spare == nil && cap(batch) <= 4*b.limit {
		b.spare = batch[:0]
	}
	if err != nil && b.err == nil {
		b.err = err
	}
	err = b.err
	b.mu.Unlock()
	return err
}

// flushingHandler writes a record of level Warn or above to the output at once, together
// with the lines held before it: a warning or error must reach the log even if the process
// dies right after it, and a user watching the log sees it without delay.
type flushingHandler struct {
	slog.Handler
	buf *logBuffer
}

func (h flushingHandler) Handle(ctx context.Context, r slog.Record) error {
	err := h.Handler.Handle(ctx, r)
	if r.Level >= slog.LevelWarn {
		if ferr := h.buf.Flush(); err == nil {
			err = ferr
		}
	}
	return err
}

func (h flushingHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return flushingHandler{h.Handler.WithAttrs(attrs), h.buf}
}

func (h flushingHandler) WithGroup(name string) slog.Handler {
	return flushingHandler{h.Handler.WithGroup(name), h.buf}
}

// newLogger is talkd's logger: text lines on out at level, batched by a logBuffer. The
// caller must call the returned flush before the process exits.
func newLogger(out io.Writer, level slog.Level) (log *slog.Logger, flush func() error) {
	buf := newLogBuffer(out, logFlushDelay, logFlushBytes)
	return slog.New(flushingHandler{newTextLines(buf, level), buf}), buf.Flush
}

// flushLogs writes the lines log's handler holds now (nothing for another handler).
func flushLogs(log *slog.Logger) {
	if h, ok := log.Handler().(flushingHandler); ok {
		_ = h.buf.Flush()
	}
}
