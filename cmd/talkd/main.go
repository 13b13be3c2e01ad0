// Command talkd is the daemon: one place where several agents, pages and scripts are
// given a voice (serialised, ranked and silenced by the laws of internal/queue) and safe
// access to Werkbaum plans. See the README for configuration and the HTTP API.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"talkd/internal/config"
	"talkd/internal/queue/voice"
	"talkd/internal/werkbaum/gctune"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "0.1.0-dev"

func main() {
	if path := os.Getenv(stateCheckEnv); path != "" {
		os.Exit(runStateCheck(path, os.Stderr)) // the checker process (statecheck.go)
	}
	gctune.Apply(os.Getenv)
	os.Exit(run(os.Args[1:], os.Getenv, os.Stdout, os.Stderr))
}

func run(args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("talkd", flag.ContinueOnError)
	fs.SetOutput(stderr)
	showVersion := fs.Bool("version", false, "print the version and exit")
	checkConfig := fs.Bool("check-config", false, "validate the configuration, print a summary and exit 0 (valid) or 1 (invalid)")
	printExample := fs.Bool("print-config-example", false, "print an example config file with every key explained, and exit")
	fs.Usage = func() {
		fmt.Fprintf(stderr, `talkd — a voice and Werkbaum plans for agents, pages and scripts.

Usage: talkd [flags]

The configuration is read from $TALK_CONFIG, else $XDG_CONFIG_HOME/talk/config.toml
(~/.config/talk/config.toml); without a file the embedded defaults apply (loopback
127.0.0.1:7077, auto provider and sink). Environment overrides: TALK_LISTEN, TALK_PORT,
TALK_ALLOWED_ORIGINS, TALK_PROVIDER, TALK_SINK, TALK_STATE_DIR. TALK_LOG_LEVEL sets the
log level: debug, info (default), warn or error; every announcement's outcome is one
info line, and debug adds its text. Info lines are written in batches, at most 10 ms
after they are logged; warnings and errors at once; all of them before talkd exits.

Flags:
`)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "talkd: unexpected argument %q (see talkd -h)\n", fs.Arg(0))
		return 2
	}
	switch {
	case *showVersion:
		fmt.Fprintln(stdout, "talkd", version)
		return 0
	case *printExample:
		fmt.Fprint(stdout, config.Example())
		return 0
	}
	cfg, err := config.Load(getenv)
	if err != nil {
		fmt.Fprintf(stderr, "talkd: invalid configuration:\n%v\n", err)
		return 1
	}
	if *checkConfig {
		// The voice is built as the start builds it, so both agree on every config.
		info, err := voice.Validate(cfg.Voice, cfg.Server.StateDir)
		if err != nil {
			fmt.Fprintf(stderr, "talkd: invalid configuration:\nvoice: %v\n", err)
			return 1
		}
		fmt.Fprintf(stdout, "configuration OK (%s): listen %s, provider %s, sink %s, %d plan(s), %d client(s)\n",
			cfg.Source, cfg.Server.Listen, cfg.Voice.Provider, cfg.Voice.Sink, len(cfg.Plans), len(cfg.Clients))
		for _, line := range cfg.RemoteSummary() {
			fmt.Fprintln(stdout, "  "+line)
		}
		fmt.Fprintf(stdout, "  voice: %s (%s); sink %s (%s)\n", info.Provider, info.ProviderReason, info.Sink, info.SinkReason)
		if !info.Audible {
			fmt.Fprintf(stdout, "  warning: announcements will not be heard: %s\n", info.Silent)
		}
		return 0
	}
	log, flushLog := newLogger(stderr, logLevel(getenv("TALK_LOG_LEVEL")))
	defer flushLog() // the lines still held, before main exits
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	if err := serve(ctx, cfg, getenv, log, listenSource(cfg, getenv)); err != nil {
		log.Error("talkd stopped", "err", err)
		return 1
	}
	return 0
}

// listenSource names where the listen address came from, so an error about it points at
// the setting to change rather than at one the user never set.
func listenSource(cfg *config.Config, getenv func(string) string) string {
	switch {
	case getenv("TALK_LISTEN") != "":
		return "TALK_LISTEN"
	case getenv("TALK_PORT") != "":
		return "TALK_PORT"
	case cfg.Source != "" && cfg.Source != "embedded defaults":
		return "server.listen in " + cfg.Source
	}
	return "the default (set server.listen in the config file, or TALK_PORT for one run)"
}

func logLevel(s string) slog.Level {
	var l slog.Level
	if err := l.UnmarshalText([]byte(s)); err != nil {
		return slog.LevelInfo
	}
	return l
}
