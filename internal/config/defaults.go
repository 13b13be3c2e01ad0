package config

import (
	"fmt"
	"log/slog"
	"net"
	"path/filepath"
	"slices"
	"strconv"
	"time"
)

// The defaults. They live here, once; everything else reads them through Load's result or
// the accessors below, so no package re-derives a default of its own.
const (
	// DefaultListen is loopback only: local mode must never be reachable from the network.
	DefaultListen          = "127.0.0.1:7077"
	DefaultShutdownTimeout = 10 * time.Second
	DefaultMaxBodyBytes    = 64 << 10
	// DefaultMaxParkedPolls and DefaultMaxParkedPollsPerClient bound the waiting long
	// polls of the document feed: an editor keeps one per open document, so a few
	// thousand are a large team; each costs a descriptor and about 1.5 KB once parked.
	DefaultMaxParkedPolls          = 4096
	DefaultMaxParkedPollsPerClient = 256
	DefaultProvider                = "auto"
	DefaultSink                    = "auto"
	DefaultLang                    = "en"
	DefaultVoiceTimeout            = 30 * time.Second
	DefaultFakeDuration            = 50 * time.Millisecond
	DefaultMaxChars                = 400
	DefaultIntervalLow             = 30 * time.Second
	DefaultIntervalNormal          = 5 * time.Second
	DefaultIntervalHigh            = 0
	DefaultMaxWait                 = 2 * time.Minute
	DefaultQueueSize               = 100
	DefaultHistorySize             = 500

	// DefaultAnalysisCacheBytes keeps the analyses of a few dozen large plans on disk (a
	// 10,000-node plan's whole view is 3.5 MB).
	DefaultAnalysisCacheBytes = 128 << 20

	// RateLimitDiscard and RateLimitDefer are the values of rules.on_rate_limit.
	RateLimitDiscard = "discard"
	RateLimitDefer   = "defer"

	// FakeLogName is the fake provider's log inside the state dir when fake_log is unset.
	FakeLogName = "fake-voice.jsonl"
	// DBName is the state database inside the state dir.
	DBName = "talkd.db"
	// LocalClientID is the implicit, all-granted caller of local mode.
	LocalClientID = "local"
	// SupportedVersion is the only config file version this build reads.
	SupportedVersion = 1
	// MinTokenLength is the shortest bearer token accepted, in characters.
	MinTokenLength = 32
)

// defaults is the configuration used when no file exists, and the base a file is decoded
// onto (keys the file leaves out keep these values). stateDir may be empty when neither
// XDG_STATE_HOME nor HOME is known; Load then reports it unless TALK_STATE_DIR or the file
// supplies one.
func defaults(stateDir string) Config {
	low, normal, high := Duration{DefaultIntervalLow}, Duration{DefaultIntervalNormal}, Duration{DefaultIntervalHigh}
	on1, on2 := true, true
	return Config{
		Version: SupportedVersion,
		Server: Server{
			Listen:          DefaultListen,
			AllowedOrigins:  []string{},
			AllowedHosts:    []string{},
			StateDir:        stateDir,
			ShutdownTimeout: Duration{DefaultShutdownTimeout},
			MaxBodyBytes:    DefaultMaxBodyBytes,

			AnalysisCacheBytes: DefaultAnalysisCacheBytes,

			MaxParkedPolls:          DefaultMaxParkedPolls,
			MaxParkedPollsPerClient: DefaultMaxParkedPollsPerClient,
		},
		Voice: Voice{
			Provider:     DefaultProvider,
			Sink:         DefaultSink,
			Lang:         DefaultLang,
			Timeout:      Duration{DefaultVoiceTimeout},
			FakeDuration: Duration{DefaultFakeDuration},
			Voices:       map[string]string{},
			Agents:       map[string]string{},
			Players:      []string{},
			Commands:     []Command{},
			Cleanup:      Cleanup{URLs: &on1, Markdown: &on2, MaxChars: DefaultMaxChars},
		},
		Rules: Rules{
			QuietHours:          []string{},
			RateLimit:           RateLimit{Low: &low, Normal: &normal, High: &high},
			MaxWait:             Duration{DefaultMaxWait},
			OnRateLimit:         RateLimitDefer,
			NowPassesQuietHours: true,
			QueueSize:           DefaultQueueSize,
			HistorySize:         DefaultHistorySize,
		},
		Plans:   []Plan{},
		Roots:   []Root{},
		Clients: []Client{},
		Editor:  Editor{URL: DefaultEditorURL, Origins: []string{}},
	}
}

// Shared reports shared mode: clients are configured, so every request needs a bearer token.
func (c *Config) Shared() bool { return len(c.Clients) > 0 }

