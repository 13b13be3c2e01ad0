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
	"log/slog"
	"net"
	"runtime"
	"strings"
	"sync/atomic"
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
	// live holds the settings a reload changes (Reconfigure); read it once per request.
	live    atomic.Pointer[settings]
	voice   Voice
	engines Engines
	version string
	log     *slog.Logger
	now     func() time.Time
	// maxBody is the body limit of /speak and the control doors; mcpMaxBody of /mcp.
	maxBody, mcpMaxBody int64

	// listenAddr is the address actually bound (it differs from the config with port 0);
	// set by SetListenAddr before serving.
	listenAddr string

	mcp   *mcpServer
	plans Plans // nil until RegisterPlans
	// planResults holds the encoded tools/call results of plan readings (RegisterPlans);
	// DropEncodedResults empties it when the daemon is idle.
	planResults *resultCache
	// documents serves /api/v1 (documents.go); its store is set by RegisterPlans.
	documents *documentDoors

	// heavy holds one token per running heavy tool call (capacity Options.HeavyCalls).
	heavy     chan struct{}
	heavyWait time.Duration

	// reloader serves POST /reload (SetReloader); nil = the door answers 501.
	reloader Reloader

	// analysisCache reports the plans' analysis cache for /status (SetAnalysisCache);
	// nil = no such cache.
	analysisCache func() any
}

// New builds the server from its dependencies.
func New(opts Options) *Server {
	s := &Server{
		voice: opts.Voice, engines: opts.Engines, version: opts.Version,
		log: opts.Log, now: opts.Now,
		maxBody:    opts.Config.Server.MaxBodyBytes,
		mcpMaxBody: mcpMaxBodyBytes(),
		listenAddr: opts.Config.Server.Listen,
	}
	s.live.Store(newSettings(opts.Config))
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.maxBody <= 0 {
		s.maxBody = 64 << 10
	}
	if s.mcpMaxBody < s.maxBody {
		s.mcpMaxBody = s.maxBody // a configured larger limit holds for /mcp too
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
	s.documents = newDocumentDoors(s)
	return s
}

// SetListenAddr tells the server the address it is actually bound to (for Host and Origin
// checks when the configured port was 0).
func (s *Server) SetListenAddr(addr string) { s.listenAddr = addr }

// SetAnalysisCache makes /status show the plans' analysis cache (how many analyses were
// read back from disk, its size): stats is called per request. Call it before serving.
func (s *Server) SetAnalysisCache(stats func() any) { s.analysisCache = stats }

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
// server.allowed_hosts of cfg.
func (s *Server) hostAllowed(cfg *config.Config, hostport string) bool {
	if hostport == s.listenAddr {
		// The usual case, decided without parsing (ParseIP allocates on every request).
		return true
	}
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
	for _, a := range cfg.Server.AllowedHosts {
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

// listedOrigin reports whether a browser origin may use the doors: listed in
// server.allowed_origins of cfg (or the list is "*").
func listedOrigin(cfg *config.Config, origin string) bool {
	return cfg.Server.OriginAllowed(origin)
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
