package api

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"

	"talkd/internal/config"
	"talkd/internal/werkbaum"
)

// One admission layer for every door but /healthz: Host check → the door's Origin policy
// → identify the caller → the door's grant → body limit. The doors differ only in their
// policy (door), so /speak, the control doors and /mcp cannot drift apart in what they
// let through, and every refusal is rendered and logged in one place (refuse).

// originRule is a door's Origin policy. Browsers send "simple" POSTs (forms, text/plain)
// without a preflight, so an unlisted Origin is refused on every door, not just hidden
// from by CORS; requests without Origin (curl, talk, agents) are unaffected and the
// daemon's own origin is always allowed.
type originRule int

const (
	// originListed: a request with an Origin must come from a listed origin or the daemon
	// itself. No CORS headers (the control doors and /mcp).
	originListed originRule = iota
	// originCORS: as originListed, and listed origins get CORS headers and a preflight
	// answer (/speak, ARCHITECTURE §3.6, and the document doors).
	originCORS
)

// mcpMaxBodyBytes is the body limit of /mcp: a werkbaum_write must carry a plan up to the
// engine's input limit (2 MiB), JSON-escaped (werkbaum.JSONBodyLimit).
func mcpMaxBodyBytes() int64 { return werkbaum.JSONBodyLimit(werkbaum.DefaultMaxInputBytes) }

// door is one endpoint's admission policy.
type door struct {
	path   string
	origin originRule
	limit  int64
	// grant, when set, refuses callers without the door's grant (the control grant).
	grant func(Caller) *Error
	// rpc renders refusals as JSON-RPC errors (the MCP door) instead of {"error":{…}}.
	rpc bool
	// problem renders refusals as RFC 9457 problem details (the document doors).
	problem bool
	// corsMethods is what a preflight on a CORS door allows ("" = POST, OPTIONS).
	corsMethods string
	// editor: the origins of [editor] origins are listed too (the document doors only:
	// an editor page may edit plans, not speak or mute).
	editor bool
}

// admitted is a request that passed admission: its caller and body, and the door it came
// through (serveRoute), whose form a handler's own refusals take. On a document path
// also the document id and its plan key, resolved by the door's grant.
type admitted struct {
	caller  Caller
	body    []byte
	door    *door
	id, key string
}

// admit runs the admission steps for d. It reports false when the request has been
// answered: refused, or (on the CORS door) a preflight.
func (s *Server) admit(w http.ResponseWriter, r *http.Request, d *door) (admitted, bool) {
	// One snapshot of the settings for the whole admission (a reload swaps them).
	set := s.live.Load()
	if !s.hostAllowed(set.cfg, r.Host) {
		s.refuse(w, r, d, &Error{Status: http.StatusForbidden, Code: CodeHostNotAllowed,
			Message: "host " + quoteHost(r.Host) + " is not allowed; add it to server.allowed_hosts"})
		return admitted{}, false
	}
	origin := r.Header.Get("Origin")
	listed := origin != "" && (listedOrigin(set.cfg, origin) || d.editor && set.cfg.Editor.OriginAllowed(origin))
	if d.origin == originCORS {
		if r.Method == http.MethodOptions {
			s.preflight(w, r, d, set.cfg, origin, listed)
			return admitted{}, false
		}
		if listed {
			w.Header().Set("Access-Control-Allow-Origin", allowOriginValue(set.cfg, origin))
		}
	}
	if origin != "" && !listed && !s.ownOrigin(origin, r.Host) {
		s.refuse(w, r, d, &Error{Status: http.StatusForbidden, Code: CodeOriginNotAllowed,
			Message: "origin " + strconv.Quote(origin) + " may not use " + d.path + "; list it in " + d.originSetting()})
		return admitted{}, false
	}
	caller, err := set.auth.identify(r)
	if err == nil && d.grant != nil {
		err = d.grant(caller)
	}
	if err != nil {
		s.refuse(w, r, d, err)
		return admitted{}, false
	}
	body, err := readBody(w, r, d.limit)
	if err != nil {
		s.refuse(w, r, d, err)
		return admitted{}, false
	}
	return admitted{caller: caller, body: body}, true
}

// originSetting names the config key that lets an origin through d.
func (d *door) originSetting() string {
	if d.editor {
		return "[editor] origins of the talkd config (an editor page) or server.allowed_origins"
	}
	return "server.allowed_origins"
}

// preflight answers OPTIONS on the CORS door: CORS headers for a listed origin, none for
// another (the browser then blocks the request).
func (s *Server) preflight(w http.ResponseWriter, r *http.Request, d *door, cfg *config.Config, origin string, listed bool) {
	if listed {
		h := w.Header()
		h.Set("Access-Control-Allow-Origin", allowOriginValue(cfg, origin))
		methods := d.corsMethods
		if methods == "" {
			methods = "POST, OPTIONS"
		}
		h.Set("Access-Control-Allow-Methods", methods)
		h.Set("Access-Control-Allow-Headers", "Content-Type, Authorization")
		h.Set("Access-Control-Max-Age", "600")
		if strings.EqualFold(r.Header.Get("Access-Control-Request-Private-Network"), "true") {
			h.Set("Access-Control-Allow-Private-Network", "true")
		}
	}
	w.WriteHeader(http.StatusNoContent)
}

