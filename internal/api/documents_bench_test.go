package api

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"talkd/internal/config"
)

// BenchmarkDocumentPatchDoor: the document door's own cost for a one-line PATCH —
// admission, decoding and checks, the answer — with a store that answers at once, so the
// store's work (lane, journal, fsync, engine) is not in it.
func BenchmarkDocumentPatchDoor(b *testing.B) {
	cfg := &config.Config{Version: 1}
	cfg.Server.MaxBodyBytes = 64 << 10
	s := New(Options{Config: cfg, Voice: &mcpTestVoice{}, Version: "bench"})
	s.SetListenAddr("127.0.0.1:7077")
	s.documents.store = &fakeDocuments{ids: map[string]string{fakeID: "p"}}
	h := s.Handler()
	body := patchBody(`"displayName":"Jörg","ops":[{"op":"replace","index":17,"count":1,"lines":["    - [x] #e3.t4: Task 4 of epic 3 (S) @anna"]}]`)
	b.ReportAllocs()
	for b.Loop() {
		r := httptest.NewRequest(http.MethodPatch, "http://127.0.0.1:7077"+docPath+"/content", strings.NewReader(body))
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != http.StatusOK {
			b.Fatalf("%d %s", w.Code, w.Body)
		}
	}
}
