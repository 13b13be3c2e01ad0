// Command talk is the command line of talkd for people, shell scripts and git hooks: it
// asks the daemon to speak, shows and changes its state (mute, stop, history), reads and
// updates Werkbaum plans, and bridges MCP over stdio. It only speaks HTTP to the daemon;
// everything it prints comes from the daemon's answers.
//
// Exit codes are part of the interface (scripts branch on them). exitcodes.go holds the
// one list that talk --help, each command's help and the README show (TestExitCodesDocumented):
//
//	0   ok (talk say --wait: the announcement was heard)
//	1   other failure
//	2   usage error
//	3   daemon unreachable
//	4   refused by the daemon
//	5   talk say --wait: not spoken for another reason (stopped, dropped, cancelled)
//	6   talk say --wait: muted
//	7   talk say --wait: discarded by the rules
//	8   talk say --wait: failed
//	9   talk say --wait: stale
//	10  talk say --wait: no audio (nothing here could make it heard)
//
// Without --wait a muted or discarded announcement is not a failure: talk says so on
// stderr and exits 0.
//
// One file per command (say.go, status.go, mute.go, stop.go, reload.go, cancel.go,
// history.go, voices.go, version.go, plans.go, plan.go with plan_show.go, plan_inspect.go,
// plan_write.go, plan_edit.go and plan_open.go, mcpbridge.go, service.go, setup.go,
// hook.go, doctor.go, completion.go, help.go); main.go parses the command line. The shapes
// of the daemon's answers are in wire.go, the HTTP client in client.go, tool calls over
// /mcp in toolcall.go, and the neutralising of terminal controls in plan text in
// terminal.go.
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
	"sync"
	"syscall"
	"time"

	"talkd/internal/config"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "0.1.0-dev"

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

	// The daemon's config as talk sees it, read once per run: the hook, the URL and the
	// editor link all derive from it, and the hook's budget is 0.8 s.
	peekOnce sync.Once
	peeked   *config.Config
	peekErr  error
}

// config returns the daemon's configuration without its secrets (config.Peek), read on
// first use.
func (a *app) config() (*config.Config, error) {
	a.peekOnce.Do(func() { a.peeked, a.peekErr = config.Peek(a.getenv) })
	return a.peeked, a.peekErr
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
