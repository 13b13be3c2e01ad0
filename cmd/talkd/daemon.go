package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"talkd/internal/api"
	"talkd/internal/config"
	"talkd/internal/queue"
	"talkd/internal/queue/voice"
	"talkd/internal/state"
	"talkd/internal/werkbaum"
	"talkd/internal/werkbaum/mirror"
	"talkd/internal/werkbaum/plans"
)

// daemon is what serve wires together and what a configuration reload (SIGHUP, POST
// /reload) changes. Each component takes its new settings in one step of its own (an
// atomic pointer or its lock), so a request sees either the old or the new settings of a
// component, never a mix; nothing waiting is dropped.
type daemon struct {
	log     *slog.Logger
	getenv  func(string) string
	db      *state.DB
	speaker *voice.Voice
	q       *queue.Voice

	// reloadMu runs one reload at a time, whichever door it came through.
	reloadMu sync.Mutex
	cfg      atomic.Pointer[config.Config]
	// quietNotify is rules.quiet_notify (read by the queue's quiet-hours hook).
	quietNotify atomic.Bool
	// closing refuses reloads once the daemon is shutting down.
	closing atomic.Bool

	// serving is the API server answering requests now; ServeHTTP reads it per request.
	serving atomic.Pointer[serving]
	// listenAddr is the bound address, set before the first request.
	listenAddr string

	// mu guards servers and plans, which a reload changes while the shutdown reads them.
	mu      sync.Mutex
	servers []*api.Server // every server built, for EndPolls at shutdown
	plans   *planParts    // nil until a configuration has plans or roots

	// releaser hands memory back after work: requests', and the plan follower's.
	releaser *memoryReleaser
}

// followEvery is how often the plan store looks at the plan files for changes made outside
// talkd (plans.Options.FollowEvery): a document editor sees such a change within one to
// two intervals, and the stat of a few files twice a second costs nothing measurable.
const followEvery = 500 * time.Millisecond

type serving struct {
	srv *api.Server
	h   http.Handler
}

// planParts are the plan store and what it needs: made when the first configuration with
// plans or roots is applied (at start or by a reload), kept until the daemon stops.
type planParts struct {
	engine   *werkbaum.Engine
	analyses *werkbaum.Persist // nil when off
	mirror   *mirror.Mirror
	recorder *mirror.Recorder
	store    *plans.Service
}

// wantsPlans reports whether cfg needs the plan store. Without plans the daemon does not
// pay for the notation engine (the idle memory target); a reload that adds the first
// plan creates it.
func wantsPlans(cfg *config.Config) bool { return len(cfg.Plans) > 0 || len(cfg.Roots) > 0 }

// ServeHTTP hands the request to the API server in force now. A request keeps the server
// it started on until it ends, also across a reload that replaced it.
func (d *daemon) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	d.serving.Load().h.ServeHTTP(w, r)
}

// newServer builds an API server for cfg (not serving yet).
func (d *daemon) newServer(cfg *config.Config) *api.Server {
	srv := api.New(api.Options{Config: cfg, Voice: d.q, Engines: engines{d.speaker}, Version: version, Log: d.log})
	if d.listenAddr != "" {
		srv.SetListenAddr(d.listenAddr)
	}
	srv.SetReloader(d.reload)
	return srv
}

// use makes srv the server that answers from the next request on.
func (d *daemon) use(srv *api.Server) {
	d.mu.Lock()
	d.servers = append(d.servers, srv)
	d.mu.Unlock()
	d.serving.Store(&serving{srv: srv, h: srv.Handler()})
}

