package config

import (
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
)

// env is a fake environment for Load.
type env map[string]string

func (e env) get(k string) string { return e[k] }

// with returns a copy of e with more variables set.
func (e env) with(kv ...string) env {
	out := env{}
	for k, v := range e {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i]] = kv[i+1]
	}
	return out
}

// home makes an isolated HOME with nothing in it and returns it with an env naming it.
func home(t *testing.T) (string, env) {
	t.Helper()
	dir := t.TempDir()
	return dir, env{"HOME": dir}
}

func writeFile(t *testing.T, path, body string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func mustLoad(t *testing.T, e env) *Config {
	t.Helper()
	c, err := Load(e.get)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	return c
}

func loadErr(t *testing.T, e env) string {
	t.Helper()
	c, err := Load(e.get)
	if err == nil {
		t.Fatalf("Load succeeded (listen %q), want an error", c.Server.Listen)
	}
	return err.Error()
}

func TestDefaults(t *testing.T) {
	dir, e := home(t)
	c := mustLoad(t, e)
	state := filepath.Join(dir, ".local", "state", "talk")
	checks := []struct {
		name      string
		got, want any
	}{
		{"Source", c.Source, SourceDefaults},
		{"Version", c.Version, 1},
		{"server.listen", c.Server.Listen, "127.0.0.1:7077"},
		{"Host", c.Server.Host(), "127.0.0.1"},
		{"Port", c.Server.Port(), 7077},
		{"server.allowed_origins", len(c.Server.AllowedOrigins), 0},
		{"server.allowed_hosts", len(c.Server.AllowedHosts), 0},
		{"server.state_dir", c.Server.StateDir, state},
		{"DBPath", c.DBPath(), filepath.Join(state, "talkd.db")},
		{"server.shutdown_timeout", c.Server.ShutdownTimeout.Duration, 10 * time.Second},
		{"server.max_body_bytes", c.Server.MaxBodyBytes, int64(65536)},
		{"voice.provider", c.Voice.Provider, "auto"},
		{"voice.sink", c.Voice.Sink, "auto"},
		{"voice.lang", c.Voice.Lang, "en"},
		{"voice.timeout", c.Voice.Timeout.Duration, 30 * time.Second},
		{"voice.speed", c.Voice.Speed, 0},
		{"voice.fake_duration", c.Voice.FakeDuration.Duration, 50 * time.Millisecond},
		{"voice.fake_log", c.Voice.FakeLog, filepath.Join(state, "fake-voice.jsonl")},
		{"FakeLogPath", c.Voice.FakeLogPath(state), filepath.Join(state, "fake-voice.jsonl")},
		{"voice.cleanup.urls", c.Voice.Cleanup.URLsOn(), true},
		{"voice.cleanup.markdown", c.Voice.Cleanup.MarkdownOn(), true},
		{"voice.cleanup.max_chars", c.Voice.Cleanup.MaxChars, 400},
		{"Cleanup.Limit", c.Voice.Cleanup.Limit(), 400},
		{"rules.quiet_hours", len(c.Rules.QuietHours), 0},
		{"rules.quiet_notify", c.Rules.QuietNotify, false},
		{"rate_limit.low", c.Rules.Interval("low"), 30 * time.Second},
		{"rate_limit.normal", c.Rules.Interval("normal"), 5 * time.Second},
		{"rate_limit.high", c.Rules.Interval("high"), time.Duration(0)},
		{"rate_limit unknown priority", c.Rules.Interval("urgent"), time.Duration(0)},
		{"rules.max_wait", c.Rules.MaxWait.Duration, 2 * time.Minute},
		{"rules.queue_size", c.Rules.QueueSize, 100},
		{"rules.history_size", c.Rules.HistorySize, 500},
		{"Shared", c.Shared(), false},
		{"plans", len(c.Plans), 0},
		{"clients", len(c.Clients), 0},
	}
	for _, ch := range checks {
		if !reflect.DeepEqual(ch.got, ch.want) {
			t.Errorf("%s = %#v, want %#v", ch.name, ch.got, ch.want)
		}
	}
	// Resolved pointers: nobody has to know the defaults to read them.
	if c.Rules.RateLimit.Low == nil || c.Rules.RateLimit.Normal == nil || c.Rules.RateLimit.High == nil ||
		c.Voice.Cleanup.URLs == nil || c.Voice.Cleanup.Markdown == nil {
		t.Errorf("Load left a defaulted pointer nil: %+v %+v", c.Rules.RateLimit, c.Voice.Cleanup)
	}
}

// Accessors of a hand-built, zero Config still give the defaults.
func TestAccessorsOfZeroValues(t *testing.T) {
	var r Rules
	if r.Interval("low") != 30*time.Second || r.Interval("normal") != 5*time.Second || r.Interval("high") != 0 {
		t.Errorf("zero Rules intervals: %v %v %v", r.Interval("low"), r.Interval("normal"), r.Interval("high"))
	}
	var cl Cleanup
	if !cl.URLsOn() || !cl.MarkdownOn() || cl.Limit() != 400 {
		t.Errorf("zero Cleanup: urls %v markdown %v limit %d", cl.URLsOn(), cl.MarkdownOn(), cl.Limit())
	}
	off := false
	cl = Cleanup{URLs: &off, Markdown: &off, MaxChars: 120}
	if cl.URLsOn() || cl.MarkdownOn() || cl.Limit() != 120 {
		t.Errorf("explicit Cleanup: urls %v markdown %v limit %d", cl.URLsOn(), cl.MarkdownOn(), cl.Limit())
	}
	var v Voice
	if got := v.FakeLogPath("/s"); got != "/s/fake-voice.jsonl" {
		t.Errorf("FakeLogPath = %q", got)
	}
	v.FakeLog = "/x/log.jsonl"
	if got := v.FakeLogPath("/s"); got != "/x/log.jsonl" {
		t.Errorf("FakeLogPath with fake_log = %q", got)
	}
	w := Rules{QuietHours: []string{"22:00-07:00", "bad"}}.Windows()
	if len(w) != 1 || w[0].String() != "22:00-07:00" {
		t.Errorf("Windows = %v", w)
	}
}

func TestStateDirFromXDG(t *testing.T) {
	dir, e := home(t)
	xdg := filepath.Join(dir, "xdgstate")
	if got := mustLoad(t, e.with("XDG_STATE_HOME", xdg)).Server.StateDir; got != filepath.Join(xdg, "talk") {
		t.Errorf("XDG_STATE_HOME: state_dir = %q", got)
	}
	// A relative XDG_STATE_HOME is invalid by the spec and ignored.
	if got := mustLoad(t, e.with("XDG_STATE_HOME", "rel/state")).Server.StateDir; got != filepath.Join(dir, ".local", "state", "talk") {
		t.Errorf("relative XDG_STATE_HOME: state_dir = %q", got)
	}
	// Without HOME and XDG there is nothing to derive it from.
	msg := loadErr(t, env{})
	if !strings.Contains(msg, "server.state_dir") || !strings.Contains(msg, "TALK_STATE_DIR") {
		t.Errorf("no HOME: %q", msg)
	}
	if got := mustLoad(t, env{"TALK_STATE_DIR": "/srv/talk"}).Server.StateDir; got != "/srv/talk" {
		t.Errorf("TALK_STATE_DIR without HOME: %q", got)
	}
}

func TestConfigPath(t *testing.T) {
	dir, e := home(t)
	xdg := filepath.Join(dir, "xdgconf")
	homeFile := writeFile(t, filepath.Join(dir, ".config", "talk", "config.toml"), "version = 1\n[voice]\nlang = \"de\"\n")
	xdgFile := writeFile(t, filepath.Join(xdg, "talk", "config.toml"), "version = 1\n[voice]\nsink = \"null\"\n")
	explicit := writeFile(t, filepath.Join(dir, "explicit.toml"), "version = 1\n[voice]\nprovider = \"fake\"\n")

	c := mustLoad(t, e)
	if c.Source != homeFile || c.Voice.Lang != "de" {
		t.Errorf("HOME: source %q lang %q", c.Source, c.Voice.Lang)
	}
	c = mustLoad(t, e.with("XDG_CONFIG_HOME", xdg))
	if c.Source != xdgFile || c.Voice.Sink != "null" || c.Voice.Lang != "en" {
		t.Errorf("XDG_CONFIG_HOME: source %q sink %q lang %q", c.Source, c.Voice.Sink, c.Voice.Lang)
	}
	c = mustLoad(t, e.with("XDG_CONFIG_HOME", xdg, "TALK_CONFIG", explicit))
	if c.Source != explicit || c.Voice.Provider != "fake" || c.Voice.Sink != "auto" {
		t.Errorf("TALK_CONFIG: source %q provider %q sink %q", c.Source, c.Voice.Provider, c.Voice.Sink)
	}
	// XDG_CONFIG_HOME without a file: defaults, not the HOME file.
	c = mustLoad(t, e.with("XDG_CONFIG_HOME", filepath.Join(dir, "empty")))
	if c.Source != SourceDefaults {
		t.Errorf("empty XDG_CONFIG_HOME: source %q", c.Source)
	}

	missing := filepath.Join(dir, "nope.toml")
	msg := loadErr(t, e.with("TALK_CONFIG", missing))
	if !strings.Contains(msg, "TALK_CONFIG") || !strings.Contains(msg, missing) || !strings.Contains(msg, "does not exist") {
		t.Errorf("missing TALK_CONFIG file: %q", msg)
	}
	msg = loadErr(t, e.with("TALK_CONFIG", dir))
	if !strings.Contains(msg, dir) {
		t.Errorf("TALK_CONFIG naming a directory: %q", msg)
	}
}

// A file with every key set away from its default: each value arrives.
func TestFileValues(t *testing.T) {
	dir, e := home(t)
	plan := writeFile(t, filepath.Join(dir, "plans", "PLAN.md"), "# plan\n")
	link := filepath.Join(dir, "plan-link.md")
	if err := os.Symlink(plan, link); err != nil {
		t.Fatal(err)
	}
	cfgFile := writeFile(t, filepath.Join(dir, "c.toml"), `version = 1
[server]
listen = "0.0.0.0:8080"
allowed_origins = ["https://Plans.Example.org:443", "http://localhost:5173"]
allowed_hosts = ["Talk.Example.org"]
state_dir = "~/state"
shutdown_timeout = "3s"
max_body_bytes = 1024

[voice]
provider = "piper"
sink = "dir:~/wav"
lang = "de"
timeout = "5s"
speed = 170
players = ["aplay"]
fake_log = "/tmp/fake.jsonl"
fake_duration = "1ms"
voices = { de = "de-x", en = "en-y" }

[voice.cleanup]
urls = false
markdown = false
max_chars = 120

[[voice.commands]]
name = "piper"
argv = ["piper", "--output_file", "{out}"]
stdin = true

[rules]
quiet_hours = ["22:00-07:00", "12:30-13:00"]
quiet_notify = true
max_wait = "1m"
queue_size = 10
history_size = 20
rate_limit = { low = "1m", normal = "0s", high = "1s" }

[[plans]]
key = "werkbaum"
path = "`+link+`"
mirror = true
announce = true

[[plans]]
key = "other_2"
path = "`+plan+`"
lang = "en"

[[clients]]
id = "ci"
token_env = "TOK_CI"
speak = true
read = ["*"]
write = ["werkbaum"]

[[clients]]
id = "reader"
token_env = "TOK_READER"
read = ["other_2"]
`)
	tokCI, tokReader := strings.Repeat("c", 32), strings.Repeat("r", 40)
	c := mustLoad(t, e.with("TALK_CONFIG", cfgFile, "TOK_CI", tokCI, "TOK_READER", tokReader))
	realPlan, _ := filepath.EvalSymlinks(plan)
	checks := []struct {
		name      string
		got, want any
	}{
		{"Source", c.Source, cfgFile},
		{"listen", c.Server.Listen, "0.0.0.0:8080"},
		{"allowed_origins normalized", c.Server.AllowedOrigins, []string{"https://plans.example.org", "http://localhost:5173"}},
		{"allowed_hosts lower-cased", c.Server.AllowedHosts, []string{"talk.example.org"}},
		{"state_dir ~ expanded", c.Server.StateDir, filepath.Join(dir, "state")},
		{"shutdown_timeout", c.Server.ShutdownTimeout.Duration, 3 * time.Second},
		{"max_body_bytes", c.Server.MaxBodyBytes, int64(1024)},
		{"provider", c.Voice.Provider, "piper"},
		{"sink", c.Voice.Sink, "dir:" + filepath.Join(dir, "wav")},
		{"lang", c.Voice.Lang, "de"},
		{"timeout", c.Voice.Timeout.Duration, 5 * time.Second},
		{"speed", c.Voice.Speed, 170},
		{"players", c.Voice.Players, []string{"aplay"}},
		{"fake_log", c.Voice.FakeLog, "/tmp/fake.jsonl"},
		{"fake_duration", c.Voice.FakeDuration.Duration, time.Millisecond},
		{"voices", c.Voice.Voices, map[string]string{"de": "de-x", "en": "en-y"}},
		{"cleanup.urls", c.Voice.Cleanup.URLsOn(), false},
		{"cleanup.markdown", c.Voice.Cleanup.MarkdownOn(), false},
		{"cleanup.max_chars", c.Voice.Cleanup.MaxChars, 120},
		{"commands", c.Voice.Commands, []Command{{Name: "piper", Argv: []string{"piper", "--output_file", "{out}"}, Stdin: true}}},
		{"quiet_hours", c.Rules.QuietHours, []string{"22:00-07:00", "12:30-13:00"}},
		{"Windows", len(c.Rules.Windows()), 2},
		{"quiet_notify", c.Rules.QuietNotify, true},
		{"max_wait", c.Rules.MaxWait.Duration, time.Minute},
		{"queue_size", c.Rules.QueueSize, 10},
		{"history_size", c.Rules.HistorySize, 20},
		{"rate low", c.Rules.Interval("low"), time.Minute},
		{"rate normal (explicit 0)", c.Rules.Interval("normal"), time.Duration(0)},
		{"rate high", c.Rules.Interval("high"), time.Second},
		{"plan 0", c.Plans[0], Plan{Key: "werkbaum", Path: realPlan, Lang: "de", Mirror: true, Announce: true}},
		{"plan 1", c.Plans[1], Plan{Key: "other_2", Path: realPlan, Lang: "en"}},
		{"Shared", c.Shared(), true},
		{"client 0 token", c.Clients[0].Token == tokCI, true},
		{"client 1 token", c.Clients[1].Token == tokReader, true},
		{"ci reads other_2", c.Clients[0].CanRead("other_2"), true},
		{"ci writes werkbaum", c.Clients[0].CanWrite("werkbaum"), true},
		{"ci writes other_2", c.Clients[0].CanWrite("other_2"), false},
		{"reader reads other_2", c.Clients[1].CanRead("other_2"), true},
		{"reader reads werkbaum", c.Clients[1].CanRead("werkbaum"), false},
		{"reader speaks", c.Clients[1].Speak, false},
	}
	for _, ch := range checks {
		if !reflect.DeepEqual(ch.got, ch.want) {
			t.Errorf("%s = %#v, want %#v", ch.name, ch.got, ch.want)
		}
	}
	if p, ok := c.Plan("other_2"); !ok || p.Key != "other_2" {
		t.Errorf("Plan(other_2) = %+v, %v", p, ok)
	}
	if _, ok := c.Plan("nope"); ok {
		t.Errorf("Plan(nope) found")
	}
}

// A partial file keeps the defaults of everything it leaves out.
func TestPartialFileKeepsDefaults(t *testing.T) {
	dir, e := home(t)
	f := writeFile(t, filepath.Join(dir, "c.toml"), "version = 1\n[rules.rate_limit]\nlow = \"1m\"\n")
	c := mustLoad(t, e.with("TALK_CONFIG", f))
	if c.Rules.Interval("low") != time.Minute || c.Rules.Interval("normal") != 5*time.Second ||
		c.Server.Listen != DefaultListen || c.Voice.Provider != "auto" || c.Rules.QueueSize != 100 {
		t.Errorf("partial file: low %v normal %v listen %q provider %q queue %d",
			c.Rules.Interval("low"), c.Rules.Interval("normal"), c.Server.Listen, c.Voice.Provider, c.Rules.QueueSize)
	}
}

func TestEnvOverrides(t *testing.T) {
	dir, e := home(t)
	f := writeFile(t, filepath.Join(dir, "c.toml"), `version = 1
[server]
listen = "127.0.0.1:8000"
allowed_origins = ["https://file.example"]
state_dir = "/file/state"
[voice]
provider = "espeak"
sink = "null"
`)
	e = e.with("TALK_CONFIG", f)
	tests := []struct {
		name string
		vars []string
		get  func(*Config) any
		want any
	}{
		{"file alone", nil, func(c *Config) any { return c.Server.Listen }, "127.0.0.1:8000"},
		{"TALK_LISTEN host:port", []string{"TALK_LISTEN", "127.0.0.2:9000"}, func(c *Config) any { return c.Server.Listen }, "127.0.0.2:9000"},
		{"TALK_LISTEN bare host keeps the file's port", []string{"TALK_LISTEN", "localhost"}, func(c *Config) any { return c.Server.Listen }, "localhost:8000"},
		{"TALK_LISTEN bare IPv6", []string{"TALK_LISTEN", "::1"}, func(c *Config) any { return c.Server.Listen }, "[::1]:8000"},
		{"TALK_LISTEN bracketed IPv6", []string{"TALK_LISTEN", "[::1]"}, func(c *Config) any { return c.Server.Listen }, "[::1]:8000"},
		{"TALK_PORT", []string{"TALK_PORT", "0"}, func(c *Config) any { return c.Server.Listen }, "127.0.0.1:0"},
		{"TALK_PORT replaces TALK_LISTEN's port", []string{"TALK_LISTEN", "localhost:1", "TALK_PORT", "2"}, func(c *Config) any { return c.Server.Listen }, "localhost:2"},
		{"TALK_ALLOWED_ORIGINS list", []string{"TALK_ALLOWED_ORIGINS", " https://a.example , http://localhost:5173 "},
			func(c *Config) any { return c.Server.AllowedOrigins }, []string{"https://a.example", "http://localhost:5173"}},
		{"TALK_ALLOWED_ORIGINS off", []string{"TALK_ALLOWED_ORIGINS", "off"}, func(c *Config) any { return c.Server.AllowedOrigins }, []string{}},
		{"TALK_ALLOWED_ORIGINS OFF", []string{"TALK_ALLOWED_ORIGINS", " OFF "}, func(c *Config) any { return c.Server.AllowedOrigins }, []string{}},
		{"TALK_ALLOWED_ORIGINS star", []string{"TALK_ALLOWED_ORIGINS", "*"}, func(c *Config) any { return c.Server.CORSAny() }, true},
		{"TALK_PROVIDER", []string{"TALK_PROVIDER", "fake"}, func(c *Config) any { return c.Voice.Provider }, "fake"},
		{"TALK_SINK", []string{"TALK_SINK", "dir:/tmp/wav"}, func(c *Config) any { return c.Voice.Sink }, "dir:/tmp/wav"},
		{"relative dir sink made absolute", []string{"TALK_SINK", "dir:wav"}, func(c *Config) any { return filepath.IsAbs(strings.TrimPrefix(c.Voice.Sink, "dir:")) }, true},
		{"TALK_STATE_DIR", []string{"TALK_STATE_DIR", "/env/state"}, func(c *Config) any { return c.Server.StateDir }, "/env/state"},
		{"fake_log follows TALK_STATE_DIR", []string{"TALK_STATE_DIR", "/env/state"}, func(c *Config) any { return c.Voice.FakeLog }, "/env/state/fake-voice.jsonl"},
		{"relative TALK_STATE_DIR made absolute", []string{"TALK_STATE_DIR", "rel"}, func(c *Config) any { return filepath.IsAbs(c.Server.StateDir) }, true},
		{"empty variables are unset", []string{"TALK_LISTEN", "", "TALK_PROVIDER", "", "TALK_ALLOWED_ORIGINS", ""},
			func(c *Config) any {
				return c.Server.Listen + " " + c.Voice.Provider + " " + strings.Join(c.Server.AllowedOrigins, ",")
			},
			"127.0.0.1:8000 espeak https://file.example"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := mustLoad(t, e.with(tt.vars...))
			if got := tt.get(c); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %#v, want %#v", got, tt.want)
			}
		})
	}
	// Without a file the variables apply to the defaults.
	_, bare := home(t)
	c := mustLoad(t, bare.with("TALK_PORT", "0", "TALK_PROVIDER", "fake", "TALK_SINK", "null"))
	if c.Server.Listen != "127.0.0.1:0" || c.Voice.Provider != "fake" || c.Voice.Sink != "null" || c.Source != SourceDefaults {
		t.Errorf("env over defaults: listen %q provider %q sink %q source %q", c.Server.Listen, c.Voice.Provider, c.Voice.Sink, c.Source)
	}
}

