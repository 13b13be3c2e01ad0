package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"strings"
	"time"
)

func (a *app) fetchStatus(ctx context.Context) (*answer, *statusDoc, error) {
	ans, err := a.client().do(ctx, http.MethodGet, "/status", nil, nil)
	if err != nil {
		return nil, nil, err
	}
	var st statusDoc
	if err := decode(ans, "GET /status", &st); err != nil {
		return nil, nil, err
	}
	return ans, &st, nil
}

func statusCommand() command {
	return command{
		name: "status", usage: "status", summary: "show the daemon's state: mute, quiet hours, queue, voice, plans", data: true,
		define: func(fs *flag.FlagSet, a *app) func(context.Context, []string) int {
			return func(ctx context.Context, args []string) int {
				if len(args) > 0 {
					cmd, _ := findCommand("status")
					return a.usage(cmd, "unexpected argument %q", args[0])
				}
				ans, st, err := a.fetchStatus(ctx)
				if err != nil {
					return a.fail(err)
				}
				if a.opts.json {
					a.printJSON(ans.body)
					return exitOK
				}
				a.printStatus(st, time.Now())
				return exitOK
			}
		},
	}
}

func (a *app) printStatus(st *statusDoc, now time.Time) {
	w := a.stdout
	c := a.client()
	fmt.Fprintf(w, "talkd %s at %s (%s mode, you are %q)\n", st.Version, c.base, st.Mode, st.Caller)
	row := func(label, format string, args ...any) {
		fmt.Fprintf(w, "%-12s %s\n", label, fmt.Sprintf(format, args...))
	}
	var vi voiceInfo
	haveVoice := len(st.Voice) > 0 && json.Unmarshal(st.Voice, &vi) == nil
	if haveVoice && vi.Audible != nil && !*vi.Audible {
		// First, before everything else: a voice nobody hears is the one state a user
		// must not miss.
		row("WARNING", "NOTHING IS HEARD: %s (talk doctor says what to fix)", vi.Silent)
	}
	row("config", "%s", st.Config)
	row("mute", "%s", st.Mute.human(now))
	switch {
	case st.Quiet.Active:
		row("quiet hours", "ACTIVE now (%s): announcements are discarded unless --now", st.Quiet.Window)
	case len(st.Quiet.Windows) == 0:
		row("quiet hours", "none configured")
	default:
		row("quiet hours", "not now (%s)", strings.Join(st.Quiet.Windows, ", "))
	}
	speaking := "nothing speaking"
	if sp := st.Queue.Speaking; sp != nil {
		speaking = fmt.Sprintf("speaking %s [%s] %s", sp.ID, sp.Priority, shorten(sp.Text, 50))
	}
	row("queue", "%d waiting (capacity %d), %s", st.Queue.Waiting, st.Queue.Capacity, speaking)
	if haveVoice {
		for _, l := range vi.lines() {
			fmt.Fprintln(w, l)
		}
	}
	var limits []string
	for _, p := range []string{"low", "normal", "high"} {
		if v, ok := st.Rules.RateLimit[p]; ok {
			limits = append(limits, p+" "+v)
		}
	}
	row("rate limit", "%s; stale after %s", strings.Join(limits, ", "), st.Rules.MaxWait)
	if len(st.CORS) == 0 {
		row("cors", "closed (no browser origin may call /speak)")
	} else {
		row("cors", "%s", strings.Join(st.CORS, ", "))
	}
	if len(st.Plans) == 0 {
		row("plans", "none")
	} else {
		for i, p := range st.Plans {
			label := ""
			if i == 0 {
				label = "plans"
			}
			row(label, "%s", planSummary(p))
		}
	}
}

// planSummary shows one entry of /status plans: key, access, revision, counts (or why
// there are none), safe for a terminal.
func planSummary(raw json.RawMessage) string {
	var p struct {
		Key      string `json:"key"`
		Access   string `json:"access"`
		Revision *int64 `json:"revision"`
		Nodes    *int   `json:"nodes"`
		Warnings *int   `json:"warnings"`
		Lang     string `json:"lang"`
		Error    string `json:"error"`
		Analysis string `json:"analysis"`
	}
	if json.Unmarshal(raw, &p) != nil || p.Key == "" {
		return string(raw)
	}
	s := p.Key
	var parts []string
	if p.Access != "" {
		parts = append(parts, p.Access)
	}
	if p.Revision != nil {
		parts = append(parts, fmt.Sprintf("revision %d", *p.Revision))
	}
	switch {
	case p.Error != "":
		parts = append(parts, "error: "+p.Error)
	case p.Analysis == "pending":
		parts = append(parts, "still being counted") // its 0 nodes mean nothing yet
	default:
		if p.Nodes != nil {
			parts = append(parts, count(*p.Nodes, "node"))
		}
		if p.Warnings != nil {
			parts = append(parts, count(*p.Warnings, "warning"))
		}
	}
	if len(parts) > 0 {
		s += " (" + strings.Join(parts, ", ") + ")"
	}
	// A key below a root is a file name and an error may quote one: whoever named the
	// file chose its characters (neutralise, as the plan commands' output).
	return neutralise(s)
}
