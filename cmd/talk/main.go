// Command talk is the command line of talkd for people, shell scripts and git hooks: it
// asks the daemon to speak, shows and changes its state (mute, stop, history), reads and
// updates Werkbaum plans, and bridges MCP over stdio. It only speaks HTTP to the daemon;
// everything it prints comes from the daemon's answers.
//
// Exit codes are part of the interface (scripts branch on them): 0 ok, 1 other failure,
// 2 usage error, 3 daemon unreachable, 4 refused by the daemon; talk say --wait adds one
// code per way an announcement ends unheard (exitcodes.go, the list help and README show).
// Without --wait a muted or discarded announcement is not a failure: talk says so on
// stderr and exits 0.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "0.1.0-dev"

// Exit codes of talk, documented in `talk --help`.
const (
	exitOK          = 0
	exitFailure     = 1
	exitUsage       = 2
	exitUnreachable = 3
	exitRefused     = 4
	// exitNotSpoken: talk say --wait saw the announcement end without being spoken.
	exitNotSpoken = 5
)

// defaultTimeout bounds every request unless --timeout says otherwise.
const defaultTimeout = 10 * time.Second

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Getenv, os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// options are the flags every command accepts (before or after the command name).
type options struct {
	url     string
	json    bool
	timeout time.Duration
}

// app is one invocation of talk: its environment, streams and common options.
type app struct {
	getenv func(string) string
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
	opts   options
	cl     *client // built on first use by client()
}

// command is one subcommand. define registers the command's own flags on fs and returns
// the function that runs it with the positional arguments; help is built from the same
// FlagSet, so the documented flags are always the real ones.
type command struct {
	name    string
	usage   string // after "talk ", e.g. "say [flags] TEXT…"
	summary string
	detail  string
	// data marks commands that print data and therefore take --json.
	data bool
	// passthrough hands every argument except the common flags to the command (talk mcp,
	// whose flags belong to the bridge).
	passthrough bool
	define      func(fs *flag.FlagSet, a *app) func(ctx context.Context, args []string) int
}

func commands() []command {
	return []command{
		sayCommand(), statusCommand(), muteCommand(), unmuteCommand(), stopCommand(), reloadCommand(),
		cancelCommand(), historyCommand(), voicesCommand(), versionCommand(), plansCommand(), planCommand(),
		mcpCommand(), serviceCommand(), setupCommand(), hookCommand(), doctorCommand(), completionCommand(), helpCommand(),
	}
}

func findCommand(name string) (command, bool) {
	for _, c := range commands() {
		if c.name == name {
			return c, true
		}
	}
	return command{}, false
}

// run is talk without the process around it: arguments, environment and streams in, exit
// code out.
func run(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) int {
	a := &app{getenv: getenv, stdin: stdin, stdout: stdout, stderr: stderr,
		opts: options{timeout: defaultTimeout}}

	top := flag.NewFlagSet("talk", flag.ContinueOnError)
	top.SetOutput(io.Discard)
	a.commonFlags(top, command{data: true})
	showVersion := top.Bool("version", false, "print the version (same as: talk version)")
	if err := top.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			writeMainHelp(stdout)
			return exitOK
		}
		fmt.Fprintf(stderr, "talk: %v\nRun 'talk --help' for usage.\n", err)
		return exitUsage
	}
	rest := top.Args()
	if *showVersion {
		rest = append([]string{"version"}, rest...)
	}
	if len(rest) == 0 {
		writeMainHelp(stderr)
		return exitUsage
	}
	cmd, ok := findCommand(rest[0])
	if !ok {
		fmt.Fprintf(stderr, "talk: unknown command %q\nRun 'talk --help' for the list of commands.\n", rest[0])
		return exitUsage
	}
	fs := flag.NewFlagSet("talk "+cmd.name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	runCmd := cmd.define(fs, a)
	a.commonFlags(fs, cmd)
	var pos []string
	var err error
	if cmd.passthrough {
		// The command parses its own flags (talk mcp has its own --timeout); only --url
		// is taken out here.
		var common []string
		common, pos = splitFlags(rest[1:], "url")
		err = fs.Parse(common)
	} else {
		pos, err = parseInterspersed(fs, rest[1:])
	}
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			writeCommandHelp(stdout, cmd)
			return exitOK
		}
		return a.usage(cmd, "%v", err)
	}
	return runCmd(ctx, pos)
}

