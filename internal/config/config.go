// Package config turns the TOML file, the environment and the embedded defaults into one
// validated Config value. Everything else in talkd reads settings only from that value, so
// a setting is checked once, at start, and never half-applied.
package config

import (
	"fmt"
	"time"
)

// Config is the whole, validated configuration of one daemon.
type Config struct {
	Version int      `toml:"version" json:"version"`
	Server  Server   `toml:"server" json:"server"`
	Voice   Voice    `toml:"voice" json:"voice"`
	Rules   Rules    `toml:"rules" json:"rules"`
	Plans   []Plan   `toml:"plans" json:"plans"`
	Roots   []Root   `toml:"roots" json:"roots"`
	Clients []Client `toml:"clients" json:"clients"`
	Editor  Editor   `toml:"editor" json:"editor"`

	// Source names where the configuration came from: the file path, or
	// "embedded defaults" when no file exists. Used in messages and /status.
	Source string `toml:"-" json:"-"`
}

// Server holds the network side.
type Server struct {
	// Listen is host:port; default 127.0.0.1:7077.
	Listen string `toml:"listen" json:"listen"`
	// AllowedOrigins is the CORS list of /speak and the Origin allow-list of /mcp.
	// Empty means closed; a single "*" means any origin.
	AllowedOrigins []string `toml:"allowed_origins" json:"allowed_origins"`
	// AllowedHosts are extra Host header values accepted besides loopback and the
	// listen address (DNS-rebinding protection).
	AllowedHosts []string `toml:"allowed_hosts" json:"allowed_hosts"`
	// StateDir holds the database and the fake provider's log; default
	// $XDG_STATE_HOME/talk, else $HOME/.local/state/talk. Load makes it absolute.
	StateDir string `toml:"state_dir" json:"state_dir"`
	// CacheDir holds what talkd can compute again (the plans' analyses, kept across
	// restarts); default $XDG_CACHE_HOME/talk, else $HOME/.cache/talk, else
	// <state_dir>/cache. Load makes it absolute. Deleting it loses nothing but time.
	CacheDir string `toml:"cache_dir" json:"cache_dir"`
	// AnalysisCacheBytes bounds the plans' analyses kept in CacheDir so that a restarted
	// daemon answers the first inspect of a plan it analysed before without analysing it
	// again; the least recently used go first. 0 turns it off; default 128 MiB.
	AnalysisCacheBytes int64 `toml:"analysis_cache_bytes" json:"analysis_cache_bytes"`
	// ShutdownTimeout bounds a graceful stop; default 10s.
	ShutdownTimeout Duration `toml:"shutdown_timeout" json:"shutdown_timeout"`
	// MaxBodyBytes is the request body limit of every door; default 65536.
	MaxBodyBytes int64 `toml:"max_body_bytes" json:"max_body_bytes"`
	// MaxParkedPolls bounds the document feed's long polls waiting at once, over all
	// clients; default 4096. Each holds a connection (a file descriptor): talkd also
	// keeps a quarter of its descriptor limit free of polls, whichever is lower.
	MaxParkedPolls int `toml:"max_parked_polls" json:"max_parked_polls"`
	// MaxParkedPollsPerClient bounds them per configured client (shared mode); default 256.
	MaxParkedPollsPerClient int `toml:"max_parked_polls_per_client" json:"max_parked_polls_per_client"`
}

