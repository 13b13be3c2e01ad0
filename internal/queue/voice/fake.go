package voice

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"talkd/internal/queue"
)

// fakeClipLength is the length of the silent WAV the fake engine produces: long enough to
// be a real file for dir: sinks and players, short enough never to matter.
const fakeClipLength = 100 * time.Millisecond

// fake is the engine for tests: no audio engine needed, everything observable.
type fake struct{}

func (fake) synth(_ context.Context, r synthRequest) error {
	return os.WriteFile(r.Out, silentWAV(fakeClipLength, 22050), 0o600)
}

func (fake) voices(context.Context) ([]VoiceInfo, error) {
	return []VoiceInfo{{ID: "de", Name: "fake German", Lang: "de"}, {ID: "en", Name: "fake English", Lang: "en"}}, nil
}

// FakeRecord is one line of the fake provider's log. The format is part of the test
// contract of the whole product; see the package documentation.
type FakeRecord struct {
	ID          string `json:"id"`
	Text        string `json:"text"`
	Spoken      string `json:"spoken"`
	Lang        string `json:"lang"`
	Priority    string `json:"priority"`
	Provider    string `json:"provider"`
	Caller      string `json:"caller"`
	Agent       string `json:"agent"`
	Start       string `json:"start"`
	End         string `json:"end"`
	Interrupted bool   `json:"interrupted"`
	Error       string `json:"error,omitempty"`
}

// appendFakeRecord appends rec as one JSON line with a single write on an O_APPEND file,
// so concurrent readers never see half a line and writers never interleave.
func appendFakeRecord(path string, rec FakeRecord) error {
	b, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("fake log: %w", err)
	}
	b = append(b, '\n')
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("fake log: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("fake log: %w", err)
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return fmt.Errorf("fake log %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("fake log %s: %w", path, err)
	}
	return nil
}

// playFake "speaks" a fake utterance: the silent clip goes to the sink like any audio,
// then the speaking time of voice.fake_duration runs out (or ctx ends it early), and the
// utterance is recorded with its start and end.
func (v *engineSet) playFake(ctx context.Context, u queue.Utterance, a *audio) error {
	start := v.now()
	err := v.sink.play(ctx, u, a)
	if err == nil {
		if rest := v.fakeDuration - v.now().Sub(start); rest > 0 {
			t := time.NewTimer(rest)
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
			}
		}
	}
	end := v.now()
	rec := FakeRecord{
		ID: u.ID, Text: u.Text, Spoken: a.spoken, Lang: a.lang, Priority: u.Priority.String(),
		Provider: a.provider, Caller: u.Caller, Agent: u.Agent,
		Start: start.Format(time.RFC3339Nano), End: end.Format(time.RFC3339Nano),
		Interrupted: ctx.Err() != nil,
	}
	if err != nil && ctx.Err() == nil {
		rec.Error = err.Error()
	}
	if lerr := appendFakeRecord(v.fakeLog, rec); lerr != nil {
		v.log.Error("fake provider could not record an utterance", "id", u.ID, "err", lerr)
		if err == nil {
			err = lerr
		}
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}
