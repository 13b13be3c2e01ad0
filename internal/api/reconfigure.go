package api

import (
	"errors"

	"talkd/internal/config"
)

// settings is what a configuration reload changes in the server: the whole config (hosts,
// origins, the speak defaults, /status) and the bearer tokens and grants made from it. It
// is never changed after it is built; Reconfigure swaps in a new one, and admission takes
// one snapshot per request, so a request is admitted wholly under the old settings or
// wholly under the new ones.
type settings struct {
	cfg  *config.Config
	auth *authenticator
}

func newSettings(cfg *config.Config) *settings {
	return &settings{cfg: cfg, auth: newAuthenticator(cfg)}
}

// config is the configuration in force now.
func (s *Server) config() *config.Config { return s.live.Load().cfg }

// Reconfigure makes cfg (validated by config.Load) the server's configuration: clients,
// tokens and grants, allowed origins and hosts, the default language and the text limit
// of announcements. Requests already admitted finish under the settings they were
// admitted with, except the parked polls of the document feed: those of a client the new
// settings remove, or that lost its read grant, end now (401, 403). The listen address and the body limit are fixed at New (the daemon
// warns that they need a restart).
func (s *Server) Reconfigure(cfg *config.Config) error {
	if cfg == nil {
		return errors.New("api: Reconfigure needs a configuration")
	}
	set := newSettings(cfg)
	s.live.Store(set)
	// Parked polls were admitted under the old settings and outlive them.
	s.documents.parker.revoke(set.auth)
	return nil
}