func TestEnvErrors(t *testing.T) {
	_, e := home(t)
	tests := []struct {
		vars []string
		want []string
	}{
		{[]string{"TALK_PORT", "abc"}, []string{"TALK_PORT", `"abc"`, "0-65535"}},
		{[]string{"TALK_PORT", "70000"}, []string{"TALK_PORT", "70000"}},
		{[]string{"TALK_PORT", "-1"}, []string{"TALK_PORT", `"-1"`}},
		{[]string{"TALK_ALLOWED_ORIGINS", "https://a.example,,https://b.example"}, []string{"TALK_ALLOWED_ORIGINS", "entry 2 is empty"}},
		{[]string{"TALK_ALLOWED_ORIGINS", "https://a.example,"}, []string{"TALK_ALLOWED_ORIGINS", "entry 2 is empty"}},
		{[]string{"TALK_ALLOWED_ORIGINS", "https://a.example/app"}, []string{"TALK_ALLOWED_ORIGINS", "https://a.example/app", "path"}},
		{[]string{"TALK_ALLOWED_ORIGINS", "*,https://a.example"}, []string{"TALK_ALLOWED_ORIGINS", "alone"}},
		{[]string{"TALK_PROVIDER", "festival"}, []string{"TALK_PROVIDER", `"festival"`}},
		{[]string{"TALK_SINK", "dir:"}, []string{"TALK_SINK", "dir:"}},
		{[]string{"TALK_SINK", "speakers"}, []string{"TALK_SINK", `"speakers"`}},
		{[]string{"TALK_LISTEN", "0.0.0.0"}, []string{"TALK_LISTEN", "0.0.0.0:7077", "loopback", "[[clients]]", "token_env"}},
		{[]string{"TALK_LISTEN", "127.0.0.1:99999"}, []string{"TALK_LISTEN", "99999"}},
	}
	for _, tt := range tests {
		msg := loadErr(t, e.with(tt.vars...))
		for _, w := range tt.want {
			if !strings.Contains(msg, w) {
				t.Errorf("%v: error %q does not contain %q", tt.vars, msg, w)
			}
		}
	}
}