// openPlans makes the plan store for cfg; srv validates the plans' announcements (the
// same speak validation as every other announcement).
func (d *daemon) openPlans(cfg *config.Config, srv *api.Server) (*planParts, error) {
	// A large plan (thousands of nodes) needs a few hundred ms per call on a busy two-core
	// machine; 5 s keeps such plans usable while a runaway input still costs only one error.
	analyses, err := d.openAnalyses(cfg)
	if err != nil {
		return nil, err
	}
	engine, err := werkbaum.NewEngine(werkbaum.Options{Timeout: 5 * time.Second, Persist: analyses, Logger: d.log})
	if err != nil {
		return nil, fmt.Errorf("notation engine: %w", err)
	}
	gitMirror, err := mirror.NewMirror(mirror.MirrorOptions{DB: d.db, Log: d.log})
	if err != nil {
		return nil, err
	}
	recorder := mirror.New(mirror.Options{Engine: engine, Mirror: gitMirror, Voice: planVoice{srv.Announcements()}, Log: d.log})
	store, err := plans.New(plans.Options{Plans: cfg.Plans, Roots: cfg.Roots, Engine: engine, DB: plans.Bolt(d.db), Lanes: &queue.Lanes{}, Log: d.log,
		Recorder: recorder, FollowEvery: followEvery, FollowWorked: d.releaser.work})
	if err != nil {
		return nil, err
	}
	srv.RegisterPlans(store, engine.Vocabulary())
	srv.RegisterDocuments(store)
	if analyses != nil {
		srv.SetAnalysisCache(func() any { return analyses.Stats() })
	}
	return &planParts{engine: engine, analyses: analyses, mirror: gitMirror, recorder: recorder, store: store}, nil
}

// openAnalyses opens the disk cache of the plans' analyses (nil when
// server.analysis_cache_bytes is 0): a restarted daemon then answers the first inspect
// of a plan it analysed before without the analysis.
func (d *daemon) openAnalyses(cfg *config.Config) (*werkbaum.Persist, error) {
	if cfg.Server.AnalysisCacheBytes == 0 {
		d.log.Info("analysis cache off (server.analysis_cache_bytes = 0): plans are analysed again after every restart")
		return nil, nil
	}
	p, err := werkbaum.OpenPersist(werkbaum.PersistOptions{Dir: cfg.AnalysisCacheDir(), MaxBytes: cfg.Server.AnalysisCacheBytes, Logger: d.log})
	if err != nil {
		return nil, fmt.Errorf("analysis cache: %w", err)
	}
	return p, nil
}

// closeAnalyses ends what the plan parts run besides the store: the analysis cache's writer
// (the answers it still holds are written, within ctx).
func (p *planParts) closeAnalyses(ctx context.Context, log *slog.Logger) {
	if p.analyses == nil {
		return
	}
	if err := p.analyses.Close(ctx); err != nil {
		log.Warn("analysis cache", "err", err)
	}
}

// planParts returns the plan store's parts (nil without plans).
func (d *daemon) planParts() *planParts {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.plans
}

// endPolls ends the held long polls of every server built (http.Server.RegisterOnShutdown).
func (d *daemon) endPolls() {
	d.mu.Lock()
	servers := append([]*api.Server(nil), d.servers...)
	d.mu.Unlock()
	for _, s := range servers {
		s.EndPolls()
	}
}

// waitPolls waits until the parked long polls of every server built have been answered
// (after endPolls): http.Server.Shutdown does not wait for a connection taken over.
func (d *daemon) waitPolls(ctx context.Context) error {
	d.mu.Lock()
	servers := append([]*api.Server(nil), d.servers...)
	d.mu.Unlock()
	for _, s := range servers {
		if err := s.WaitPolls(ctx); err != nil {
			return err
		}
	}
	return nil
}

// serve runs the daemon until ctx ends, then shuts down gracefully: stop accepting,
// finish in-flight requests and the current utterance within the configured bound, save
// the history and close the database. SIGHUP reloads the configuration (reload.go); getenv
// is what the reload reads it with.
func serve(ctx context.Context, cfg *config.Config, getenv func(string) string, log *slog.Logger, listenFrom string) error {
	d := &daemon{log: log, getenv: getenv, releaser: newMemoryReleaser(idleRelease, log)}
	d.releaser.shed = d.shedIdle
	d.releaser.drop, d.releaser.keep = d.dropModels, modelKeep
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
			// Closed already after a graceful stop (then this returns at once); not yet
			// after an early return.
			closeCtx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			p.closeAnalyses(closeCtx, log)
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
		p.closeAnalyses(shutdownCtx, log)
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