// refuse answers a refused request in the door's format and logs one line a user can find:
// door, status, code, origin and host, and the message (which never holds a token).
func (s *Server) refuse(w http.ResponseWriter, r *http.Request, d *door, e *Error) {
	s.logRefusal(r, d, e)
	if d.problem {
		writeProblem(w, r, e, nil)
		return
	}
	if !d.rpc {
		writeError(w, e)
		return
	}
	if e.Status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", authChallenge(e))
	}
	var id json.RawMessage
	if e.Status == http.StatusUnauthorized || e.Status == http.StatusForbidden {
		id = refusedRequestID(r)
	}
	writeRPCError(w, id, newRPCError(rpcInvalidRequest, e.Message).withStatus(e.Status))
}

// refusedIDBytes bounds what is read of a refused request to find its id: enough for
// any handshake or tool call a host sends first, little for a stranger to make us read.
const refusedIDBytes = 64 << 10

// refusedRequestID is the JSON-RPC id of a request refused before its body was read (no
// or a wrong token, a foreign Origin), so the host can match the error to its request:
// an answer with "id": null was shown as a broken server. nil when the body is larger
// than refusedIDBytes or carries no usable id.
func refusedRequestID(r *http.Request) json.RawMessage {
	body, err := io.ReadAll(io.LimitReader(r.Body, refusedIDBytes+1))
	if err != nil || len(body) > refusedIDBytes {
		return nil
	}
	var msg struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal(body, &msg) != nil || len(msg.ID) == 0 {
		return nil
	}
	if c := msg.ID[0]; c != '"' && c != '-' && (c < '0' || c > '9') {
		return nil // null, an object, an array: not an id
	}
	return msg.ID
}

// logRefusal is refuse's log line.
func (s *Server) logRefusal(r *http.Request, d *door, e *Error) {
	s.logRefusalOf(d.path, clipHeader(r.Header.Get("Origin")), clipHeader(r.Host), e)
}

// logRefusalOf is logRefusal for a request that is no longer at hand (a parked poll).
func (s *Server) logRefusalOf(door, origin, host string, e *Error) {
	s.log.Info("request refused", "door", door, "status", e.Status, "code", e.Code,
		"origin", origin, "host", host, "message", truncate(e.Message, 200))
}

// refuseHTTP is refuse for what a plain HTTP door's handler (or the router) refuses
// itself after or without admission: the door is the request's path.
func (s *Server) refuseHTTP(w http.ResponseWriter, r *http.Request, e *Error) {
	s.refuse(w, r, &door{path: r.URL.Path}, e)
}

// readBody reads the whole body within limit; beyond it the answer is 413 naming the limit.
func readBody(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, *Error) {
	if r.ContentLength > limit {
		return nil, tooLarge(limit)
	}
	if r.ContentLength > 0 {
		// The usual case: a declared length within the limit, read into one buffer of
		// that size (net/http's body reader ends at the declared length).
		body := make([]byte, r.ContentLength)
		if _, err := io.ReadFull(r.Body, body); err != nil {
			return nil, &Error{Status: http.StatusBadRequest, Code: CodeInvalidJSON, Message: "reading the request body failed: " + err.Error()}
		}
		return body, nil
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, tooLarge(limit)
		}
		return nil, &Error{Status: http.StatusBadRequest, Code: CodeInvalidJSON, Message: "reading the request body failed: " + err.Error()}
	}
	return body, nil
}

func tooLarge(limit int64) *Error {
	return &Error{Status: http.StatusRequestEntityTooLarge, Code: CodeBodyTooLarge,
		Message: "the request body is larger than the limit of " + itoa(limit) + " bytes for this endpoint"}
}

// authenticator maps bearer tokens to clients. Tokens are compared through their SHA-256
// in constant time over all clients, so neither a token's content nor which client
// matched leaks through timing.
type authenticator struct {
	shared  bool
	clients []clientEntry
	local   Caller // built once: every local-mode request starts from it (its grants are read-only)
}

type clientEntry struct {
	caller Caller
	digest [32]byte
}

// identify returns the caller of r: in shared mode the client whose token the one
// Authorization header carries (scheme "Bearer" in any case, RFC 7235 §2.1), else 401.
// Two Authorization headers are refused in either mode (400): which one counts would be
// a guess.
func (a *authenticator) identify(r *http.Request) (Caller, *Error) {
	auth := r.Header.Values("Authorization")
	if len(auth) > 1 {
		return Caller{}, &Error{Status: http.StatusBadRequest, Code: CodeBadHeader,
			Message: "the request carries " + strconv.Itoa(len(auth)) + " Authorization headers; send exactly one"}
	}
	agent := cleanAgent(r.Header.Get("X-Talk-Agent"))
	if !a.shared {
		c := a.local
		c.Agent = agent
		return c, nil
	}
	var token string
	if len(auth) == 1 {
		scheme, rest, _ := strings.Cut(strings.TrimSpace(auth[0]), " ")
		if strings.EqualFold(scheme, "Bearer") {
			token = strings.TrimSpace(rest)
		}
	}
	if token == "" {
		return Caller{}, &Error{Status: http.StatusUnauthorized, Code: CodeUnauthorized,
			Message: "this talkd runs in shared mode: send Authorization: Bearer <token>"}
	}
	d := sha256.Sum256([]byte(token))
	match := -1
	for i := range a.clients {
		if subtle.ConstantTimeCompare(d[:], a.clients[i].digest[:]) == 1 {
			match = i
		}
	}
	if match < 0 {
		return Caller{}, &Error{Status: http.StatusUnauthorized, Code: CodeUnauthorized, invalidToken: true,
			Message: "the bearer token is not valid; send the token of a [[clients]] entry in the header \"Authorization: Bearer $TOKEN\""}
	}
	c := a.clients[match].caller
	c.Agent = agent
	return c, nil
}
