package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"talkd/internal/api"
	"talkd/internal/config"
	"talkd/internal/queue"
	"talkd/internal/queue/state"
	"talkd/internal/queue/voice"
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
	engine, err := werkbaum.NewEngine(werkbaum.Options{Timeout: 5 * time.Second})
	if err != nil {
		return nil, fmt.Errorf("notation engine: %w", err)
	}
	gitMirror, err := mirror.NewMirror(mirror.MirrorOptions{DB: d.db, Log: d.log})
	if err != nil {
		return nil, err
	}
	recorder := mirror.New(mirror.Options{Engine: engine, Mirror: gitMirror, Voice: planVoice{srv.Announcements()}, Log: d.log})
	store, err := plans.New(plans.Options{Plans: cfg.Plans, Roots: cfg.Roots, Engine: engine, DB: plans.Bolt(d.db), Lanes: &queue.Lanes{}, Log: d.log,
		Recorder: recorder, FollowEvery: followEvery, FollowWorked: d.releaser.answered})
	if err != nil {
		return nil, err
	}
	srv.RegisterPlans(store, engine.Vocabulary())
	srv.RegisterDocuments(store)
	return &planParts{engine: engine, mirror: gitMirror, recorder: recorder, store: store}, nil
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

// onSIGHUP reloads the configuration on every SIGHUP until ctx ends or stop is called
// (serve may return early, before ctx ends). The signal is taken over before anything
// else is set up, so a SIGHUP never kills the daemon.
func (d *daemon) onSIGHUP(ctx context.Context) (stop func()) {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-ctx.Done():
				return
			case <-hup:
				d.log.Info("SIGHUP: reloading the configuration")
				_, _ = d.reload(ctx) // the outcome is logged by reload
			}
		}
	}()
	return func() {
		signal.Stop(hup)
		cancel()
		<-done
	}
}

// errClosing and errStarting refuse a reload during the shutdown and before the daemon
// serves (a SIGHUP that early is not lost: the configuration is read at start anyway).
var (
	errClosing  = errors.New("talkd is shutting down")
	errStarting = errors.New("talkd is still starting; it reads the configuration as it starts")
)

// reload is the one reload function of SIGHUP and POST /reload. It reads and validates
// the whole configuration first (config.Load) and builds every part that can fail (the
// voice's new engines, the plan set); an error there keeps the old configuration
// everywhere and is logged at error level, naming the file and the problem. Then each
// component takes its new settings in one step. Settings a running daemon cannot take
// (the listen address, the state directory, the body limit) keep their old value and
// are named in a warning and in the report.
func (d *daemon) reload(ctx context.Context) (api.ReloadReport, error) {
	d.reloadMu.Lock()
	defer d.reloadMu.Unlock()
	old := d.cfg.Load()
	refuse := func(err error) (api.ReloadReport, error) {
		d.log.Error("configuration reload refused; the running configuration stays", "config", old.Source, "err", err)
		return api.ReloadReport{}, err
	}
	if d.closing.Load() {
		return refuse(errClosing)
	}
	if d.serving.Load() == nil {
		return refuse(errStarting)
	}
	if err := ctx.Err(); err != nil {
		return refuse(err)
	}
	loaded, err := config.Load(d.getenv)
	if err != nil {
		return refuse(err)
	}
	// Every component gets the settings in force: those that need a restart as they are.
	restart := restartNeeded(old, loaded)
	cfg := keepFixed(old, loaded)
	where := cfg.Source
	// An unchanged [voice] keeps its engine set, and with it the engines' voice lists
	// (espeak-ng --voices is not re-run on every reload).
	commitVoice := func() {}
	if !reflect.DeepEqual(old.Voice, cfg.Voice) {
		if commitVoice, err = d.speaker.Stage(cfg.Voice); err != nil {
			return refuse(fmt.Errorf("%s: voice: %w", where, err))
		}
	}
	parts := d.planParts()
	var fresh *planParts
	var freshSrv *api.Server
	switch {
	case parts != nil:
		if err := parts.store.Reconfigure(cfg.Plans, cfg.Roots); err != nil {
			return refuse(fmt.Errorf("%s: %w", where, err))
		}
	case wantsPlans(cfg):
		// The first plans: the plan tools, resources and document doors come with a new
		// API server, which answers from the next request on; requests on the old one
		// finish there.
		freshSrv = d.newServer(cfg)
		if fresh, err = d.openPlans(cfg, freshSrv); err != nil {
			return refuse(fmt.Errorf("%s: %w", where, err))
		}
	}
	// From here on nothing can fail for a configuration config.Load accepted.
	if err := d.q.Reconfigure(queue.ConfigFrom(cfg)); err != nil {
		return refuse(fmt.Errorf("%s: rules: %w", where, err))
	}
	commitVoice()
	d.quietNotify.Store(cfg.Rules.QuietNotify)
	if fresh != nil {
		d.mu.Lock()
		d.plans = fresh
		d.mu.Unlock()
		d.use(freshSrv)
	} else {
		_ = d.serving.Load().srv.Reconfigure(cfg) // cfg is not nil
	}
	for _, s := range restart {
		d.log.Warn("a changed setting needs a restart of talkd; the old value stays in force until then", "setting", s, "config", where)
	}
	d.cfg.Store(cfg)
	d.log.Info("configuration reloaded", "config", where, "plans", len(cfg.Plans), "roots", len(cfg.Roots), "clients", len(cfg.Clients), "restart_needed", len(restart))
	msg := "the new configuration is in force"
	if len(restart) > 0 {
		msg += "; restart talkd for " + strings.Join(restart, ", ")
	}
	return api.ReloadReport{Config: where, RestartNeeded: restart, Message: msg}, nil
}

// restartNeeded names the settings that differ between old and next but are fixed for
// the daemon's lifetime: the socket, the database and the fake log's directory, and the
// body limit the doors were built with.
func restartNeeded(old, next *config.Config) []string {
	var out []string
	if old.Server.Listen != next.Server.Listen {
		out = append(out, "server.listen")
	}
	if old.Server.StateDir != next.Server.StateDir {
		out = append(out, "server.state_dir")
	}
	if old.Server.MaxBodyBytes != next.Server.MaxBodyBytes {
		out = append(out, "server.max_body_bytes")
	}
	return out
}

// keepFixed is next with the settings that need a restart as they were, so the next
// reload compares against what is really in force.
func keepFixed(old, next *config.Config) *config.Config {
	c := *next
	c.Server.Listen, c.Server.StateDir, c.Server.MaxBodyBytes = old.Server.Listen, old.Server.StateDir, old.Server.MaxBodyBytes
	return &c
}
