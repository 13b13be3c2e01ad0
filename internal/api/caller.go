package api

import (
	"crypto/sha256"
	"fmt"
	"net/http"
	"strings"

	"talkd/internal/config"
)

// Caller is who a request comes from: a configured client (shared mode) or the implicit
// all-granted client "local" (local mode). Agent is the name the caller claims for itself
// (MCP clientInfo.name, the X-Talk-Agent header or an agent argument): a label, not proof.
type Caller struct {
	ID     string
	Agent  string
	client config.Client // its grants; config.LocalClient() in local mode
}

// LocalCaller is the implicit client of local mode.
func LocalCaller() Caller { return Caller{ID: config.LocalClientID, client: config.LocalClient()} }

// CanSpeak reports the speak grant.
func (c Caller) CanSpeak() bool { return c.client.Speak }

// NowPassesQuietHours is the client's own grant to pass quiet hours with now (nil: the
// rules decide; the queue applies it).
func (c Caller) NowPassesQuietHours() *bool { return c.client.NowPassesQuietHours }

// CanControl reports the control grant (mute, unmute, stop).
func (c Caller) CanControl() bool { return c.client.Control }

// CanRead reports whether the caller may read the plan with this key (write implies read).
func (c Caller) CanRead(plan string) bool { return c.client.CanRead(plan) }

// CanWrite reports whether the caller may change the plan with this key.
func (c Caller) CanWrite(plan string) bool { return c.client.CanWrite(plan) }

func newAuthenticator(cfg *config.Config) *authenticator {
	a := &authenticator{shared: len(cfg.Clients) > 0, local: LocalCaller()}
	for _, c := range cfg.Clients {
		a.clients = append(a.clients, clientEntry{caller: Caller{ID: c.ID, client: c}, digest: sha256.Sum256([]byte(c.Token))})
	}
	return a
}

// stillReads says why c, admitted under an earlier configuration, may no longer read
// plan key under a (nil: it may). In shared mode a client is the same client when its id
// and its token are; local mode admits everyone as the local client.
func (a *authenticator) stillReads(c Caller, key string) *Error {
	if !a.shared {
		return nil
	}
	d := sha256.Sum256([]byte(c.client.Token))
	for i := range a.clients {
		e := &a.clients[i]
		if e.caller.ID != c.ID || e.digest != d {
			continue
		}
		if !e.caller.CanRead(key) {
			return &Error{Status: http.StatusForbidden, Code: CodeForbidden,
				Message: fmt.Sprintf("client %q has no read grant for plan %q any more: the configuration was reloaded", c.ID, key)}
		}
		return nil
	}
	return &Error{Status: http.StatusUnauthorized, Code: CodeUnauthorized,
		Message: fmt.Sprintf("client %q is no longer configured, or its token changed: the configuration was reloaded", c.ID)}
}

// cleanAgent keeps a claimed agent name printable and short; it ends up in history,
// journal entries and commit messages.
func cleanAgent(s string) string {
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return -1
		}
		return r
	}, strings.TrimSpace(s))
	if len(s) > 100 {
		s = s[:100]
		for !utf8ValidEnd(s) {
			s = s[:len(s)-1]
		}
	}
	return s
}

func utf8ValidEnd(s string) bool {
	return strings.ToValidUTF8(s, "\x00") == s
}