// commonFlags registers the options cmd takes besides its own (all of them on the top
// level, where cmd is the zero command with data set). Their defaults are the values parsed
// so far, so `talk --url X say …` and `talk say --url X …` mean the same.
func (a *app) commonFlags(fs *flag.FlagSet, cmd command) {
	if cmd.name == "help" {
		return
	}
	fs.StringVar(&a.opts.url, "url", a.opts.url, "daemon `URL` (default: $TALK_URL, else the listen address of the talkd config)")
	if cmd.passthrough {
		return
	}
	fs.DurationVar(&a.opts.timeout, "timeout", a.opts.timeout, "time limit of each request to the daemon")
	if cmd.data {
		fs.BoolVar(&a.opts.json, "json", a.opts.json, "print the daemon's JSON answer unchanged (compact, one line)")
	}
}

// parseInterspersed parses flags anywhere among the positional arguments (`talk mute 30m
// --json`, `talk say "Build kaputt" -p high`), as GNU tools do; everything after "--" is
// positional, so `talk say -- -5 degrees` speaks "-5 degrees". An argument that starts
// with "- " is never a flag (a plan's node line: talk plan add p root "- [ ] #t: Token").
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if len(args) > 0 && strings.HasPrefix(args[0], "- ") {
			pos, args = append(pos, args[0]), args[1:]
			continue
		}
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if consumed := len(args) - len(rest); consumed > 0 && args[consumed-1] == "--" {
			return append(pos, rest...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// splitFlags separates the flags named in names (as -name V, --name V, -name=V or
// --name=V) from the other arguments, keeping the order of both. Arguments after "--" are
// never taken.
func splitFlags(args []string, names ...string) (taken, rest []string) {
	for i := 0; i < len(args); i++ {
		arg := args[i]
		if arg == "--" {
			return taken, append(rest, args[i:]...)
		}
		if !strings.HasPrefix(arg, "-") || arg == "-" {
			rest = append(rest, arg)
			continue
		}
		name := strings.TrimPrefix(strings.TrimPrefix(arg, "-"), "-")
		base, _, withEq := strings.Cut(name, "=")
		known := false
		for _, n := range names {
			known = known || base == n
		}
		switch {
		case !known:
			rest = append(rest, arg)
		case withEq || i+1 >= len(args):
			taken = append(taken, arg)
		default:
			taken = append(taken, arg, args[i+1])
			i++
		}
	}
	return taken, rest
}

// usage reports a usage error of cmd and returns exit code 2.
func (a *app) usage(cmd command, format string, args ...any) int {
	fmt.Fprintf(a.stderr, "talk %s: %s\nUsage: talk %s\nRun 'talk help %s' for details.\n",
		cmd.name, fmt.Sprintf(format, args...), cmd.usage, cmd.name)
	return exitUsage
}

// warnf prints a note on stderr.
func (a *app) warnf(format string, args ...any) {
	fmt.Fprintf(a.stderr, "talk: "+format+"\n", args...)
}

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

func mcpCommand() command {
	return command{
		name: "mcp", usage: "mcp [flags]", passthrough: true, summary: "serve MCP over stdio for hosts that launch a command (bridge to the daemon's /mcp)",
		detail: "An MCP host (coding assistant, desktop client) starts `talk mcp` and speaks JSON-RPC on\n" +
			"its stdin/stdout; talk forwards every message to the daemon's POST /mcp. The bridge's own\n" +
			"flags (e.g. --timeout, the longest wait for one answer, default 30s): talk mcp -h.",
		define: func(fs *flag.FlagSet, a *app) func(context.Context, []string) int {
			return func(ctx context.Context, args []string) int {
				c := a.client()
				return runMCP(ctx, args, a.stdin, a.stdout, a.stderr, c.base, c.token)
			}
		},
	}
}
