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
	Version int      `toml:"version"`
	Server  Server   `toml:"server"`
	Voice   Voice    `toml:"voice"`
	Rules   Rules    `toml:"rules"`
	Plans   []Plan   `toml:"plans"`
	Clients []Client `toml:"clients"`

	// Source names where the configuration came from: the file path, or
	// "embedded defaults" when no file exists. Used in messages and /status.
	Source string `toml:"-"`
}

// Server holds the network side.
type Server struct {
	// Listen is host:port; default 127.0.0.1:7077.
	Listen string `toml:"listen"`
	// AllowedOrigins is the CORS list of /speak and the Origin allow-list of /mcp.
	// Empty means closed; a single "*" means any origin.
	AllowedOrigins []string `toml:"allowed_origins"`
	// AllowedHosts are extra Host header values accepted besides loopback and the
	// listen address (DNS-rebinding protection).
	AllowedHosts []string `toml:"allowed_hosts"`
	// StateDir holds the database and the fake provider's log;
	// default $XDG_STATE_HOME/talk.
	StateDir string `toml:"state_dir"`
	// ShutdownTimeout bounds a graceful stop; default 10s.
	ShutdownTimeout Duration `toml:"shutdown_timeout"`
	// MaxBodyBytes is the request body limit of every door; default 65536.
	MaxBodyBytes int64 `toml:"max_body_bytes"`
}

// Voice selects and tunes the speech engine and the audio sink.
type Voice struct {
	// Provider: auto, espeak, say, sapi, fake, or the name of a [[voice.commands]] entry.
	Provider string `toml:"provider"`
	// Sink: auto, null, or dir:<path>.
	Sink string `toml:"sink"`
	// Lang is the default language of announcements: de or en; default en.
	Lang string `toml:"lang"`
	// Timeout bounds synthesis and playback of one utterance each; default 30s.
	Timeout Duration `toml:"timeout"`
	// Speed is the speaking rate in words per minute where the engine takes one (0 = engine default).
	Speed int `toml:"speed"`
	// Voices maps a language (de, en) to an engine-specific voice name.
	Voices map[string]string `toml:"voices"`
	// Players overrides the player search order of the auto sink.
	Players []string `toml:"players"`
	// FakeLog is where the fake provider records utterances; default <state_dir>/fake-voice.jsonl.
	FakeLog string `toml:"fake_log"`
	// FakeDuration is how long the fake provider "speaks" each utterance; default 50ms.
	FakeDuration Duration `toml:"fake_duration"`
	// Commands are named argv-template engines (Piper, RHVoice, a cloud CLI).
	Commands []Command `toml:"commands"`
	// Cleanup rules applied to text before synthesis.
	Cleanup Cleanup `toml:"cleanup"`
}

// Command is one argv-template provider. Placeholders: {text}, {lang}, {voice}, {out}.
type Command struct {
	Name string   `toml:"name"`
	Argv []string `toml:"argv"`
	// Stdin sends the text on standard input instead of through {text}.
	Stdin bool `toml:"stdin"`
}

// Cleanup switches the speech text rules; all default to on.
type Cleanup struct {
	URLs     *bool `toml:"urls"`
	Markdown *bool `toml:"markdown"`
	// MaxChars cuts long texts at a sentence boundary; 0 = default 400.
	MaxChars int `toml:"max_chars"`
}

// Rules are the laws of the voice.
type Rules struct {
	// QuietHours are local-time windows "HH:MM-HH:MM"; a window may cross midnight.
	QuietHours []string `toml:"quiet_hours"`
	// QuietNotify shows a desktop notification for announcements discarded in quiet hours.
	QuietNotify bool `toml:"quiet_notify"`
	// RateLimit is the minimum interval between admitted announcements per priority.
	RateLimit RateLimit `toml:"rate_limit"`
	// MaxWait drops announcements that waited longer; default 2m.
	MaxWait Duration `toml:"max_wait"`
	// QueueSize bounds the waiting announcements; default 100.
	QueueSize int `toml:"queue_size"`
	// HistorySize bounds the kept history; default 500.
	HistorySize int `toml:"history_size"`
}

// RateLimit holds the per-priority minimum intervals (defaults low 30s, normal 5s, high 0).
type RateLimit struct {
	Low    *Duration `toml:"low"`
	Normal *Duration `toml:"normal"`
	High   *Duration `toml:"high"`
}

// Plan is one Werkbaum plan file the daemon serves under a key.
type Plan struct {
	Key      string `toml:"key"`
	Path     string `toml:"path"`
	Lang     string `toml:"lang"`
	Mirror   bool   `toml:"mirror"`
	Announce bool   `toml:"announce"`
}

// Client is one bearer-token identity of shared mode.
type Client struct {
	ID       string   `toml:"id"`
	TokenEnv string   `toml:"token_env"`
	Speak    bool     `toml:"speak"`
	Control  bool     `toml:"control"`
	Read     []string `toml:"read"`
	Write    []string `toml:"write"`

	// Token is read from TokenEnv at load time; never logged or printed.
	Token string `toml:"-"`
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
