package voice

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"talkd/internal/config"
	"talkd/internal/queue"
)

// A reload swaps the whole engine set: utterances prepared afterwards use the new
// language, cleanup and fake log; one prepared before is played as prepared; a set that
// cannot be built leaves the old one in place.
func TestReconfigure(t *testing.T) {
	dir := t.TempDir()
	oldLog, newLog := filepath.Join(dir, "old.jsonl"), filepath.Join(dir, "new.jsonl")
	cfg := config.Voice{Provider: "fake", Sink: "null", Lang: "de", FakeLog: oldLog, FakeDuration: config.Duration{Duration: time.Millisecond}}
	v, err := New(cfg, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	ctx := context.Background()
	before, err := v.Prepare(ctx, queue.Utterance{ID: "a1", Text: "**vorher** @jörg"})
	if err != nil {
		t.Fatal(err)
	}

	off := false
	next := cfg
	next.Lang, next.FakeLog = "en", newLog
	next.Cleanup.Markdown = &off
	if err := v.Reconfigure(next); err != nil {
		t.Fatal(err)
	}
	if err := v.Play(ctx, queue.Utterance{ID: "a1"}, before); err != nil {
		t.Fatal(err)
	}
	before.Close()
	if err := speak(t, v, ctx, queue.Utterance{ID: "a2", Text: "**after** @Müller"}); err != nil {
		t.Fatal(err)
	}
	old := readFakeLog(t, oldLog)
	if len(old) != 1 || old[0].ID != "a1" || old[0].Lang != "de" || old[0].Spoken != "vorher @jörg" {
		t.Errorf("utterance prepared before the reload: %+v, want a1 in de with markdown cleaned, in the old log", old)
	}
	got := readFakeLog(t, newLog)
	if len(got) != 1 || got[0].ID != "a2" || got[0].Lang != "en" || got[0].Spoken != "**after** @Müller" {
		t.Errorf("utterance after the reload: %+v, want a2 in en with markdown kept, in the new log", got)
	}

	bad := next
	bad.Provider = "no-such-engine"
	if err := v.Reconfigure(bad); err == nil {
		t.Fatal("Reconfigure accepted an unknown provider")
	}
	if info := v.Info(); info.Provider != ProviderFake {
		t.Errorf("after a refused reload the provider is %q, want the old fake", info.Provider)
	}
	if err := speak(t, v, ctx, queue.Utterance{ID: "a3", Text: "still"}); err != nil {
		t.Fatal(err)
	}
	if got := readFakeLog(t, newLog); len(got) != 2 || got[1].Lang != "en" {
		t.Errorf("after a refused reload: %+v, want a3 spoken with the previous set", got)
	}
}