// AnalysisCacheDir is where the plans' analyses are kept across restarts:
// <cache_dir>/analyses.
func (c *Config) AnalysisCacheDir() string { return filepath.Join(c.Server.CacheDir, "analyses") }

// DBPath is the state database: <state_dir>/talkd.db.
func (c *Config) DBPath() string { return filepath.Join(c.Server.StateDir, DBName) }

// Plan returns the plan with the given key.
func (c *Config) Plan(key string) (Plan, bool) {
	for _, p := range c.Plans {
		if p.Key == key {
			return p, true
		}
	}
	return Plan{}, false
}

// Host is the host part of the listen address ("" means all interfaces).
func (s Server) Host() string {
	h, _, err := net.SplitHostPort(s.Listen)
	if err != nil {
		return ""
	}
	return h
}

// Port is the port of the listen address (0 = ephemeral).
func (s Server) Port() int {
	_, p, err := net.SplitHostPort(s.Listen)
	if err != nil {
		return 0
	}
	n, err := strconv.Atoi(p)
	if err != nil {
		return 0
	}
	return n
}

// CORSAny reports whether allowed_origins is the single wildcard "*".
func (s Server) CORSAny() bool {
	return len(s.AllowedOrigins) == 1 && s.AllowedOrigins[0] == "*"
}

// OriginAllowed reports whether a request Origin is on the allow-list ("*" allows any).
// An empty origin is never "allowed": callers decide separately what a missing Origin means.
func (s Server) OriginAllowed(origin string) bool {
	if origin == "" {
		return false
	}
	return s.CORSAny() || slices.Contains(s.AllowedOrigins, origin)
}

// Interval is the minimum time between two admitted announcements of a priority
// ("low", "normal", "high"); an unknown priority has no limit.
func (r Rules) Interval(priority string) time.Duration {
	var d *Duration
	var def time.Duration
	switch priority {
	case "low":
		d, def = r.RateLimit.Low, DefaultIntervalLow
	case "normal":
		d, def = r.RateLimit.Normal, DefaultIntervalNormal
	case "high":
		d, def = r.RateLimit.High, DefaultIntervalHigh
	default:
		return 0
	}
	if d == nil {
		return def
	}
	return d.Duration
}

// Windows parses the quiet-hours windows. Load has validated them, so a window that does
// not parse here can only come from a hand-built Config; it is skipped.
func (r Rules) Windows() []Window {
	ws := make([]Window, 0, len(r.QuietHours))
	for _, s := range r.QuietHours {
		if w, err := ParseWindow(s); err == nil {
			ws = append(ws, w)
		}
	}
	return ws
}

// URLsOn reports whether URLs are replaced before synthesis (default on).
func (c Cleanup) URLsOn() bool { return c.URLs == nil || *c.URLs }

// MarkdownOn reports whether Markdown markup is stripped before synthesis (default on).
func (c Cleanup) MarkdownOn() bool { return c.Markdown == nil || *c.Markdown }

// Limit is the maximum number of characters spoken per announcement (default 400).
func (c Cleanup) Limit() int {
	if c.MaxChars <= 0 {
		return DefaultMaxChars
	}
	return c.MaxChars
}

// FakeLogPath is where the fake provider writes: fake_log, else <stateDir>/fake-voice.jsonl.
// Load already resolves FakeLog; this serves hand-built configs in tests.
func (v Voice) FakeLogPath(stateDir string) string {
	if v.FakeLog != "" {
		return v.FakeLog
	}
	return filepath.Join(stateDir, FakeLogName)
}

// LocalClient is the implicit caller of local mode: every request, all grants.
func LocalClient() Client {
	return Client{ID: LocalClientID, Speak: true, Control: true, Read: []string{"*"}, Write: []string{"*"}}
}

// CanRead reports whether the client may read the plan; write implies read.
func (c Client) CanRead(plan string) bool {
	return grants(c.Read, plan) || grants(c.Write, plan)
}

// CanWrite reports whether the client may write the plan.
func (c Client) CanWrite(plan string) bool { return grants(c.Write, plan) }

func grants(list []string, plan string) bool {
	return slices.Contains(list, "*") || slices.Contains(list, plan)
}

// String describes the client without its token, so %v of a Config never leaks one.
func (c Client) String() string {
	return fmt.Sprintf("{id:%s token_env:%s speak:%t control:%t read:%v write:%v}",
		c.ID, c.TokenEnv, c.Speak, c.Control, c.Read, c.Write)
}

// GoString is String for %#v, again without the token.
func (c Client) GoString() string { return "config.Client" + c.String() }

// LogValue keeps the token out of slog output.
func (c Client) LogValue() slog.Value {
	return slog.GroupValue(slog.String("id", c.ID), slog.String("token_env", c.TokenEnv))
}
