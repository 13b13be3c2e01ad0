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
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"talkd/internal/config"
	"talkd/internal/queue"
	"talkd/internal/queue/state"
	"talkd/internal/queue/voice"
	"talkd/internal/werkbaum/mirror"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "0.1.0-dev"

func main() {
	if path := os.Getenv(stateCheckEnv); path != "" {
		os.Exit(runStateCheck(path, os.Stderr)) // the checker process (statecheck.go)
	}
	tuneGC(os.Getenv)
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

// serve runs the daemon until ctx ends, then shuts down gracefully: stop accepting,
// finish in-flight requests and the current utterance within the configured bound, save
// the history and close the database. SIGHUP reloads the configuration (reload.go); getenv
// is what the reload reads it with.
func serve(ctx context.Context, cfg *config.Config, getenv func(string) string, log *slog.Logger, listenFrom string) error {
	d := &daemon{log: log, getenv: getenv, releaser: newMemoryReleaser(idleRelease, log)}
	d.cfg.Store(cfg)
	d.quietNotify.Store(cfg.Rules.QuietNotify)
	stopHUP := d.onSIGHUP(ctx)
	defer stopHUP()

	db, err := state.Open(cfg.DBPath(), state.Options{Log: log, CheckApart: checkStateApart})
	if err != nil {
		return err
	}
	defer db.Close()
	d.db = db

	speaker, err := voice.New(cfg.Voice, cfg.Server.StateDir, log)
	if err != nil {
		return fmt.Errorf("voice: %w", err)
	}
	defer speaker.Close()
	d.speaker = speaker

	q, err := queue.New(queue.ConfigFrom(cfg), speaker, db, time.Now, log)
	if err != nil {
		return err
	}
	q.OnQuietDiscard = func(a queue.Announcement) {
		if d.quietNotify.Load() {
			speaker.Notify("talkd (quiet hours)", a.Text)
		}
	}
	d.q = q
	runCtx, cancelRun := context.WithCancel(context.Background())
	defer cancelRun()
	go q.Run(runCtx)
	defer func() {
		// On an early return too (the port is taken, a plan is broken): save the history
		// before the database closes. After a graceful stop this returns at once.
		closeCtx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		q.Close(closeCtx)
	}()

	srv := d.newServer(cfg)
	if wantsPlans(cfg) {
		parts, err := d.openPlans(cfg, srv)
		if err != nil {
			return err
		}
		d.mu.Lock()
		d.plans = parts
		d.mu.Unlock()
	}
	defer func() {
		// The store may also have been made by a reload.
		if p := d.planParts(); p != nil {
			if err := p.store.Close(); err != nil {
				log.Error("plan journal", "err", err)
			}
		}
	}()
	ln, err := net.Listen("tcp", cfg.Server.Listen)
	if err != nil {
		if errors.Is(err, syscall.EADDRINUSE) {
			return fmt.Errorf("listen on %s (from %s): the address is in use (is talkd already running? choose another port there): %w", cfg.Server.Listen, listenFrom, err)
		}
		return fmt.Errorf("listen on %s (from %s): %w", cfg.Server.Listen, listenFrom, err)
	}
	d.listenAddr = ln.Addr().String()
	srv.SetListenAddr(d.listenAddr)
	d.use(srv)
	releaser := d.releaser
	go releaser.run(runCtx)
	httpSrv := &http.Server{
		Handler:           releaser.wrap(d),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	// Held long polls of the document feed (of every server a reload built) answer 204 at
	// shutdown instead of holding it up.
	httpSrv.RegisterOnShutdown(d.endPolls)
	info := speaker.Info()
	log.Info("listening", "addr", ln.Addr().String(), "config", cfg.Source, "provider", info.Provider, "sink", info.Sink, "version", version)
	flushLogs(log) // whoever waits for the daemon to come up reads this line

	serveErr := make(chan error, 1)
	go func() { serveErr <- httpSrv.Serve(&calmListener{Listener: ln, log: log}) }()
	select {
	case err := <-serveErr:
		return fmt.Errorf("http server: %w", err)
	case <-ctx.Done():
	}
	log.Info("shutting down")
	d.closing.Store(true)
	// The shutdown bound in force now (a reload may have changed it).
	shutdownCtx, cancel := context.WithTimeout(context.Background(), d.cfg.Load().Server.ShutdownTimeout.Duration)
	defer cancel()
	if err := httpSrv.Shutdown(shutdownCtx); err != nil {
		log.Warn("in-flight requests did not finish in time", "err", err)
	}
	if err := d.waitPolls(shutdownCtx); err != nil {
		log.Warn("held document polls were not all answered in time", "err", err)
	}
	if err := q.Close(shutdownCtx); err != nil {
		log.Warn("closing the voice", "err", err)
	}
	if p := d.planParts(); p != nil {
		// Commits run outside the requests (in the mirror's workers): let them finish
		// while the state database is still open.
		if err := p.mirror.Wait(shutdownCtx); err != nil {
			log.Warn("mirror commits did not finish in time", "err", err)
		}
	}
	log.Info("stopped")
	return nil
}

// engines adapts the voice to what the API needs for validation and /status.
type engines struct{ v *voice.Voice }

func (e engines) Has(provider string) bool { return e.v.Has(provider) }
func (e engines) Describe() any            { return e.v.Info() }
func (e engines) Silent(p string) string   { return e.v.Silent(p) }
func (e engines) Check(ctx context.Context, provider, lang, voice string) (string, error) {
	return e.v.Check(ctx, provider, lang, voice)
}
func (e engines) Voices(ctx context.Context) (any, error) {
	list, err := e.v.Voices(ctx)
	if list == nil {
		return []voice.VoiceInfo{}, err
	}
	return list, err
}

// planVoice lets plan writes announce through the queue (mirror.Submitter): at low
// priority, through the speak validation (api.Server.Announcements) and under the same
// laws as /speak. It is the only place the mirror meets the queue, so
// internal/werkbaum/mirror does not import internal/queue.
type planVoice struct {
	gate interface {
		Submit(ctx context.Context, a queue.Announcement) (queue.Outcome, error)
	}
}

func (v planVoice) Announce(ctx context.Context, a mirror.Announcement) (mirror.Outcome, error) {
	out, err := v.gate.Submit(ctx, queue.Announcement{Text: a.Text, Lang: a.Lang, Priority: queue.Low, Caller: a.Caller, Agent: a.Agent})
	return mirror.Outcome{Status: out.Status, Reason: out.Reason}, err
}
