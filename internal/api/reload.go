package api

import (
	"context"
	"net/http"
	"strings"
)

// CodeInvalidConfig: POST /reload found the configuration invalid; the old one stays.
const CodeInvalidConfig = "invalid_config"

// ReloadReport is what a configuration reload did (POST /reload, talk reload).
type ReloadReport struct {
	// Config names the file that was read.
	Config string `json:"config"`
	// RestartNeeded names each changed setting the running daemon cannot take (the listen
	// address, the state directory, …): everything else was applied.
	RestartNeeded []string `json:"restart_needed"`
	Message       string   `json:"message"`
}

// Reloader re-reads the configuration and applies it (cmd/talkd's one reload function,
// which SIGHUP runs too). An error means nothing was applied; its text names the file and
// the problem.
type Reloader func(ctx context.Context) (ReloadReport, error)

// SetReloader installs the reload function behind POST /reload. Call it before serving.
func (s *Server) SetReloader(r Reloader) { s.reloader = r }

// handleReload is POST /reload (control grant): the body must be empty or {}.
func (s *Server) handleReload(w http.ResponseWriter, r *http.Request, a admitted) {
	if b := strings.TrimSpace(string(a.body)); b != "" {
		var none struct{}
		if err := decodeStrict(a.body, &none); err != nil {
			s.refuseHTTP(w, r, err)
			return
		}
	}
	if s.reloader == nil {
		s.refuseHTTP(w, r, &Error{Status: http.StatusNotImplemented, Code: CodeNotFound, Message: "this talkd cannot reload its configuration; restart it"})
		return
	}
	rep, err := s.reloader(r.Context())
	if err != nil {
		s.refuseHTTP(w, r, &Error{Status: http.StatusUnprocessableEntity, Code: CodeInvalidConfig,
			Message: "the configuration was not reloaded; the old one stays in force: " + err.Error()})
		return
	}
	if rep.RestartNeeded == nil {
		rep.RestartNeeded = []string{}
	}
	s.log.Info("configuration reloaded", "door", "/reload", "caller", a.caller.ID, "restart_needed", rep.RestartNeeded)
	writeJSON(w, http.StatusOK, rep)
}
