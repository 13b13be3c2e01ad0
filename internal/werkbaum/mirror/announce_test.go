package mirror

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"

	"talkd/internal/werkbaum/plans"
)

type recordingSubmitter struct{ got []Announcement }

func (r *recordingSubmitter) Announce(_ context.Context, a Announcement) (Outcome, error) {
	r.got = append(r.got, a)
	return Outcome{Status: "queued"}, nil
}

// TestAnnouncementTextOnlyAtDebug: the info line of a plan announcement names plan,
// revision and outcome but never the spoken text (plan labels); debug adds it.
func TestAnnouncementTextOnlyAtDebug(t *testing.T) {
	for _, level := range []slog.Level{slog.LevelInfo, slog.LevelDebug} {
		var buf bytes.Buffer
		voice := &recordingSubmitter{}
		a := NewAnnouncer(voice, slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: level})))
		ev := plans.WriteEvent{Plan: "p", Lang: "en", Revision: 3, Author: plans.Author{Client: "local", Agent: "Zoë"}}
		_, said, err := a.Announce(context.Background(), ev, []Change{{Kind: StatusChanged, ID: "geheim", Label: "Secret Müller label", From: "progress", To: "done"}})
		if err != nil || !said || len(voice.got) != 1 {
			t.Fatalf("announce: said %v, err %v, submitted %d", said, err, len(voice.got))
		}
		logged := buf.String()
		if !strings.Contains(logged, `msg="plan announcement"`) || !strings.Contains(logged, "revision=3") {
			t.Fatalf("no info line for the announcement:\n%s", logged)
		}
		hasText := strings.Contains(logged, "Secret Müller label")
		if level == slog.LevelInfo && hasText {
			t.Errorf("the text reached the info log:\n%s", logged)
		}
		if level == slog.LevelDebug && !hasText {
			t.Errorf("the debug log lacks the text %q:\n%s", voice.got[0].Text, logged)
		}
	}
}
