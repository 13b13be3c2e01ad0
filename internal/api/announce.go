package api

import (
	"context"
	"fmt"

	"talkd/internal/queue"
)

// Announcements is the voice as plan announcements (the mirror's "X finished Y") must
// reach it: through validateSpeak, the same validation as every /speak request and speak
// tool call (text length, NUL, valid UTF-8, priority, language, provider). A plan label
// cannot smuggle into the voice what no caller could send; a refused announcement is
// logged and reported to the announcer as an error.
func (s *Server) Announcements() interface {
	Submit(ctx context.Context, a queue.Announcement) (queue.Outcome, error)
} {
	return announcementGate{s}
}

type announcementGate struct{ s *Server }

func (g announcementGate) Submit(ctx context.Context, a queue.Announcement) (queue.Outcome, error) {
	v, _, err := g.s.validateSpeak(ctx, SpeakRequest{Text: a.Text, Priority: a.Priority.String(), Lang: a.Lang, Provider: a.Provider, Now: a.Now,
		Voice: a.Voice, Rate: a.Prosody.Rate, Pitch: a.Prosody.Pitch, Volume: a.Prosody.Volume})
	if err != nil {
		g.s.log.Info("announcement refused", "door", "plan announcement", "code", err.Code, "field", err.Field,
			"client", a.Caller, "message", truncate(err.Message, 200))
		return queue.Outcome{}, fmt.Errorf("the announcement was refused: %w", err)
	}
	v.Caller, v.Agent, v.Origin = a.Caller, a.Agent, a.Origin
	return g.s.voice.Submit(ctx, v)
}
