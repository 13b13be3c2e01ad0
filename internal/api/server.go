// Package api is talkd's HTTP surface: the /speak door for pages and scripts, the control
// endpoints, /status, and the MCP door on /mcp. Every door goes through one admission path
// (Host check, caller identity, body limit, strict decoding, validation, grants) and hands
// validated requests to the queue and the plan service; this package never touches files,
// audio or the notation engine itself.
package api

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"runtime"
	"slices"
	"strings"
	"time"

	"talkd/internal/config"
	"talkd/internal/queue"
)

// Voice is what the API needs of the queue's voice.
type Voice interface {
	Submit(ctx context.Context, a queue.Announcement) (queue.Outcome, error)
	Mute(ctx context.Context, until *time.Time) (queue.MuteState, error)
	Unmute(ctx context.Context) (queue.MuteState, error)
	Stop(ctx context.Context) (string, error)
	Cancel(ctx context.Context, r queue.CancelRequest) ([]string, error)
	Wait(ctx context.Context, id string) (queue.Entry, error)
	Status() queue.Status
	History(limit int) []queue.Entry
}

// Engines describes the speech engines for validation and /status.
type Engines interface {
	// Has reports whether a request may name this provider.
	Has(provider string) bool
	// Describe returns what /status shows about provider and sink (JSON-encodable).
	Describe() any
	// Silent says why an announcement of provider ("" = default) will not be heard here
	// ("" when a player, or the engine itself, can play it).
	Silent(provider string) string
	// Check says whether provider ("" = default) speaks lang with voice ("" = its
	// choice); field names the request field at fault.
	Check(ctx context.Context, provider, lang, voice string) (field string, err error)
	// Voices lists the voices or languages the provider can tell about (JSON-encodable).
	Voices(ctx context.Context) (any, error)
}

// Options wire a Server.
type Options struct {
	Config  *config.Config
	Voice   Voice
	Engines Engines
	Version string
	Log     *slog.Logger
	// Now is the clock for mute times; nil = time.Now.
	Now func() time.Time
	// HeavyCalls bounds how many heavy tool calls (Tool.Heavy: the plan tools that run
	// the notation engine and answer large results) run at once; 0 = GOMAXPROCS. Excess
	// calls wait their turn, so a burst of them cannot starve /healthz, /speak and the
	// cheap MCP methods of CPU.
	HeavyCalls int
	// HeavyWait bounds that wait; a call still waiting then is answered with a "busy"
	// JSON-RPC error. 0 = DefaultHeavyWait.
	HeavyWait time.Duration
}

// DefaultHeavyWait is how long a heavy tool call waits for its turn before it is answered
// "busy": long enough for a burst of hundreds of inspections to drain on two cores.
const DefaultHeavyWait = 10 * time.Second

// Server serves all doors. Create it with New; it is an http.Handler.
type Server struct {
	cfg     *config.Config
	voice   Voice
	engines Engines
	version string
	log     *slog.Logger
	now     func() time.Time
	auth    *authenticator
	maxBody int64

	// listenAddr is the address actually bound (it differs from the config with port 0);
	// set by SetListenAddr before serving.
	listenAddr string

	mcp   *mcpServer
	plans Plans // nil until RegisterPlans

	// heavy holds one token per running heavy tool call (capacity Options.HeavyCalls).
	heavy     chan struct{}
	heavyWait time.Duration
}

// New builds the server from its dependencies.
func New(opts Options) *Server {
	s := &Server{
		cfg: opts.Config, voice: opts.Voice, engines: opts.Engines, version: opts.Version,
		log: opts.Log, now: opts.Now, auth: newAuthenticator(opts.Config),
		maxBody:    opts.Config.Server.MaxBodyBytes,
		listenAddr: opts.Config.Server.Listen,
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.maxBody <= 0 {
		s.maxBody = 64 << 10
	}
	n := opts.HeavyCalls
	if n <= 0 {
		n = runtime.GOMAXPROCS(0)
	}
	s.heavy = make(chan struct{}, n)
	s.heavyWait = opts.HeavyWait
	if s.heavyWait <= 0 {
		s.heavyWait = DefaultHeavyWait
	}
	s.mcp = newMCPServer(s)
	return s
}

// SetListenAddr tells the server the address it is actually bound to (for Host and Origin
// checks when the configured port was 0).
func (s *Server) SetListenAddr(addr string) { s.listenAddr = addr }

type route struct {
	methods []string
	handle  func(http.ResponseWriter, *http.Request)
}

func (s *Server) routes() map[string]route {
	return map[string]route{
		"/speak":   {[]string{http.MethodPost, http.MethodOptions}, s.handleSpeak},
		"/mcp":     {[]string{http.MethodPost}, s.handleMCP},
		"/status":  {[]string{http.MethodGet, http.MethodHead}, s.handleStatus},
		"/history": {[]string{http.MethodGet, http.MethodHead}, s.handleHistory},
		"/healthz": {[]string{http.MethodGet, http.MethodHead}, s.handleHealth},
		"/voices":  {[]string{http.MethodGet, http.MethodHead}, s.handleVoices},
		"/mute":    {[]string{http.MethodPost}, s.handleMute},
		"/unmute":  {[]string{http.MethodPost}, s.handleUnmute},
		"/stop":    {[]string{http.MethodPost}, s.handleStop},
		"/cancel":  {[]string{http.MethodPost}, s.handleCancel},
		"/wait":    {[]string{http.MethodGet}, s.handleWait},
	}
}

// Handler returns the daemon's HTTP handler.
func (s *Server) Handler() http.Handler {
	routes := s.routes()
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		w := &refusalLog{ResponseWriter: rw}
		defer s.logRefusal(w, r)
		rt, ok := routes[r.URL.Path]
		if !ok {
			writeError(w, &Error{Status: http.StatusNotFound, Code: CodeNotFound, Message: "no such endpoint: " + r.URL.Path})
			return
		}
		if r.URL.Path == "/speak" {
			// Caches must not hand one origin's CORS answer to another.
			w.Header().Set("Vary", "Origin")
		}
		if !slices.Contains(rt.methods, r.Method) {
			w.Header().Set("Allow", strings.Join(rt.methods, ", "))
			writeError(w, &Error{Status: http.StatusMethodNotAllowed, Code: CodeMethodNotAllowed,
				Message: r.Method + " is not allowed on " + r.URL.Path + "; use " + strings.Join(rt.methods, " or ")})
			return
		}
		if r.URL.Path != "/healthz" && !s.hostAllowed(r.Host) {
			writeError(w, &Error{Status: http.StatusForbidden, Code: CodeHostNotAllowed,
				Message: "host " + quoteHost(r.Host) + " is not allowed; add it to server.allowed_hosts"})
			return
		}
		rt.handle(w, r)
	})
}

