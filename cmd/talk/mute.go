package main

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"regexp"
	"time"
)

func (m muteState) human(now time.Time) string {
	switch {
	case !m.Muted:
		return "not muted"
	case m.Until == nil:
		return "muted until unmuted (talk unmute)"
	}
	left := m.Until.Sub(now).Round(time.Second)
	if left < 0 {
		left = 0
	}
	return fmt.Sprintf("muted until %s (%s left)", clock(*m.Until, now), left)
}

// clock shows a time as 15:04:05, with the date when it is not today.
func clock(t, now time.Time) string {
	t, now = t.Local(), now.Local()
	if t.Year() == now.Year() && t.YearDay() == now.YearDay() {
		return t.Format("15:04:05")
	}
	return t.Format("2006-01-02 15:04:05")
}

var clockRE = regexp.MustCompile(`^([01]?[0-9]|2[0-3]):[0-5][0-9]$`)

func muteCommand() command {
	return command{
		name: "mute", usage: "mute [30m | 14:00 | --until T]", summary: "silence the daemon: now, for a while, or until a time",
		data: true,
		detail: `Without an argument talkd stays muted until "talk unmute". DURATION is a Go duration
like 30m, 1h or 1h30m; CLOCK a local time like 14:00 (tomorrow when it has passed today).
Muting also stops what is speaking and drops what waits; while muted, every announcement
(also --now) is dropped. Mute survives a restart of the daemon.`,
		define: func(fs *flag.FlagSet, a *app) func(context.Context, []string) int {
			var until string
			fs.StringVar(&until, "until", "", "stay muted until this local clock time (`HH:MM`) or RFC 3339 time")
			return func(ctx context.Context, args []string) int {
				cmd, _ := findCommand("mute")
				req := map[string]string{}
				switch {
				case len(args) > 1:
					return a.usage(cmd, "give one duration or clock time, not %d arguments", len(args))
				case len(args) == 1 && until != "":
					return a.usage(cmd, "give either a duration or --until, not both")
				case len(args) == 1 && clockRE.MatchString(args[0]):
					req["until"] = args[0]
				case len(args) == 1:
					d, err := time.ParseDuration(args[0])
					if err != nil || d <= 0 {
						return a.usage(cmd, "%q is neither a positive duration like 30m nor a clock time like 14:00", args[0])
					}
					req["for"] = args[0]
				case until != "":
					if _, err := time.Parse(time.RFC3339, until); err != nil && !clockRE.MatchString(until) {
						return a.usage(cmd, "--until %q is not a clock time like 14:00 (or an RFC 3339 time)", until)
					}
					req["until"] = until
				}
				var body any
				if len(req) > 0 {
					body = req
				}
				return a.muteCall(ctx, "/mute", body)
			}
		},
	}
}

func unmuteCommand() command {
	return command{
		name: "unmute", usage: "unmute", summary: "end a mute", data: true,
		define: func(fs *flag.FlagSet, a *app) func(context.Context, []string) int {
			return func(ctx context.Context, args []string) int {
				if len(args) > 0 {
					cmd, _ := findCommand("unmute")
					return a.usage(cmd, "unexpected argument %q", args[0])
				}
				return a.muteCall(ctx, "/unmute", nil)
			}
		},
	}
}

func (a *app) muteCall(ctx context.Context, path string, body any) int {
	ans, err := a.client().do(ctx, http.MethodPost, path, body, nil)
	if err != nil {
		return a.fail(err)
	}
	var m muteState
	if err := decode(ans, "POST "+path, &m); err != nil {
		return a.fail(err)
	}
	if a.opts.json {
		a.printJSON(ans.body)
		return exitOK
	}
	fmt.Fprintln(a.stdout, m.human(time.Now()))
	return exitOK
}
