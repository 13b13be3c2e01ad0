package api

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"talkd/internal/config"
	"talkd/internal/queue"
)

// benchVoice admits everything without a queue behind it, so the benchmark measures the
// admission path itself: routing, Host check, identity, body, strict decoding, validation.
type benchVoice struct{}

func (benchVoice) Submit(context.Context, queue.Announcement) (queue.Outcome, error) {
	return queue.Outcome{Status: queue.StatusQueued, ID: "a1", Position: 1}, nil
}
func (benchVoice) Mute(context.Context, *time.Time) (queue.MuteState, error) {
	return queue.MuteState{}, nil
}
func (benchVoice) Unmute(context.Context) (queue.MuteState, error) { return queue.MuteState{}, nil }
func (benchVoice) Stop(context.Context) (string, error)            { return "", nil }
func (benchVoice) Cancel(context.Context, queue.CancelRequest) ([]string, error) {
	return nil, nil
}
func (benchVoice) Wait(context.Context, string) (queue.Entry, error) { return queue.Entry{}, nil }
func (benchVoice) Status() queue.Status                              { return queue.Status{} }
func (benchVoice) History(int) []queue.Entry                         { return nil }

func benchServer() http.Handler {
	cfg := &config.Config{Version: 1}
	cfg.Server.Listen = "127.0.0.1:7077"
	cfg.Voice.Lang = "en"
	return New(Options{Config: cfg, Voice: benchVoice{}}).Handler()
}

// BenchmarkAdmitSpeak measures POST /speak through the whole admission path, in process.
func BenchmarkAdmitSpeak(b *testing.B) {
	h := benchServer()
	body := `{"text":"Tests are green on main","priority":"high","lang":"de"}`
	b.ReportAllocs()
	for b.Loop() {
		req := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:7077/speak", strings.NewReader(body))
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != http.StatusAccepted {
			b.Fatalf("status %d: %s", w.Code, w.Body)
		}
	}
}

// BenchmarkAdmitSpeakRejected measures a validation failure (an unknown field).
func BenchmarkAdmitSpeakRejected(b *testing.B) {
	h := benchServer()
	body := `{"text":"Tests are green","prio":"high"}`
	b.ReportAllocs()
	for b.Loop() {
		req := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:7077/speak", strings.NewReader(body))
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != http.StatusBadRequest {
			b.Fatalf("status %d", w.Code)
		}
		io.Copy(io.Discard, w.Body)
	}
}
