package voice

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"talkd/internal/config"
	"talkd/internal/queue"
)

func fakeVoice(t *testing.T, sink string, d time.Duration) (*Voice, string) {
	t.Helper()
	log := filepath.Join(t.TempDir(), "state", "fake-voice.jsonl")
	cfg := config.Voice{Provider: "fake", Sink: sink, FakeLog: log, FakeDuration: config.Duration{Duration: d}}
	v, err := New(cfg, t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { v.Close() })
	return v, log
}

func readFakeLog(t *testing.T, path string) []FakeRecord {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var recs []FakeRecord
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var r FakeRecord
		dec := json.NewDecoder(bytes.NewReader(sc.Bytes()))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&r); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		recs = append(recs, r)
	}
	return recs
}

func speak(t *testing.T, v *Voice, ctx context.Context, u queue.Utterance) error {
	t.Helper()
	a, err := v.Prepare(context.Background(), u)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	return v.Play(ctx, u, a)
}

func TestFakeRecordsEachUtterance(t *testing.T) {
	dir := t.TempDir()
	v, log := fakeVoice(t, "dir:"+dir, 30*time.Millisecond)
	us := []queue.Utterance{
		{ID: "a1", Text: "**Build** done, see https://github.com/x/y", Lang: "en", Priority: queue.High, Caller: "local", Agent: "claude"},
		{ID: "a2", Text: "Tests grün", Lang: "de", Priority: queue.Low, Caller: "ci"},
	}
	for _, u := range us {
		if err := speak(t, v, context.Background(), u); err != nil {
			t.Fatal(err)
		}
	}
	recs := readFakeLog(t, log)
	if len(recs) != 2 {
		t.Fatalf("%d records", len(recs))
	}
	r := recs[0]
	if r.ID != "a1" || r.Text != us[0].Text || r.Spoken != "Build done, see github.com" || r.Lang != "en" ||
		r.Priority != "high" || r.Provider != "fake" || r.Caller != "local" || r.Agent != "claude" || r.Interrupted {
		t.Errorf("record %+v", r)
	}
	if recs[1].Priority != "low" || recs[1].Lang != "de" {
		t.Errorf("record %+v", recs[1])
	}
	for _, r := range recs {
		s, err1 := time.Parse(time.RFC3339Nano, r.Start)
		e, err2 := time.Parse(time.RFC3339Nano, r.End)
		if err1 != nil || err2 != nil || e.Sub(s) < 30*time.Millisecond {
			t.Errorf("start %s end %s: want ≥ 30ms of speaking", r.Start, r.End)
		}
	}
	if !(recs[0].End <= recs[1].Start) {
		t.Errorf("utterances overlap: %s > %s", recs[0].End, recs[1].Start)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.wav"))
	if len(files) != 2 || filepath.Base(files[0]) != "000001-a1.wav" || filepath.Base(files[1]) != "000002-a2.wav" {
		t.Fatalf("dir sink files %v", files)
	}
	if w, err := InspectWAV(files[0]); err != nil || w.Duration != fakeClipLength {
		t.Errorf("fake WAV: %+v %v", w, err)
	}
}

func TestFakeInterruptedByCancel(t *testing.T) {
	v, log := fakeVoice(t, "null", time.Hour)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- speak(t, v, ctx, queue.Utterance{ID: "long", Text: "a very long speech"}) }()
	time.Sleep(20 * time.Millisecond)
	cancel()
	if err := <-done; err != context.Canceled {
		t.Fatalf("Play returned %v, want context.Canceled", err)
	}
	recs := readFakeLog(t, log)
	if len(recs) != 1 || !recs[0].Interrupted || recs[0].ID != "long" {
		t.Fatalf("records %+v", recs)
	}
}

// TestFakeLogLinesStayWhole appends from many goroutines and checks every line parses.
func TestFakeLogLinesStayWhole(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log.jsonl")
	var wg sync.WaitGroup
	for i := range 40 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			text := strings.Repeat("y", 200+i)
			if err := appendFakeRecord(path, FakeRecord{ID: "id", Text: text, Lang: "en", Priority: "normal", Caller: "c" + string(rune('a'+i%26))}); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if recs := readFakeLog(t, path); len(recs) != 40 {
		t.Fatalf("%d records, want 40", len(recs))
	}
}
