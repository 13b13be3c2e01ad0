package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"reflect"
	"strings"
	"syscall"

	"talkd/internal/api"
	"talkd/internal/config"
	"talkd/internal/queue"
)

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
// the daemon's lifetime: the socket, the database and the fake log's directory, the
// body limit the doors were built with, and the analysis cache the engine was built with.
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
	if old.Server.CacheDir != next.Server.CacheDir {
		out = append(out, "server.cache_dir")
	}
	if old.Server.AnalysisCacheBytes != next.Server.AnalysisCacheBytes {
		out = append(out, "server.analysis_cache_bytes")
	}
	return out
}

// keepFixed is next with the settings that need a restart as they were, so the next
// reload compares against what is really in force.
func keepFixed(old, next *config.Config) *config.Config {
	c := *next
	c.Server.Listen, c.Server.StateDir, c.Server.MaxBodyBytes = old.Server.Listen, old.Server.StateDir, old.Server.MaxBodyBytes
	c.Server.CacheDir, c.Server.AnalysisCacheBytes = old.Server.CacheDir, old.Server.AnalysisCacheBytes
	return &c
}
