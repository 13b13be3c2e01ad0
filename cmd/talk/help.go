package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"
)

const mainHelp = `talk — the command line of talkd, the voice (and plan keeper) of your agents.

Usage: talk [--url URL] [--timeout D] [--json] COMMAND [flags] [arguments]

Commands:
%s
Common flags (before or after the command):
  --url URL      daemon to talk to; default $TALK_URL, else http:// + the listen address of
                 the talkd config ($TALK_CONFIG or ~/.config/talk/config.toml; env
                 TALK_LISTEN/TALK_PORT apply), else http://127.0.0.1:7077
  --timeout D    time limit of each request (default 10s)
  --json         on commands that print data: print the daemon's JSON answer unchanged
                 (compact, one line) instead of the human summary

Environment:
  TALK_URL       daemon URL (beaten by --url)
  TALK_TOKEN     bearer token, sent as "Authorization: Bearer …" when set (shared mode)
  TALK_AGENT     a name for yourself, sent as X-Talk-Agent: shown in history, kept as
                 the author of plan writes (a label, not proof), and the key of
                 [voice.agents] for your voice

Exit codes:
%s
Examples:
  talk say "tests are green"
  make 2>&1 | talk say -p high -l de
  talk say --wait "deploy done" && echo heard
  talk say -l fr --voice fr-fr --rate 200 "Le déploiement est terminé"
  talk cancel; talk mute 30m; talk mute --until 14:00; talk unmute
  talk history -n 5 --json | jq .; talk history -f
  talk plan inspect werkbaum --id ed.parser
  talk plan set-status werkbaum ed.parser done
  talk service install; source <(talk completion bash)

Note: Debian's netkit package ships an unrelated "talk"; install this one under
~/.local/bin (first in PATH) or call it by its full path.
Run 'talk help COMMAND' for the flags of one command.
`

func writeMainHelp(w io.Writer) {
	var b strings.Builder
	for _, c := range commands() {
		fmt.Fprintf(&b, "  %-28s %s\n", c.usage, c.summary)
	}
	fmt.Fprintf(w, mainHelp, b.String(), exitCodesHelp())
}

func writeCommandHelp(w io.Writer, cmd command) {
	fmt.Fprintf(w, "Usage: talk %s\n\n%s\n", cmd.usage, cmd.summary)
	if cmd.detail != "" {
		fmt.Fprintf(w, "\n%s\n", strings.TrimRight(cmd.detail, "\n"))
	}
	fs := flag.NewFlagSet("talk "+cmd.name, flag.ContinueOnError)
	cmd.define(fs, &app{opts: options{timeout: defaultTimeout}})
	(&app{opts: options{timeout: defaultTimeout}}).commonFlags(fs, cmd)
	flags := flagHelp(fs)
	if flags != "" {
		fmt.Fprintf(w, "\nFlags:\n%s", flags)
	}
	fmt.Fprintln(w, "\n"+exitCodesShort())
}

// flagHelp lists fs's flags as the README and the main help write them: one-letter flags
// with one dash (-p), long ones with two (--json), which talk accepts either way.
func flagHelp(fs *flag.FlagSet) string {
	var b strings.Builder
	fs.VisitAll(func(f *flag.Flag) {
		dash := "--"
		if len(f.Name) == 1 {
			dash = "-"
		}
		typ, usage := flag.UnquoteUsage(f)
		fmt.Fprintf(&b, "  %s%s", dash, f.Name)
		if typ != "" {
			b.WriteString(" " + typ)
		}
		b.WriteString("\n    \t" + strings.ReplaceAll(usage, "\n", "\n    \t"))
		if f.DefValue != "" && f.DefValue != "false" && f.DefValue != "0" {
			fmt.Fprintf(&b, " (default %s)", f.DefValue)
		}
		b.WriteString("\n")
	})
	return b.String()
}

func helpCommand() command {
	return command{
		name: "help", usage: "help [COMMAND]", summary: "show help for talk or for one command",
		define: func(fs *flag.FlagSet, a *app) func(context.Context, []string) int {
			return func(_ context.Context, args []string) int {
				switch len(args) {
				case 0:
					writeMainHelp(a.stdout)
					return exitOK
				case 1:
					cmd, ok := findCommand(args[0])
					if !ok {
						fmt.Fprintf(a.stderr, "talk help: unknown command %q\nRun 'talk --help' for the list of commands.\n", args[0])
						return exitUsage
					}
					writeCommandHelp(a.stdout, cmd)
					return exitOK
				}
				fmt.Fprintln(a.stderr, "talk help: give at most one command name")
				return exitUsage
			}
		},
	}
}
