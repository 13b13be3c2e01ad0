package main

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"strings"
)

func cancelCommand() command {
	return command{
		name: "cancel", usage: "cancel [--all] [ID]", summary: "drop waiting announcements (yours, or all with --all) without muting", data: true,
		detail: `Without ID, every announcement of yours that is still waiting is dropped; with ID only
that one. --all drops everybody's waiting announcements and needs the control grant in
shared mode. What is being spoken goes on (talk stop ends it); nothing is muted. The
history records them as dropped (cancelled).`,
		define: func(fs *flag.FlagSet, a *app) func(context.Context, []string) int {
			var all bool
			fs.BoolVar(&all, "all", false, "drop the waiting announcements of every caller, not only yours")
			return func(ctx context.Context, args []string) int {
				cmd, _ := findCommand("cancel")
				if len(args) > 1 {
					return a.usage(cmd, "give at most one announcement ID, not %d arguments", len(args))
				}
				req := map[string]any{}
				if len(args) == 1 {
					req["id"] = args[0]
				}
				if all {
					req["all"] = true
				}
				ans, err := a.client().do(ctx, http.MethodPost, "/cancel", req, nil)
				if err != nil {
					return a.fail(err)
				}
				var res struct {
					Cancelled []string `json:"cancelled"`
					Message   string   `json:"message"`
				}
				if err := decode(ans, "POST /cancel", &res); err != nil {
					return a.fail(err)
				}
				switch {
				case a.opts.json:
					a.printJSON(ans.body)
				case len(res.Cancelled) == 0:
					fmt.Fprintln(a.stdout, "nothing was waiting")
				default:
					fmt.Fprintf(a.stdout, "cancelled %s\n", strings.Join(res.Cancelled, " "))
				}
				return exitOK
			}
		},
	}
}
