package main

import (
	"context"
	"flag"
	"fmt"
	"net/http"
)

func stopCommand() command {
	return command{
		name: "stop", usage: "stop", summary: "end the utterance being spoken (what waits goes on)", data: true,
		define: func(fs *flag.FlagSet, a *app) func(context.Context, []string) int {
			return func(ctx context.Context, args []string) int {
				if len(args) > 0 {
					cmd, _ := findCommand("stop")
					return a.usage(cmd, "unexpected argument %q", args[0])
				}
				ans, err := a.client().do(ctx, http.MethodPost, "/stop", nil, nil)
				if err != nil {
					return a.fail(err)
				}
				var res struct {
					Stopped bool   `json:"stopped"`
					ID      string `json:"id"`
				}
				if err := decode(ans, "POST /stop", &res); err != nil {
					return a.fail(err)
				}
				switch {
				case a.opts.json:
					a.printJSON(ans.body)
				case res.Stopped:
					fmt.Fprintf(a.stdout, "stopped %s\n", res.ID)
				default:
					fmt.Fprintln(a.stdout, "nothing was speaking")
				}
				return exitOK
			}
		},
	}
}
