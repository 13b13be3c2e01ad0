package mirror

import (
	"context"
	"testing"

	"talkd/internal/werkbaum"
	"talkd/internal/werkbaum/plans"
)

type recordingVoice struct{ got []Announcement }

func (v *recordingVoice) Announce(ctx context.Context, a Announcement) (Outcome, error) {
	v.got = append(v.got, a)
	return Outcome{Status: "queued"}, nil
}

// TestRecorderFollowsThePlanConfig: the plan's settings come with the write (WriteEvent):
// a plan without announce or mirror gets neither, an announced one is announced.
func TestRecorderFollowsThePlanConfig(t *testing.T) {
	engine, err := werkbaum.NewEngine(werkbaum.Options{})
	if err != nil {
		t.Fatal(err)
	}
	voice := &recordingVoice{}
	r := New(Options{Engine: engine, Voice: voice})
	ev := plans.WriteEvent{Lang: "de", Revision: 2, Author: plans.Author{Client: "ci", Agent: "Claude Code"},
		OldText: "[ ] #a: Token prüfen (S)\n", NewText: "[x] #a: Token prüfen (S)\n"}

	ev.Plan = "quiet"
	if got := r.AfterWrite(context.Background(), ev); got != nil || len(voice.got) != 0 {
		t.Fatalf("plan without announce/mirror: a report, announcements %+v", voice.got)
	}
	if st := r.State("quiet"); st != nil {
		t.Fatalf("State of an unmirrored plan = %v, want nil", st)
	}

	ev.Plan, ev.Announce = "loud", true
	// A cancelled request context must not cost the announcement: the write happened.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if got := r.AfterWrite(ctx, ev); got != nil {
		t.Fatalf("announce-only plan reported a mirror result %q", got(ctx))
	}
	want := Announcement{Text: "Claude Code: Token prüfen ist fertig", Lang: "de", Caller: "ci", Agent: "Claude Code"}
	if len(voice.got) != 1 || voice.got[0] != want {
		t.Fatalf("announcements %+v, want one %+v", voice.got, want)
	}
}
