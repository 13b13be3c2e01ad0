package mirror

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	"talkd/internal/werkbaum/plans"
)

// Announcement is what a plan write asks the voice to say. The voice speaks it at low
// priority: a plan's progress never interrupts what an agent says directly.
type Announcement struct {
	Text, Lang string
	// Caller and Agent are the write's author: the laws (rate limit per caller) and the
	// history treat the announcement as theirs.
	Caller, Agent string
}

// Outcome is the voice's answer to an announcement (as /speak reports it).
type Outcome struct {
	Status string // queued, muted or discarded
	Reason string // discarded: quiet_hours or rate_limit
}

// Submitter is the voice as announcements see it: every announcement passes the same laws
// (mute, quiet hours, rate limit) as a /speak request. cmd/talkd wires the queue in
// through it, so this package does not depend on the queue's types.
type Submitter interface {
	Announce(ctx context.Context, a Announcement) (Outcome, error)
}

// Announcer speaks, at low priority, when an agent's write finishes, ships or discards
// nodes: one announcement per write, however many nodes it moved.
type Announcer struct {
	voice Submitter
	log   *slog.Logger
}

// NewAnnouncer returns an Announcer that submits to voice.
func NewAnnouncer(voice Submitter, log *slog.Logger) *Announcer {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Announcer{voice: voice, log: log}
}

// announced are the intrinsic statuses whose arrival is worth saying out loud, in the
// order the sentence names them.
var announced = []string{"done", "prod", "discarded"}

// Announce submits the announcement for a write, if it moved any node to done, prod or
// discarded. It reports whether something was submitted and the laws' answer.
func (a *Announcer) Announce(ctx context.Context, ev plans.WriteEvent, changes []Change) (Outcome, bool, error) {
	text := Sentence(ev.Lang, speaker(ev.Author, ev.Lang), changes)
	if text == "" {
		return Outcome{}, false, nil
	}
	out, err := a.voice.Announce(ctx, Announcement{
		Text: text, Lang: lang(ev.Lang), Caller: ev.Author.Client, Agent: ev.Author.Agent,
	})
	if err != nil {
		a.log.Warn("plan announcement not queued", "plan", ev.Plan, "revision", ev.Revision, "err", err)
		return out, true, fmt.Errorf("announce plan %s revision %d: %w", ev.Plan, ev.Revision, err)
	}
	// The text only at debug level, as for every announcement (issue 17): plan labels can
	// carry what the log's readers should not see.
	a.log.Info("plan announcement", "plan", ev.Plan, "revision", ev.Revision, "status", out.Status, "reason", out.Reason)
	a.log.Debug("plan announcement text", "plan", ev.Plan, "revision", ev.Revision, "text", text)
	return out, true, nil
}

func lang(l string) string {
	if l == "de" {
		return "de"
	}
	return "en"
}

// speaker is who the sentence says did it: the claimed agent, else the client id; the
// anonymous local client is "an agent".
func speaker(a plans.Author, l string) string {
	switch {
	case strings.TrimSpace(a.Agent) != "":
		return clip(a.Agent, 40)
	case a.Client != "" && a.Client != "local":
		return clip(a.Client, 40)
	case lang(l) == "de":
		return "Ein Agent"
	}
	return "An agent"
}

// Sentence is the announcement for a write's changes in the plan's language ("" when no
// node reached done, prod or discarded), e.g. "Claude Code: Token prüfen ist fertig" or
// "Claude Code finished Token check". It names at most three nodes per status.
func Sentence(l, who string, changes []Change) string {
	by := map[string][]string{}
	for _, c := range changes {
		if c.Kind != StatusChanged || c.From == c.To {
			continue
		}
		if name := c.Name(); name != "" {
			by[c.To] = append(by[c.To], name)
		}
	}
	var clauses []string
	de := lang(l) == "de"
	for _, st := range announced {
		names := by[st]
		if len(names) == 0 {
			continue
		}
		list := nameList(names, de)
		one := len(names) == 1
		switch {
		case de:
			verb := map[bool]string{true: "ist", false: "sind"}[one]
			what := map[string]string{"done": "fertig", "prod": "in Produktion", "discarded": "verworfen"}[st]
			clauses = append(clauses, list+" "+verb+" "+what)
		case st == "done":
			clauses = append(clauses, "finished "+list)
		case st == "discarded":
			clauses = append(clauses, "discarded "+list)
		default:
			verb := map[bool]string{true: "is", false: "are"}[one]
			clauses = append(clauses, list+" "+verb+" in production")
		}
	}
	if len(clauses) == 0 {
		return ""
	}
	if de {
		return who + ": " + strings.Join(clauses, ", ")
	}
	// English: "X finished A" / "X discarded A" read as one sentence; a clause with its
	// own subject ("A is in production") follows a colon.
	first := clauses[0]
	sep := " "
	if !strings.HasPrefix(first, "finished ") && !strings.HasPrefix(first, "discarded ") {
		sep = ": "
	}
	return who + sep + strings.Join(clauses, "; ")
}

// nameList joins names as speech does: "A", "A and B", "A, B and C", "A, B and 2 more".
func nameList(names []string, de bool) string {
	and, more := " and ", " more"
	if de {
		and, more = " und ", " weitere"
	}
	const show = 3
	if len(names) > show {
		rest := len(names) - (show - 1)
		return strings.Join(names[:show-1], ", ") + and + fmt.Sprint(rest) + more
	}
	if len(names) == 1 {
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + and + names[len(names)-1]
}