// Voice selects and tunes the speech engine and the audio sink.
type Voice struct {
	// Provider: auto, espeak, say, sapi, speechd, fake, or the name of a [[voice.commands]] entry.
	Provider string `toml:"provider" json:"provider"`
	// Sink: auto, null, or dir:<path>.
	Sink string `toml:"sink" json:"sink"`
	// Lang is the default language of announcements, a BCP-47 tag the engine can speak
	// (de, en, fr, pt-BR, …); default en. de and en have their own spoken templates.
	Lang string `toml:"lang" json:"lang"`
	// Timeout bounds synthesis and playback of one utterance each; default 30s.
	Timeout Duration `toml:"timeout" json:"timeout"`
	// Speed is the speaking rate in words per minute where the engine takes one (0 = engine default).
	Speed int `toml:"speed" json:"speed"`
	// Voices maps a language (de, en, fr, …) to an engine-specific voice name.
	Voices map[string]string `toml:"voices" json:"voices"`
	// Agents maps an agent name (X-Talk-Agent, MCP clientInfo.name) to the voice its
	// announcements use unless a request names one, so several agents are told apart
	// by ear.
	Agents map[string]string `toml:"agents" json:"agents"`
	// Players overrides the player search order of the auto sink.
	Players []string `toml:"players" json:"players"`
	// FakeLog is where the fake provider records utterances; default
	// <state_dir>/fake-voice.jsonl (Load resolves it, so it is never empty afterwards).
	FakeLog string `toml:"fake_log" json:"fake_log"`
	// FakeDuration is how long the fake provider "speaks" each utterance; default 50ms.
	FakeDuration Duration `toml:"fake_duration" json:"fake_duration"`
	// Commands are named argv-template engines (Piper, RHVoice, a cloud CLI).
	Commands []Command `toml:"commands" json:"commands"`
	// Cleanup rules applied to text before synthesis.
	Cleanup Cleanup `toml:"cleanup" json:"cleanup"`
}

// Command is one argv-template provider. Placeholders: {text}, {lang}, {voice}, {rate},
// {pitch}, {volume}, {out}.
type Command struct {
	// Name selects the command as a provider (voice.provider or a request's "provider");
	// it must not be one of the built-in names.
	Name string `toml:"name" json:"name"`
	// Argv is the program and its arguments; with {out} the command writes the audio
	// file there for the sink, without it the command plays by itself (its exit ends the
	// utterance). {text} must appear unless Stdin is set.
	Argv []string `toml:"argv" json:"argv"`
	// Stdin sends the text on standard input instead of through {text}.
	Stdin bool `toml:"stdin" json:"stdin"`
}

// Cleanup switches the speech text rules; all default to on. Read them through URLsOn,
// MarkdownOn and Limit, which know the defaults.
type Cleanup struct {
	URLs     *bool `toml:"urls" json:"urls"`
	Markdown *bool `toml:"markdown" json:"markdown"`
	// MaxChars cuts long texts at a sentence boundary; 0 = default 400 (Load fills it in).
	MaxChars int `toml:"max_chars" json:"max_chars"`
}

// Rules are the laws of the voice.
type Rules struct {
	// QuietHours are local-time windows "HH:MM-HH:MM"; a window may cross midnight.
	QuietHours []string `toml:"quiet_hours" json:"quiet_hours"`
	// QuietNotify shows a desktop notification for announcements discarded in quiet hours.
	QuietNotify bool `toml:"quiet_notify" json:"quiet_notify"`
	// NowPassesQuietHours lets an announcement with "now" pass quiet hours (default true).
	// A person who wants quiet hours to hold against every agent sets it to false; in
	// shared mode a client's own NowPassesQuietHours overrides it for that client.
	NowPassesQuietHours bool `toml:"now_passes_quiet_hours" json:"now_passes_quiet_hours"`
	// RateLimit is the minimum interval between admitted announcements per priority.
	RateLimit RateLimit `toml:"rate_limit" json:"rate_limit"`
	// OnRateLimit is what happens to an announcement the rate limit does not admit yet:
	// RateLimitDefer (the default) lets it wait for its slot when that comes within
	// MaxWait, RateLimitDiscard drops it: an announcement is dropped for coming too soon
	// only where the configuration says so, since the second of two agents finishing
	// together is often the one that matters.
	OnRateLimit string `toml:"on_rate_limit" json:"on_rate_limit"`
	// MaxWait drops announcements that waited longer; default 2m.
	MaxWait Duration `toml:"max_wait" json:"max_wait"`
	// QueueSize bounds the waiting announcements; default 100.
	QueueSize int `toml:"queue_size" json:"queue_size"`
	// HistorySize bounds the kept history; default 500.
	HistorySize int `toml:"history_size" json:"history_size"`
}

