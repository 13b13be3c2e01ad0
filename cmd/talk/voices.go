package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"strings"
)

func (v voiceInfo) lines() []string {
	var out []string
	withReason := func(label, value, reason string) {
		if value == "" {
			return
		}
		if reason != "" {
			value += " (" + reason + ")"
		}
		out = append(out, fmt.Sprintf("%-12s %s", label, value))
	}
	withReason("provider", v.Provider, v.ProviderReason)
	withReason("sink", v.Sink, v.SinkReason)
	if len(v.Providers) > 0 {
		out = append(out, fmt.Sprintf("%-12s %s", "usable", strings.Join(v.Providers, ", ")+"   (talk say --provider NAME)"))
	}
	return out
}

func voicesCommand() command {
	return command{
		name: "voices", usage: "voices", summary: "show the speech provider and sink, and the voices the engine offers", data: true,
		detail: `Uses the daemon's GET /voices when it has one; otherwise what GET /status reports about
the voice (provider, sink and why auto picked them, the providers "say --provider" may
name). With --json the daemon's JSON is printed unchanged (of /status: the "voice" object).`,
		define: func(fs *flag.FlagSet, a *app) func(context.Context, []string) int {
			return func(ctx context.Context, args []string) int {
				if len(args) > 0 {
					cmd, _ := findCommand("voices")
					return a.usage(cmd, "unexpected argument %q", args[0])
				}
				return a.voices(ctx)
			}
		},
	}
}

func (a *app) voices(ctx context.Context) int {
	c := a.client()
	ans, err := c.do(ctx, http.MethodGet, "/voices", nil, nil)
	var re *refusedError
	if errors.As(err, &re) && re.status == http.StatusNotFound && re.code == "not_found" {
		// This daemon has no voice list endpoint: show what /status says.
		_, st, serr := a.fetchStatus(ctx)
		if serr != nil {
			return a.fail(serr)
		}
		if a.opts.json {
			a.printJSON(st.Voice)
			return exitOK
		}
		var vi voiceInfo
		if err := json.Unmarshal(st.Voice, &vi); err != nil {
			return a.fail(fmt.Errorf("the voice part of GET /status is not the expected JSON: %w", err))
		}
		for _, l := range vi.lines() {
			fmt.Fprintln(a.stdout, l)
		}
		return exitOK
	}
	if err != nil {
		return a.fail(err)
	}
	if a.opts.json {
		a.printJSON(ans.body)
		return exitOK
	}
	var doc struct {
		voiceInfo
		Voices []struct {
			ID     string `json:"id"`
			Name   string `json:"name"`
			Lang   string `json:"lang"`
			Gender string `json:"gender"`
		} `json:"voices"`
		Error string `json:"error"`
	}
	if err := decode(ans, "GET /voices", &doc); err != nil {
		return a.fail(err)
	}
	for _, l := range doc.lines() {
		fmt.Fprintln(a.stdout, l)
	}
	if doc.Error != "" {
		fmt.Fprintf(a.stdout, "%-12s %s\n", "voices", doc.Error)
	}
	for _, v := range doc.Voices {
		fmt.Fprintf(a.stdout, "  %-24s %-8s %-8s %s\n", v.ID, v.Lang, v.Gender, v.Name)
	}
	return exitOK
}