// refusalLog remembers the status and error code a request was answered with, so that
// every refused request leaves one log line (logRefusal), whichever door or check
// refused it. writeError records the code.
type refusalLog struct {
	http.ResponseWriter
	status int
	code   string
}

func (l *refusalLog) WriteHeader(status int) {
	if l.status == 0 {
		l.status = status
	}
	l.ResponseWriter.WriteHeader(status)
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (l *refusalLog) Unwrap() http.ResponseWriter { return l.ResponseWriter }

// logRefusal writes the info line of a refused request (status 400 and above): door,
// status, code and the page's origin or else the Host. Never the body or a token.
func (s *Server) logRefusal(l *refusalLog, r *http.Request) {
	if l.status < http.StatusBadRequest {
		return
	}
	attrs := make([]slog.Attr, 0, 6)
	attrs = append(attrs, slog.String("door", r.URL.Path), slog.String("method", r.Method),
		slog.Int("status", l.status), slog.String("code", l.code))
	if origin := r.Header.Get("Origin"); origin != "" {
		attrs = append(attrs, slog.String("origin", clipHeader(origin)))
	} else {
		attrs = append(attrs, slog.String("host", clipHeader(r.Host)))
	}
	s.log.LogAttrs(r.Context(), slog.LevelInfo, "request refused", attrs...)
}

func quoteHost(h string) string { return `"` + clipHeader(h) + `"` }

// clipHeader is a header value as messages and log lines show it: at most 100 bytes,
// valid UTF-8.
func clipHeader(h string) string {
	if len(h) > 100 {
		h = h[:100]
	}
	return strings.ToValidUTF8(h, "?")
}

// hostAllowed is the DNS-rebinding check: loopback names, the listen address, and
// server.allowed_hosts.
func (s *Server) hostAllowed(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if isLoopbackHost(host) {
		return true
	}
	if lh, _, err := net.SplitHostPort(s.listenAddr); err == nil && strings.EqualFold(lh, host) {
		return true
	}
	for _, a := range s.cfg.Server.AllowedHosts {
		if strings.EqualFold(a, host) || strings.EqualFold(a, hostport) {
			return true
		}
	}
	return false
}

func isLoopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// originListed reports whether a browser origin may use the doors: listed in
// server.allowed_origins (or the list is "*").
func (s *Server) originListed(origin string) bool {
	return s.cfg.Server.OriginAllowed(origin)
}

// ownOrigin reports whether origin names the daemon itself (its listen address or the
// loopback Host it was reached at), which pages served by the daemon may always use.
func (s *Server) ownOrigin(origin, requestHost string) bool {
	rest, ok := strings.CutPrefix(origin, "http://")
	if !ok {
		return false
	}
	if rest == s.listenAddr {
		return true
	}
	h, _, err := net.SplitHostPort(requestHost)
	return err == nil && isLoopbackHost(strings.Trim(h, "[]")) && rest == requestHost
}

// readBody reads the whole body within the door's limit.
func (s *Server) readBody(w http.ResponseWriter, r *http.Request) ([]byte, *Error) {
	if r.ContentLength > s.maxBody {
		return nil, s.tooLarge()
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
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.maxBody))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, s.tooLarge()
		}
		return nil, &Error{Status: http.StatusBadRequest, Code: CodeInvalidJSON, Message: "reading the request body failed: " + err.Error()}
	}
	return body, nil
}

func (s *Server) tooLarge() *Error {
	return &Error{Status: http.StatusRequestEntityTooLarge, Code: CodeBodyTooLarge,
		Message: "the request body is larger than the limit of " + itoa(s.maxBody) + " bytes"}
}

// errHeavyBusy is returned by acquireHeavy when the wait exceeded its bound.
var errHeavyBusy = errors.New("too many heavy tool calls at once")

// acquireHeavy waits for a heavy-call token: until one is free, ctx ends, or the wait
// bound passes. The caller must call the returned release when it succeeded.
func (s *Server) acquireHeavy(ctx context.Context) (release func(), err error) {
	release = func() { <-s.heavy }
	select {
	case s.heavy <- struct{}{}:
		return release, nil
	default:
	}
	t := time.NewTimer(s.heavyWait)
	defer t.Stop()
	select {
	case s.heavy <- struct{}{}:
		return release, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("waiting for a heavy-call slot: %w", ctx.Err())
	case <-t.C:
		return nil, errHeavyBusy
	}
}