// RateLimit holds the per-priority minimum intervals (defaults low 30s, normal 5s, high 0).
// The fields are pointers so that an explicit 0 in the file differs from "not set"; read
// them through Rules.Interval, which knows the defaults.
type RateLimit struct {
	Low    *Duration `toml:"low" json:"low"`
	Normal *Duration `toml:"normal" json:"normal"`
	High   *Duration `toml:"high" json:"high"`
}

// Plan is one Werkbaum plan file the daemon serves under a key. Tools name plans by key,
// never by path, so the config is the only place a path can come from.
type Plan struct {
	// Key names the plan in tools and grants: ^[a-z0-9][a-z0-9_-]{0,63}$, unique.
	Key string `toml:"key" json:"key"`
	// Path is absolute; Load resolves symlinks, so it names the real regular file.
	// Empty for a plan on a document server (URL).
	Path string `toml:"path" json:"path"`
	// URL is the document of a plan kept on a Werkbaum document server instead of a file
	// (https://host/api/v1/documents/<uuid>; Load normalises it, see remote.go).
	URL string `toml:"url" json:"url,omitempty"`
	// TokenEnv names the environment variable holding the bearer token for URL's server.
	TokenEnv string `toml:"token_env" json:"token_env,omitempty"`
	// DisplayName is the name the server shows for talkd's writes of URL; default the
	// MCP host's clientInfo.name, else "Agent".
	DisplayName string `toml:"display_name" json:"display_name,omitempty"`
	// Lang is the language of the plan's announcements; default voice.lang.
	Lang string `toml:"lang" json:"lang"`
	// Mirror commits each agent write of the plan in the file's git repository.
	Mirror bool `toml:"mirror" json:"mirror"`
	// Announce speaks (low priority) when an agent moves a node to done or production.
	Announce bool `toml:"announce" json:"announce"`
}

// Client is one bearer-token identity of shared mode. The token itself never lives in the
// file: the file names the environment variable that holds it, so configs can be shared
// and committed.
type Client struct {
	// ID names the client in history, logs and plan authorship; unique.
	ID string `toml:"id" json:"id"`
	// TokenEnv is the environment variable holding the bearer token (≥ 32 characters).
	TokenEnv string `toml:"token_env" json:"token_env"`
	// Speak grants POST /speak and the MCP speak tool.
	Speak bool `toml:"speak" json:"speak"`
	// Control grants mute, unmute and stop.
	Control bool `toml:"control" json:"control"`
	// NowPassesQuietHours grants (true) or denies (false) this client passing quiet hours
	// with "now"; unset, rules.now_passes_quiet_hours decides.
	NowPassesQuietHours *bool `toml:"now_passes_quiet_hours" json:"now_passes_quiet_hours,omitempty"`
	// Read lists the plan keys the client may read; "*" means all.
	Read []string `toml:"read" json:"read"`
	// Write lists the plan keys the client may write (and so read); "*" means all.
	Write []string `toml:"write" json:"write"`

	// Token is read from TokenEnv at load time; never logged or printed (String,
	// GoString and LogValue leave it out, and it has no TOML or JSON form).
	Token string `toml:"-" json:"-"`
}

// Duration is a time.Duration written in TOML as a Go duration string ("30s", "2m").
type Duration struct{ time.Duration }

// UnmarshalText parses a Go duration string and refuses negative values.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		return fmt.Errorf("invalid duration %q (use a form like 30s, 5m or 1h30m)", string(b))
	}
	if v < 0 {
		return fmt.Errorf("duration %q must not be negative", string(b))
	}
	d.Duration = v
	return nil
}

// MarshalText writes the duration back in Go's notation.
func (d Duration) MarshalText() ([]byte, error) { return []byte(d.Duration.String()), nil }