func TestNonLoopbackLocalMode(t *testing.T) {
	dir, e := home(t)
	for _, listen := range []string{"0.0.0.0:7077", ":7077", "192.168.1.20:7077", "[::]:7077", "example.org:7077"} {
		f := writeFile(t, filepath.Join(dir, "c.toml"), "version = 1\n[server]\nlisten = \""+listen+"\"\n")
		msg := loadErr(t, e.with("TALK_CONFIG", f))
		for _, w := range []string{f + ":3", "server.listen", listen, "[[clients]]", "token_env"} {
			if !strings.Contains(msg, w) {
				t.Errorf("listen %q: error %q does not contain %q", listen, msg, w)
			}
		}
	}
	for _, listen := range []string{"127.0.0.1:0", "127.1.2.3:7077", "[::1]:7077", "localhost:7077", "LOCALHOST:1"} {
		f := writeFile(t, filepath.Join(dir, "c.toml"), "version = 1\n[server]\nlisten = \""+listen+"\"\n")
		if c := mustLoad(t, e.with("TALK_CONFIG", f)); c.Server.Listen != listen {
			t.Errorf("listen %q loaded as %q", listen, c.Server.Listen)
		}
	}
}

// Every file problem: the error names the file, the line where one is known, the key and
// what is wrong.
func TestFileErrors(t *testing.T) {
	dir, e := home(t)
	plan := writeFile(t, filepath.Join(dir, "p.md"), "plan\n")
	if err := os.Mkdir(filepath.Join(dir, "adir"), 0o755); err != nil {
		t.Fatal(err)
	}
	e = e.with("TOK", strings.Repeat("t", 32), "TOK2", strings.Repeat("u", 32))
	okPlan := "[[plans]]\nkey = \"p\"\npath = \"" + plan + "\"\n"
	tests := []struct {
		name string
		body string
		line int // 0: no line expected
		want []string
	}{
		{"syntax: unclosed table", "version = 1\n[server\nlisten = \"x\"\n", 2, []string{"table name"}},
		{"syntax: unclosed string", "version = 1\n[server]\nlisten = \"abc\n", 3, []string{"newline"}},
		{"syntax: duplicate key", "version = 1\nversion = 1\n", 2, []string{"already been defined"}},
		{"version missing", "[server]\nlisten = \"127.0.0.1:1\"\n", 0, []string{"version", "version = 1"}},
		{"version 2", "version = 2\n", 1, []string{"version", "2 is not supported", "version = 1"}},
		{"version as string", "version = \"1\"\n", 1, []string{"version", "wrong type", "integer"}},
		{"unknown top-level key", "version = 1\nverbose = true\n", 2, []string{"verbose", "unknown key"}},
		{"unknown table", "version = 1\n[voicee]\nlang = \"de\"\n", 2, []string{"voicee", "unknown key", `"voice"`}},
		{"unknown key in table", "version = 1\n[server]\nlisten = \"127.0.0.1:1\"\nport = 1\n", 4, []string{"server.port", "unknown key"}},
		{"wrong case is unknown", "version = 1\n[server]\nListen = \"127.0.0.1:1\"\n", 3, []string{"server.Listen", `did you mean "listen"`}},
		{"misspelt key", "version = 1\n[rules]\nqueue_sise = 5\n", 3, []string{"rules.queue_sise", `did you mean "queue_size"`}},
		{"unknown key in inline table", "version = 1\n[rules]\nrate_limit = { low = \"1m\", urgent = \"1s\" }\n", 3, []string{"rules.rate_limit.urgent", "unknown key"}},
		{"unknown key in array of tables", "version = 1\n" + okPlan + "pth = \"x\"\n", 5, []string{"plans.pth", "unknown key"}},
		{"unknown dotted key", "version = 1\n[voice]\ncleanup.emoji = true\n", 3, []string{"voice.cleanup.emoji", "unknown key"}},
		{"wrong type", "version = 1\n[server]\nlisten = 7077\n", 3, []string{"server.listen", "wrong type", "integer", "string"}},
		{"value where a table belongs", "version = 1\n[voice]\ncleanup = 1\n", 3, []string{"voice.cleanup", "wrong type", "integer", "table"}},
		{"float for an integer", "version = 1\n[rules]\nqueue_size = 1.5\n", 3, []string{"rules.queue_size", "float", "integer"}},
		{"string for a list", "version = 1\n[server]\nallowed_origins = \"https://a.example\"\n", 3, []string{"server.allowed_origins", "array"}},
		{"bad duration", "version = 1\n[server]\nshutdown_timeout = 10\n", 3, []string{"server.shutdown_timeout", `"10"`, "30s"}},
		{"negative duration", "version = 1\n[voice]\ntimeout = \"-1s\"\n", 3, []string{"voice.timeout", "negative"}},
		{"listen without port", "version = 1\n[server]\nlisten = \"localhost\"\n", 3, []string{"server.listen", `"localhost"`, "host:port"}},
		{"listen port too big", "version = 1\n[server]\nlisten = \"127.0.0.1:65536\"\n", 3, []string{"server.listen", "65536", "0-65535"}},
		{"listen port by name", "version = 1\n[server]\nlisten = \"127.0.0.1:http\"\n", 3, []string{"server.listen", `"http"`}},
		{"origin trailing slash", "version = 1\n[server]\nallowed_origins = [\"https://a.example/\"]\n", 3, []string{"server.allowed_origins[0]", "https://a.example/", "trailing slash"}},
		{"origin with path", "version = 1\n[server]\nallowed_origins = [\"https://ok.example\", \"https://a.example/app\"]\n", 3, []string{"server.allowed_origins[1]", "path"}},
		{"origin without scheme", "version = 1\n[server]\nallowed_origins = [\"a.example\"]\n", 3, []string{"server.allowed_origins[0]", "scheme://host"}},
		{"origin with query", "version = 1\n[server]\nallowed_origins = [\"https://a.example?x=1\"]\n", 3, []string{"server.allowed_origins[0]", "query"}},
		{"origin empty", "version = 1\n[server]\nallowed_origins = [\"\"]\n", 3, []string{"server.allowed_origins[0]", "not an origin"}},
		{"star not alone", "version = 1\n[server]\nallowed_origins = [\"*\", \"https://a.example\"]\n", 3, []string{"server.allowed_origins[0]", "alone"}},
		{"allowed host with scheme", "version = 1\n[server]\nallowed_hosts = [\"https://talk.example\"]\n", 3, []string{"server.allowed_hosts[0]", "https://talk.example"}},
		{"shutdown_timeout zero", "version = 1\n[server]\nshutdown_timeout = \"0s\"\n", 3, []string{"server.shutdown_timeout", "greater than 0"}},
		{"max_body_bytes zero", "version = 1\n[server]\nmax_body_bytes = 0\n", 3, []string{"server.max_body_bytes", "greater than 0"}},
		{"unknown provider", "version = 1\n[voice]\nprovider = \"festival\"\n", 3, []string{"voice.provider", `"festival"`, "[[voice.commands]]"}},
		{"command named like a builtin", "version = 1\n[[voice.commands]]\nname = \"fake\"\nargv = [\"x\", \"{text}\", \"{out}\"]\n", 3, []string{"voice.commands[0].name", "built-in"}},
		{"command without name", "version = 1\n[[voice.commands]]\nargv = [\"x\", \"{text}\", \"{out}\"]\n", 2, []string{"voice.commands[0].name", "empty"}},
		{"duplicate command", "version = 1\n[[voice.commands]]\nname = \"p\"\nargv = [\"x\", \"{text}\", \"{out}\"]\n[[voice.commands]]\nname = \"p\"\nargv = [\"y\", \"{text}\", \"{out}\"]\n", 6, []string{"voice.commands[1].name", `"p"`, "unique"}},
		{"command argv empty", "version = 1\n[[voice.commands]]\nname = \"p\"\nargv = []\n", 4, []string{"voice.commands[0].argv", "empty"}},
		{"command without argv", "version = 1\n[[voice.commands]]\nname = \"p\"\n", 2, []string{"voice.commands[0].argv", "empty"}},
		{"command without {text} or stdin", "version = 1\n[[voice.commands]]\nname = \"p\"\nargv = [\"x\", \"{out}\"]\n", 4, []string{"voice.commands[0].argv", "{text}", "stdin"}},
		{"sink dir without path", "version = 1\n[voice]\nsink = \"dir:\"\n", 3, []string{"voice.sink", "dir:"}},
		{"sink unknown", "version = 1\n[voice]\nsink = \"speakers\"\n", 3, []string{"voice.sink", `"speakers"`, "auto, null or dir:"}},
		{"lang", "version = 1\n[voice]\nlang = \"f r\"\n", 3, []string{"voice.lang", `"f r"`, "BCP-47"}},
		{"voice timeout zero", "version = 1\n[voice]\ntimeout = \"0s\"\n", 3, []string{"voice.timeout", "greater than 0"}},
		{"speed negative", "version = 1\n[voice]\nspeed = -5\n", 3, []string{"voice.speed", "-5"}},
		{"voices not a language", "version = 1\n[voice.voices]\nfrench_ = \"x\"\n", 3, []string{"voice.voices.french_", `"french_"`}},
		{"agent voice empty", "version = 1\n[voice.agents]\nclaude = \"\"\n", 3, []string{"voice.agents.claude", "voice name"}},
		{"voices empty name", "version = 1\n[voice.voices]\nde = \"\"\n", 3, []string{"voice.voices.de", "empty"}},
		{"players empty entry", "version = 1\n[voice]\nplayers = [\"\"]\n", 3, []string{"voice.players[0]", "empty"}},
		{"max_chars negative", "version = 1\n[voice.cleanup]\nmax_chars = -1\n", 3, []string{"voice.cleanup.max_chars", "-1"}},
		{"quiet hours equal", "version = 1\n[rules]\nquiet_hours = [\"22:00-22:00\"]\n", 3, []string{"rules.quiet_hours[0]", "22:00-22:00", "equal"}},
		{"quiet hours bad hour", "version = 1\n[rules]\nquiet_hours = [\"12:00-13:00\", \"25:00-07:00\"]\n", 3, []string{"rules.quiet_hours[1]", "25:00-07:00", "hour"}},
		{"quiet hours no dash", "version = 1\n[rules]\nquiet_hours = [\"22:00\"]\n", 3, []string{"rules.quiet_hours[0]", "HH:MM-HH:MM"}},
		{"max_wait zero", "version = 1\n[rules]\nmax_wait = \"0s\"\n", 3, []string{"rules.max_wait", "greater than 0"}},
		{"queue_size zero", "version = 1\n[rules]\nqueue_size = 0\n", 3, []string{"rules.queue_size", "1..10000"}},
		{"queue_size too big", "version = 1\n[rules]\nqueue_size = 10001\n", 3, []string{"rules.queue_size", "10001"}},
		{"history_size zero", "version = 1\n[rules]\nhistory_size = 0\n", 3, []string{"rules.history_size", "1..100000"}},
		{"history_size too big", "version = 1\n[rules]\nhistory_size = 100001\n", 3, []string{"rules.history_size", "100001"}},
		{"plan key shape", "version = 1\n[[plans]]\nkey = \"Bad Key\"\npath = \"" + plan + "\"\n", 3, []string{"plans[0].key", `"Bad Key"`, "^[a-z0-9]"}},
		{"plan key too long", "version = 1\n[[plans]]\nkey = \"" + strings.Repeat("a", 65) + "\"\npath = \"" + plan + "\"\n", 3, []string{"plans[0].key"}},
		{"plan key duplicate", "version = 1\n" + okPlan + okPlan, 6, []string{"plans[1].key", `"p"`, "unique"}},
		{"plan path relative", "version = 1\n[[plans]]\nkey = \"p\"\npath = \"p.md\"\n", 4, []string{"plans[0].path", `"p.md"`, "absolute"}},
		{"plan path empty", "version = 1\n[[plans]]\nkey = \"p\"\n", 2, []string{"plans[0].path", "empty"}},
		{"plan path missing", "version = 1\n[[plans]]\nkey = \"p\"\npath = \"" + filepath.Join(dir, "gone.md") + "\"\n", 4, []string{"plans[0].path", "gone.md", "no such file"}},
		{"plan path directory", "version = 1\n[[plans]]\nkey = \"p\"\npath = \"" + filepath.Join(dir, "adir") + "\"\n", 4, []string{"plans[0].path", "not a regular file"}},
		{"plan lang", "version = 1\n" + okPlan + "lang = \"fr_FR\"\n", 5, []string{"plans[0].lang", `"fr_FR"`}},
		{"client id empty", "version = 1\n[[clients]]\ntoken_env = \"TOK\"\n", 2, []string{"clients[0].id", "empty"}},
		{"client id duplicate", "version = 1\n[[clients]]\nid = \"a\"\ntoken_env = \"TOK\"\n[[clients]]\nid = \"a\"\ntoken_env = \"TOK2\"\n", 6, []string{"clients[1].id", `"a"`, "unique"}},
		{"client token_env empty", "version = 1\n[[clients]]\nid = \"a\"\n", 2, []string{"clients[0].token_env", "empty"}},
		{"client token variable unset", "version = 1\n[[clients]]\nid = \"a\"\ntoken_env = \"TOK_UNSET\"\n", 4, []string{"clients[0].token_env", "TOK_UNSET", "not set"}},
		{"client grant unknown plan (read)", "version = 1\n" + okPlan + "[[clients]]\nid = \"a\"\ntoken_env = \"TOK\"\nread = [\"p\", \"q\"]\n", 8, []string{"clients[0].read[1]", `"q"`, "plan key"}},
		{"client grant unknown plan (write)", "version = 1\n[[clients]]\nid = \"a\"\ntoken_env = \"TOK\"\nwrite = [\"q\"]\n", 5, []string{"clients[0].write[0]", `"q"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := writeFile(t, filepath.Join(dir, "c.toml"), tt.body)
			msg := loadErr(t, e.with("TALK_CONFIG", f))
			where := f + ":"
			if tt.line > 0 {
				where = f + ":" + strconv.Itoa(tt.line) + ": "
			}
			if !strings.Contains(msg, where) && !(tt.line == 0 && strings.Contains(msg, f)) {
				t.Errorf("error %q does not name %q", msg, where)
			}
			for _, w := range tt.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q does not contain %q", msg, w)
				}
			}
		})
	}
}

// All problems of a file are reported in one run, one per line.
func TestAllProblemsAtOnce(t *testing.T) {
	dir, e := home(t)
	f := writeFile(t, filepath.Join(dir, "c.toml"), `version = 1
colour = "blue"
[voice]
lang = "français"
[rules]
queue_size = 0
quiet_hours = ["x"]
`)
	msg := loadErr(t, e.with("TALK_CONFIG", f, "TALK_PORT", "x"))
	for _, w := range []string{f + ":2: colour", f + ":4: voice.lang", f + ":6: rules.queue_size", f + ":7: rules.quiet_hours[0]", "TALK_PORT"} {
		if !strings.Contains(msg, w) {
			t.Errorf("error does not contain %q:\n%s", w, msg)
		}
	}
	if n := strings.Count(msg, "\n") + 1; n != 5 {
		t.Errorf("want 5 problems, one per line; got %d:\n%s", n, msg)
	}
}

// Peek gives a client the listen address even when the daemon's secrets and plan files
// are not visible to it; it still refuses what it cannot read.
func TestPeek(t *testing.T) {
	dir, e := home(t)
	f := writeFile(t, filepath.Join(dir, "c.toml"), `version = 1
future_key = 1
[server]
listen = "0.0.0.0:9100"
[[plans]]
key = "p"
path = "/nowhere/plan.md"
[[clients]]
id = "a"
token_env = "NOT_IN_THIS_SHELL"
`)
	e = e.with("TALK_CONFIG", f)
	if _, err := Load(e.get); err == nil {
		t.Fatalf("Load accepted a config with a missing plan and token")
	}
	c, err := Peek(e.get)
	if err != nil {
		t.Fatalf("Peek: %v", err)
	}
	if c.Server.Listen != "0.0.0.0:9100" || c.Source != f {
		t.Errorf("Peek: listen %q source %q", c.Server.Listen, c.Source)
	}
	if c, err := Peek(e.with("TALK_PORT", "9200").get); err != nil || c.Server.Listen != "0.0.0.0:9200" {
		t.Errorf("Peek with TALK_PORT: %v %v", c, err)
	}
	if _, err := Peek(e.with("TALK_PORT", "x").get); err == nil || !strings.Contains(err.Error(), "TALK_PORT") {
		t.Errorf("Peek with a malformed TALK_PORT: %v", err)
	}
	bad := writeFile(t, filepath.Join(dir, "bad.toml"), "version = 1\n[server\n")
	if _, err := Peek(e.with("TALK_CONFIG", bad).get); err == nil || !strings.Contains(err.Error(), bad+":2") {
		t.Errorf("Peek of a broken file: %v", err)
	}
	if c, err := Peek(env{}.get); err != nil || c.Server.Listen != DefaultListen || c.Source != SourceDefaults {
		t.Errorf("Peek without anything: %v %v", c, err)
	}
}
