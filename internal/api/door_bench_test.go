package api

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"talkd/internal/config"
	"talkd/internal/queue"
)

// BenchmarkMCPDoorSpeakMuted is the door of the load tool's tools/call cell (issue 33)
// in process: POST /mcp tools/call speak against a real, muted queue whose every call is
// refused by mute and logs its outcome line through slog's text handler, as talkd's
// muted peers daemon does. The request and the response writer are reused, so what is
// counted is the door's own work and allocation (routing, admission, JSON-RPC decoding,
// argument decoding, the queue's laws, the outcome line, the result and the answer's
// headers), not net/http's parsing or httptest's recorder.
//
//	go test ./internal/api -run '^$' -bench MCPDoorSpeakMuted -benchmem
func BenchmarkMCPDoorSpeakMuted(b *testing.B) {
	cfg := &config.Config{Version: 1}
	cfg.Server.Listen = "127.0.0.1:7077"
	cfg.Voice.Lang = "en"
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	v, err := queue.New(queue.Config{Capacity: 10000, HistorySize: 500, FlushEvery: time.Hour}, nil, nopStore{}, nil, log)
	if err != nil {
		b.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	go v.Run(ctx)
	defer func() {
		stop()
		_ = v.Close(context.Background())
	}()
	if _, err := v.Mute(context.Background(), nil); err != nil {
		b.Fatal(err)
	}
	h := New(Options{Config: cfg, Voice: v, Log: log}).Handler()
	body := []byte(benchCall2025)
	rd := bytes.NewReader(body)
	req, err := http.NewRequest(http.MethodPost, "http://127.0.0.1:7077/mcp", rd)
	if err != nil {
		b.Fatal(err)
	}
	req.Host = "127.0.0.1:7077"
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	w := &discardWriter{}
	b.ReportAllocs()
	for b.Loop() {
		rd.Reset(body)
		req.Body = io.NopCloser(rd)
		req.ContentLength = int64(len(body))
		w.reset()
		h.ServeHTTP(w, req)
		if w.status != http.StatusOK || !bytes.Contains(w.body, []byte(`"status":"muted"`)) {
			b.Fatalf("status %d: %s", w.status, w.body)
		}
	}
}

// nopStore keeps nothing: the benchmark's queue starts empty and saves nowhere.
type nopStore struct{}

func (nopStore) LoadMute() (queue.MuteState, error)             { return queue.MuteState{}, nil }
func (nopStore) SaveMute(queue.MuteState) error                 { return nil }
func (nopStore) LoadHistory(int) ([]queue.Entry, error)         { return nil, nil }
func (nopStore) SaveHistory(changed []queue.Entry, _ int) error { return nil }
func (nopStore) NextSeq() (uint64, error)                       { return 1, nil }

// discardWriter is a ResponseWriter that keeps the last answer's status and body in
// reused storage, and a fresh header map per answer as net/http gives each response.
type discardWriter struct {
	header http.Header
	status int
	body   []byte
}

func (w *discardWriter) reset() {
	w.header, w.status, w.body = nil, 0, w.body[:0]
}

func (w *discardWriter) Header() http.Header {
	if w.header == nil {
		w.header = http.Header{}
	}
	return w.header
}

func (w *discardWriter) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
}

func (w *discardWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	w.body = append(w.body, p...)
	return len(p), nil
}
