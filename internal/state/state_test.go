package state

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"talkd/internal/queue"
)

func TestMuteHistoryAndSeqSurviveReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "talkd.db")
	db, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	until := time.Date(2026, 11, 30, 14, 0, 0, 0, time.UTC)
	if err := db.SaveMute(queue.MuteState{Muted: true, Until: &until}); err != nil {
		t.Fatal(err)
	}
	var batch []queue.Entry
	for i := uint64(1); i <= 12; i++ {
		batch = append(batch, queue.Entry{Seq: i, ID: "a" + string(rune('0'+i%10)), Text: "t", Outcome: "spoken"})
	}
	if err := db.SaveHistory(batch, 5); err != nil {
		t.Fatal(err)
	}
	// An update of a kept entry replaces it.
	batch[11].Outcome = "stopped"
	if err := db.SaveHistory(batch[11:], 5); err != nil {
		t.Fatal(err)
	}
	db.Close()

	db, err = Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	m, err := db.LoadMute()
	if err != nil || !m.Muted || m.Until == nil || !m.Until.Equal(until) {
		t.Fatalf("mute after reopen: %+v %v", m, err)
	}
	hist, err := db.LoadHistory(100)
	if err != nil {
		t.Fatal(err)
	}
	if len(hist) != 5 || hist[0].Seq != 8 || hist[4].Seq != 12 || hist[4].Outcome != "stopped" {
		t.Fatalf("history after reopen: %+v", hist)
	}
	if n, _ := db.NextSeq(); n != 12 {
		t.Fatalf("seq %d, want 12", n)
	}
	if hist, _ := db.LoadHistory(2); len(hist) != 2 || hist[1].Seq != 12 {
		t.Fatalf("limited history: %+v", hist)
	}
}

func TestSecondOpenFailsClearly(t *testing.T) {
	path := filepath.Join(t.TempDir(), "talkd.db")
	db, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	_, err = Open(path, Options{})
	if err == nil || !strings.Contains(err.Error(), "another talkd") {
		t.Fatalf("second open: %v", err)
	}
}
