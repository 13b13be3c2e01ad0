package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"
)

// reloadCommand is talk reload: POST /reload, the same reload as SIGHUP.
func reloadCommand() command {
	return command{
		name: "reload", usage: "reload", summary: "make talkd re-read its configuration without a restart", data: true,
		detail: `talkd reads its configuration file again and applies it: plans and roots, clients,
tokens and grants, allowed origins and hosts, the rules (quiet hours, rate limits,
queue size) and the voice. A configuration with an error changes nothing: talk reload
prints the problem and exits 1, and the old configuration stays in force. Settings a
running daemon cannot change (server.listen, server.state_dir, server.max_body_bytes)
keep their old value until a restart; talk reload names them. Needs the control grant
in shared mode. Sending SIGHUP to talkd does the same.`,
		define: func(fs *flag.FlagSet, a *app) func(context.Context, []string) int {
			return func(ctx context.Context, args []string) int {
				if len(args) > 0 {
					cmd, _ := findCommand("reload")
					return a.usage(cmd, "unexpected argument %q", args[0])
				}
				ans, err := a.client().do(ctx, http.MethodPost, "/reload", nil, nil)
				if err != nil {
					var re *refusedError
					if errors.As(err, &re) && re.code == "invalid_config" {
						// The daemon refused the new configuration: the documented exit 1,
						// with the daemon's reason.
						if a.opts.json {
							a.printJSON(re.body)
						}
						a.warnf("%s", re.message)
						return exitFailure
					}
					return a.fail(err)
				}
				var res struct {
					Config        string   `json:"config"`
					RestartNeeded []string `json:"restart_needed"`
					Message       string   `json:"message"`
				}
				if err := decode(ans, "POST /reload", &res); err != nil {
					return a.fail(err)
				}
				if a.opts.json {
					a.printJSON(ans.body)
					return exitOK
				}
				fmt.Fprintf(a.stdout, "reloaded %s\n", res.Config)
				for _, s := range res.RestartNeeded {
					fmt.Fprintf(a.stdout, "  %s changed but needs a restart of talkd; the old value stays in force\n", s)
				}
				return exitOK
			}
		},
	}
}
