package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

func historyCommand() command {
	return command{
		name: "history", usage: "history [-n N] [-f]", summary: "show recent announcements with outcome and caller (-f: follow)", data: true,
		detail: `Human output lists the oldest first, the newest last (next to your prompt); --json prints
the daemon's answer {"entries":[…]} unchanged, newest first. With -f talk keeps
running and prints each new announcement once it has ended (with --json: one entry per
line), until interrupted. Browser calls show their page's origin after the caller.`,
		define: func(fs *flag.FlagSet, a *app) func(context.Context, []string) int {
			var n int
			var follow bool
			fs.IntVar(&n, "n", 20, "show the last `N` announcements")
			fs.BoolVar(&follow, "f", false, "follow: keep printing announcements as they end, until interrupted")
			return func(ctx context.Context, args []string) int {
				cmd, _ := findCommand("history")
				if len(args) > 0 {
					return a.usage(cmd, "unexpected argument %q", args[0])
				}
				if n < 1 {
					return a.usage(cmd, "-n must be at least 1, not %d", n)
				}
				ans, res, err := a.fetchHistory(ctx, n)
				if err != nil {
					return a.fail(err)
				}
				if follow {
					return a.followHistory(ctx, res)
				}
				if a.opts.json {
					a.printJSON(ans.body)
					return exitOK
				}
				if len(res) == 0 {
					fmt.Fprintln(a.stdout, "no announcements yet")
					return exitOK
				}
				now := time.Now()
				for i := len(res) - 1; i >= 0; i-- {
					fmt.Fprintln(a.stdout, historyLine(res[i], now))
				}
				return exitOK
			}
		},
	}
}

// fetchHistory reads the newest n entries of GET /history, newest first.
func (a *app) fetchHistory(ctx context.Context, n int) (*answer, []entry, error) {
	ans, err := a.client().do(ctx, http.MethodGet, "/history?limit="+strconv.Itoa(n), nil, nil)
	if err != nil {
		return nil, nil, err
	}
	var res struct {
		Entries []entry `json:"entries"`
	}
	if err := decode(ans, "GET /history", &res); err != nil {
		return nil, nil, err
	}
	return ans, res.Entries, nil
}

// historyPoll is how often talk history -f asks for what is new.
const historyPoll = 500 * time.Millisecond

// followHistory prints the entries already there (oldest first) and then each further one
// when it reaches its final outcome, until ctx ends (Ctrl-C: exit 0). An entry is printed
// once; one still waiting or speaking is held back until it has ended. The polls read a
// wider window than -n: what is older than the first answer's newest entry was left out
// by -n, not new, and is never printed.
func (a *app) followHistory(ctx context.Context, first []entry) int {
	printed := map[string]bool{}
	var pending []string // ids seen but not ended, oldest first
	var floor uint64     // announcement number of the first answer's newest entry
	show := func(list []entry) {
		byID := map[string]entry{}
		var newest uint64
		for _, e := range list {
			byID[e.ID] = e
			newest = max(newest, entrySeq(e.ID))
		}
		if newest < floor {
			floor = 0 // the daemon's numbering started again (a fresh state): all is new
		}
		var ready []entry
		keep := pending[:0]
		for _, id := range pending {
			e, ok := byID[id]
			switch {
			case !ok: // fell out of the window: it ended meanwhile, unseen
			case e.Outcome == "queued" || e.Outcome == "speaking":
				keep = append(keep, id)
			default:
				ready = append(ready, e)
			}
		}
		pending = keep
		for i := len(list) - 1; i >= 0; i-- {
			e := list[i]
			if printed[e.ID] || entrySeq(e.ID) <= floor || slices.Contains(pending, e.ID) || slices.ContainsFunc(ready, func(r entry) bool { return r.ID == e.ID }) {
				continue
			}
			if e.Outcome == "queued" || e.Outcome == "speaking" {
				pending = append(pending, e.ID)
				continue
			}
			ready = append(ready, e)
		}
		now := time.Now()
		for _, e := range ready {
			printed[e.ID] = true
			if a.opts.json {
				raw, _ := json.Marshal(e)
				a.printJSON(raw)
			} else {
				fmt.Fprintln(a.stdout, historyLine(e, now))
			}
		}
		// An id that left the window never comes back into it.
		for id := range printed {
			if _, ok := byID[id]; !ok {
				delete(printed, id)
			}
		}
	}
	show(first)
	for _, e := range first {
		floor = max(floor, entrySeq(e.ID))
	}
	t := time.NewTicker(historyPoll)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return exitOK
		case <-t.C:
		}
		_, list, err := a.fetchHistory(ctx, 200)
		if err != nil {
			if ctx.Err() != nil {
				return exitOK
			}
			return a.fail(err)
		}
		show(list)
	}
}

// entrySeq is the number in an announcement id ("a12" → 12); 0 for any other shape.
func entrySeq(id string) uint64 {
	n, err := strconv.ParseUint(strings.TrimPrefix(id, "a"), 10, 64)
	if err != nil || !strings.HasPrefix(id, "a") {
		return 0
	}
	return n
}

// historyLine is one announcement on one line: time, id, priority, outcome, who, text.
// The outcome column fits every outcome with its reason code ("synthesized (no_player)",
// "discarded (quiet_hours)"); a reason that is a sentence (an engine's error) goes after
// the text, so the columns stay aligned.
func historyLine(e entry, now time.Time) string {
	outcome := e.Outcome
	tail := ""
	if e.Reason != "" {
		if isReasonCode(e.Reason) {
			outcome += " (" + e.Reason + ")"
		} else {
			tail = "  — " + shortenPlain(e.Reason, 120)
		}
	}
	who := e.Caller
	if e.Agent != "" {
		who += "/" + e.Agent
	}
	if e.Origin != "" {
		who += " " + e.Origin
	}
	return fmt.Sprintf("%-8s  %-6s  %-6s  %-24s  %-12s  %s%s",
		clock(e.Received, now), e.ID, e.Priority, outcome, who, shorten(e.Text, 60), tail)
}

// isReasonCode reports a short machine reason (quiet_hours, no_player, muted) as opposed
// to a message.
func isReasonCode(r string) bool {
	return len(r) <= 12 && !strings.ContainsAny(r, " :")
}

// shortenPlain is shorten without the quotes.
func shortenPlain(text string, max int) string {
	text = strings.Join(strings.Fields(text), " ")
	if r := []rune(text); len(r) > max {
		return string(r[:max-1]) + "…"
	}
	return text
}

// shorten puts text on one line and cuts it to max characters.
func shorten(text string, max int) string { return strconv.Quote(shortenPlain(text, max)) }
