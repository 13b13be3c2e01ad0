package api

import (
	"net/http"
	"strings"
)

// MCP hosts answer a 401 by trying OAuth: Claude Code (through the TypeScript SDK) asks
// for /.well-known/oauth-protected-resource[/mcp], then the authorization server's
// metadata, then registers a client at /register, and showed its user "Dynamic Client
// Registration rejected (HTTP 404) … /register" instead of why talkd refused. talkd does
// not do OAuth: its shared mode takes a fixed bearer token per client. These probes are
// answered with an OAuth error object whose description says how to send the token, so
// the host's error names talkd's hint.

// oauthHint is what a host that went looking for OAuth should tell its user.
// It names the token as $TOKEN: Claude Code shows the description but redacts what
// follows "Bearer " up to the next blank, which turned "<token>" into "[redacted]>".
const oauthHint = "talkd does not use OAuth: in shared mode send the token of your [[clients]] entry in the header " +
	"\"Authorization: Bearer $TOKEN\" (Claude Code: claude mcp add --transport http talk URL " +
	"--header \"Authorization: Bearer $TOKEN\"; see talkd's README, MCP hosts)"

// isOAuthProbe reports whether path is one of the OAuth discovery or registration paths
// hosts probe.
func isOAuthProbe(path string) bool {
	for _, p := range []string{"/.well-known/oauth-protected-resource", "/.well-known/oauth-authorization-server",
		"/.well-known/openid-configuration"} {
		if path == p || strings.HasPrefix(path, p+"/") {
			return true
		}
	}
	return path == "/register" || path == "/authorize" || path == "/token"
}

// answerOAuthProbe answers a probe: 404 for metadata (there is none), 400 with RFC 7591's
// error for a registration and RFC 6749's for the other endpoints; every answer carries
// oauthHint as error_description, and leaves a log line.
func (s *Server) answerOAuthProbe(w http.ResponseWriter, r *http.Request) {
	status, code := http.StatusNotFound, "invalid_request"
	switch r.URL.Path {
	case "/register":
		status, code = http.StatusBadRequest, "invalid_client_metadata"
	case "/authorize", "/token":
		status, code = http.StatusBadRequest, "unsupported_grant_type"
	}
	s.logRefusalOf(r.URL.Path, clipHeader(r.Header.Get("Origin")), clipHeader(r.Host),
		&Error{Status: status, Code: code, Message: "an OAuth probe; talkd takes a bearer token"})
	writeJSON(w, status, map[string]string{"error": code, "error_description": oauthHint})
}
