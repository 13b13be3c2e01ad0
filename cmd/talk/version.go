package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"time"
)

func versionCommand() command {
	return command{
		name: "version", usage: "version", summary: "print the version of talk and, when reachable, of the daemon", data: true,
		detail: `Always exits 0: an unreachable daemon is reported, not an error. The daemon gets 2s to
answer unless --timeout says otherwise. --json prints {"talk":"…","talkd":"…" or null,"url":"…"}.`,
		define: func(fs *flag.FlagSet, a *app) func(context.Context, []string) int {
			return func(ctx context.Context, args []string) int {
				if len(args) > 0 {
					cmd, _ := findCommand("version")
					return a.usage(cmd, "unexpected argument %q", args[0])
				}
				if a.opts.timeout == defaultTimeout {
					// A version check should not hang a prompt or a script for long.
					a.opts.timeout = 2 * time.Second
				}
				c := a.client()
				_, st, err := a.fetchStatus(ctx)
				if a.opts.json {
					doc := map[string]any{"talk": version, "talkd": nil, "url": c.base}
					if err == nil {
						doc["talkd"] = st.Version
					}
					raw, _ := json.Marshal(doc)
					a.printJSON(raw)
					return exitOK
				}
				fmt.Fprintf(a.stdout, "talk %s\n", version)
				if err != nil {
					fmt.Fprintf(a.stdout, "talkd: no answer from %s (%v)\n", c.base, shortErr(err))
					return exitOK
				}
				fmt.Fprintf(a.stdout, "talkd %s at %s\n", st.Version, c.base)
				return exitOK
			}
		},
	}
}

func shortErr(err error) string {
	var ue *unreachableError
	if errors.As(err, &ue) {
		if ue.timeout > 0 {
			return "no answer within " + ue.timeout.String()
		}
		return rootCause(ue.err).Error()
	}
	return err.Error()
}
