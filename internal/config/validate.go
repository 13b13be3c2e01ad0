package config

import (
	"fmt"
	"maps"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// planKeyRE is the shape of a plan key: short, lower case, safe in URLs and file names.
var planKeyRE = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,63}$`)

// langTagRE is the shape of a BCP-47 language tag as talkd accepts it: a 2–3 letter
// language and optional subtags (de, en-GB, pt-BR, zh-Hans-CN, sr-Latn). Whether the
// engine can speak it is checked by the voice, against the engine's own voice list.
var langTagRE = regexp.MustCompile(LangTagPattern)

// LangTagPattern is langTagRE's expression, for schemas that state the same rule (the MCP
// speak tool's lang).
const LangTagPattern = `^[A-Za-z]{2,3}(-[A-Za-z0-9]{1,8})*$`

// IsLangTag reports whether s is a language tag talkd accepts (BCP-47 syntax).
func IsLangTag(s string) bool { return len(s) <= 35 && langTagRE.MatchString(s) }

func isBuiltinProvider(name string) bool {
	switch name {
	case "auto", "espeak", "say", "sapi", "speechd", "fake":
		return true
	}
	return false
}

// validate checks every value and resolves the derived ones (absolute paths, fake_log,
// plan languages, tokens), recording each problem with its key.
func (l *loader) validate(c *Config) {
	l.validateServer(c)
	l.validateVoice(c)
	l.validateRules(c)
	l.validatePlans(c)
	l.validateRoots(c)
	l.validateClients(c)
	l.validateEditor(c)
}

func (l *loader) validateServer(c *Config) {
	s := &c.Server
	host, port, err := net.SplitHostPort(s.Listen)
	switch {
	case err != nil:
		l.fail("server.listen", "%q is not host:port (e.g. 127.0.0.1:7077)", s.Listen)
	case !validPort(port):
		l.fail("server.listen", "%q: port %q is not a number 0-65535 (0 picks a free port)", s.Listen, port)
	case strings.ContainsAny(host, " \t/"):
		l.fail("server.listen", "%q: %q is not a host name or IP address", s.Listen, host)
	case !c.Shared() && !isLoopback(host):
		l.fail("server.listen", "%q is not a loopback address, and without [[clients]] talkd runs in local mode, "+
			"where every caller gets every right; listen on 127.0.0.1, or add a client per caller:\n"+
			"  [[clients]]\n  id = \"alice\"\n  token_env = \"TALK_TOKEN_ALICE\"   # the variable holding a token of at least %d characters\n"+
			"  speak = true\n  control = true\n  read = [\"*\"]\n  write = []", s.Listen, MinTokenLength)
	}

	for i, o := range s.AllowedOrigins {
		key := fmt.Sprintf("server.allowed_origins[%d]", i)
		if o == "*" {
			if len(s.AllowedOrigins) > 1 {
				l.fail(key, `"*" must stand alone (it already allows every origin)`)
			}
			continue
		}
		norm, err := normalizeOrigin(o)
		if err != nil {
			l.fail(key, "%q %v", o, err)
			continue
		}
		s.AllowedOrigins[i] = norm
	}

	for i, h := range s.AllowedHosts {
		key := fmt.Sprintf("server.allowed_hosts[%d]", i)
		if h == "" || strings.Contains(h, "://") || strings.ContainsAny(h, "/ \t") {
			l.fail(key, "%q is not a host name (write it as the Host header carries it, e.g. talk.example.org)", h)
			continue
		}
		s.AllowedHosts[i] = strings.ToLower(h)
	}

	if s.StateDir == "" {
		l.fail("server.state_dir", "cannot be derived: set TALK_STATE_DIR, XDG_STATE_HOME or HOME, or state_dir in the file")
	} else if abs, err := filepath.Abs(l.expandHome(s.StateDir)); err != nil {
		l.fail("server.state_dir", "%q: %v", s.StateDir, err)
	} else {
		s.StateDir = abs
	}
	if s.CacheDir == "" && s.StateDir != "" {
		s.CacheDir = filepath.Join(s.StateDir, "cache")
	}
	if s.CacheDir != "" {
		if abs, err := filepath.Abs(l.expandHome(s.CacheDir)); err != nil {
			l.fail("server.cache_dir", "%q: %v", s.CacheDir, err)
		} else {
			s.CacheDir = abs
		}
	}
	if s.AnalysisCacheBytes < 0 {
		l.fail("server.analysis_cache_bytes", "%d must not be negative (0 turns the cache off; default %d)", s.AnalysisCacheBytes, DefaultAnalysisCacheBytes)
	}
	if s.ShutdownTimeout.Duration <= 0 {
		l.fail("server.shutdown_timeout", "%s must be greater than 0", s.ShutdownTimeout.Duration)
	}
	if s.MaxBodyBytes <= 0 {
		l.fail("server.max_body_bytes", "%d must be greater than 0 (default %d)", s.MaxBodyBytes, DefaultMaxBodyBytes)
	}
	if s.MaxParkedPolls <= 0 {
		l.fail("server.max_parked_polls", "%d must be greater than 0 (default %d)", s.MaxParkedPolls, DefaultMaxParkedPolls)
	}
	if s.MaxParkedPollsPerClient <= 0 {
		l.fail("server.max_parked_polls_per_client", "%d must be greater than 0 (default %d)", s.MaxParkedPollsPerClient, DefaultMaxParkedPollsPerClient)
	}
}

func validPort(p string) bool {
	n, err := strconv.Atoi(p)
	return err == nil && allDigits(p) && n >= 0 && n <= 65535
}

// isLoopback accepts what can only be reached from this machine: localhost, 127.0.0.0/8
// and ::1. The empty host (all interfaces) is not loopback.
func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// normalizeOrigin checks scheme://host[:port] and lower-cases scheme and host and drops a
// default port, because browsers send origins in that form and the comparison is exact.
func normalizeOrigin(o string) (string, error) {
	u, err := url.Parse(o)
	if err != nil || u.Scheme == "" || u.Host == "" || u.Opaque != "" {
		return "", fmt.Errorf("is not an origin: write scheme://host[:port], e.g. https://plans.example.org")
	}
	if u.User != nil || u.RawQuery != "" || u.Fragment != "" || u.ForceQuery {
		return "", fmt.Errorf("is not an origin: it must not carry user info, a query or a fragment")
	}
	if u.Path != "" {
		return "", fmt.Errorf("is not an origin: it must not have a path or a trailing slash (write %s://%s)", u.Scheme, u.Host)
	}
	if p := u.Port(); p != "" && (!validPort(p) || p == "0") {
		return "", fmt.Errorf("is not an origin: port %q is not 1-65535", p)
	}
	scheme, host := strings.ToLower(u.Scheme), strings.ToLower(u.Host)
	if scheme == "http" {
		host = strings.TrimSuffix(host, ":80")
	}
	if scheme == "https" {
		host = strings.TrimSuffix(host, ":443")
	}
	return scheme + "://" + host, nil
}

func (l *loader) validateVoice(c *Config) {
	v := &c.Voice
	names := map[string]bool{}
	for i, cmd := range v.Commands {
		key := fmt.Sprintf("voice.commands[%d]", i)
		switch {
		case strings.TrimSpace(cmd.Name) == "":
			l.fail(key+".name", "is empty; a command is selected by its name")
		case isBuiltinProvider(cmd.Name):
			l.fail(key+".name", "%q is a built-in provider name; choose another", cmd.Name)
		case names[cmd.Name]:
			l.fail(key+".name", "%q is used by an earlier [[voice.commands]] entry; names must be unique", cmd.Name)
		}
		names[cmd.Name] = true
		if len(cmd.Argv) == 0 || strings.TrimSpace(cmd.Argv[0]) == "" {
			l.fail(key+".argv", "is empty; give the program and its arguments, e.g. [\"piper\", \"--model\", \"en.onnx\", \"--output_file\", \"{out}\"]")
			continue
		}
		// Without {out} the command plays by itself (spd-say -w, a cloud CLI with its own
		// output): its exit is the end of the utterance.
		joined := strings.Join(cmd.Argv, "\x00")
		if !cmd.Stdin && !strings.Contains(joined, "{text}") {
			l.fail(key+".argv", "%q has no {text} placeholder and stdin is false; the command would never see the text", cmd.Argv)
		}
	}

	if !isBuiltinProvider(v.Provider) && !names[v.Provider] {
		l.fail("voice.provider", "%q is not auto, espeak, say, sapi, speechd, fake or the name of a [[voice.commands]] entry", v.Provider)
	}
	switch {
	case v.Sink == "auto" || v.Sink == "null":
	case strings.HasPrefix(v.Sink, "dir:"):
		dir := strings.TrimSpace(strings.TrimPrefix(v.Sink, "dir:"))
		if dir == "" {
			l.fail("voice.sink", "%q names no directory; write dir:/path/to/folder", v.Sink)
		} else if abs, err := filepath.Abs(l.expandHome(dir)); err != nil {
			l.fail("voice.sink", "%q: %v", v.Sink, err)
		} else {
			// Absolute, so the recordings land in the same place whatever the daemon's cwd.
			v.Sink = "dir:" + abs
		}
	default:
		l.fail("voice.sink", "%q is not auto, null or dir:<path>", v.Sink)
	}
	if !IsLangTag(v.Lang) {
		l.fail("voice.lang", "%q is not a BCP-47 language tag such as de, en, fr or pt-BR", v.Lang)
	}
	if v.Timeout.Duration <= 0 {
		l.fail("voice.timeout", "%s must be greater than 0", v.Timeout.Duration)
	}
	if v.Speed < 0 {
		l.fail("voice.speed", "%d must not be negative (0 = the engine's default rate)", v.Speed)
	}
	for _, lang := range slices.Sorted(maps.Keys(v.Voices)) {
		name := v.Voices[lang]
		if !IsLangTag(lang) {
			l.fail("voice.voices."+lang, "%q is not a BCP-47 language tag such as de, en or fr", lang)
		} else if strings.TrimSpace(name) == "" {
			l.fail("voice.voices."+lang, "is empty; name a voice or remove the key")
		}
	}
	for _, agent := range slices.Sorted(maps.Keys(v.Agents)) {
		if name := v.Agents[agent]; strings.TrimSpace(name) == "" || strings.HasPrefix(name, "-") {
			l.fail("voice.agents."+agent, "%q is not a voice name; name one from talk voices", name)
		}
	}
	for i, p := range v.Players {
		if strings.TrimSpace(p) == "" {
			l.fail(fmt.Sprintf("voice.players[%d]", i), "is empty; name a player program such as pw-play")
		}
	}
	if v.Cleanup.MaxChars < 0 {
		l.fail("voice.cleanup.max_chars", "%d must not be negative (0 = default %d)", v.Cleanup.MaxChars, DefaultMaxChars)
	}
	v.Cleanup.MaxChars = v.Cleanup.Limit()
	urls, markdown := v.Cleanup.URLsOn(), v.Cleanup.MarkdownOn()
	v.Cleanup.URLs, v.Cleanup.Markdown = &urls, &markdown
	if v.FakeLog == "" {
		v.FakeLog = filepath.Join(c.Server.StateDir, FakeLogName)
	} else if abs, err := filepath.Abs(l.expandHome(v.FakeLog)); err == nil {
		v.FakeLog = abs
	}
}

func (l *loader) validateRules(c *Config) {
	r := &c.Rules
	for i, s := range r.QuietHours {
		if _, err := ParseWindow(s); err != nil {
			l.fail(fmt.Sprintf("rules.quiet_hours[%d]", i), "%v", err)
		}
	}
	switch r.OnRateLimit {
	case "", RateLimitDiscard, RateLimitDefer:
	default:
		l.fail("rules.on_rate_limit", "%q is not discard or defer", r.OnRateLimit)
	}
	if r.MaxWait.Duration <= 0 {
		l.fail("rules.max_wait", "%s must be greater than 0", r.MaxWait.Duration)
	}
	if r.QueueSize < 1 || r.QueueSize > 10000 {
		l.fail("rules.queue_size", "%d is outside 1..10000", r.QueueSize)
	}
	if r.HistorySize < 1 || r.HistorySize > 100000 {
		l.fail("rules.history_size", "%d is outside 1..100000", r.HistorySize)
	}
	// Load decodes onto the defaults, so these are set; a hand-built Config may lack them.
	if r.RateLimit.Low == nil {
		r.RateLimit.Low = &Duration{DefaultIntervalLow}
	}
	if r.RateLimit.Normal == nil {
		r.RateLimit.Normal = &Duration{DefaultIntervalNormal}
	}
	if r.RateLimit.High == nil {
		r.RateLimit.High = &Duration{DefaultIntervalHigh}
	}
}

func (l *loader) validatePlans(c *Config) {
	keys := map[string]bool{}
	for i := range c.Plans {
		p := &c.Plans[i]
		key := fmt.Sprintf("plans[%d]", i)
		switch {
		case !planKeyRE.MatchString(p.Key):
			l.fail(key+".key", "%q must match ^[a-z0-9][a-z0-9_-]{0,63}$ (lower case letters, digits, _ and -)", p.Key)
		case keys[p.Key]:
			l.fail(key+".key", "%q is used by an earlier [[plans]] entry; keys must be unique", p.Key)
		}
		keys[p.Key] = true

		path := l.expandHome(p.Path)
		switch {
		case p.URL != "" || p.TokenEnv != "" || p.DisplayName != "":
			l.validateRemotePlan(key, p)
		case path == "":
			l.fail(key+".path", "is empty; give the absolute path of the plan file (or url = the document on a Werkbaum server)")
		case !filepath.IsAbs(path):
			l.fail(key+".path", "%q is not an absolute path", p.Path)
		default:
			real, err := filepath.EvalSymlinks(path)
			if err != nil {
				l.fail(key+".path", "%q: %v", p.Path, unwrapPathError(err))
				break
			}
			fi, err := os.Stat(real)
			if err != nil {
				l.fail(key+".path", "%q: %v", p.Path, unwrapPathError(err))
				break
			}
			if !fi.Mode().IsRegular() {
				l.fail(key+".path", "%q is not a regular file", p.Path)
				break
			}
			p.Path = real
		}

		if p.Lang == "" {
			p.Lang = c.Voice.Lang
		} else if !IsLangTag(p.Lang) {
			l.fail(key+".lang", "%q is not a BCP-47 language tag such as de, en or fr", p.Lang)
		}
	}
}

// unwrapPathError drops the path from an *os.PathError: the message already quotes it.
func unwrapPathError(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}

func (l *loader) validateClients(c *Config) {
	ids := map[string]bool{}
	tokens := map[string]string{} // token -> first client id; never printed
	for i := range c.Clients {
		cl := &c.Clients[i]
		key := fmt.Sprintf("clients[%d]", i)
		switch {
		case strings.TrimSpace(cl.ID) == "":
			l.fail(key+".id", "is empty; every client needs an id (it names the author of writes)")
		case ids[cl.ID]:
			l.fail(key+".id", "%q is used by an earlier [[clients]] entry; ids must be unique", cl.ID)
		}
		ids[cl.ID] = true

		if cl.TokenEnv == "" {
			l.fail(key+".token_env", "is empty; name the environment variable that holds the client's token")
		} else {
			// Messages here name the variable and never quote the token.
			tok := l.getenv(cl.TokenEnv)
			switch n := utf8.RuneCountInString(tok); {
			case tok == "":
				l.fail(key+".token_env", "environment variable %s is not set or empty; it must hold the client's token (at least %d characters)", cl.TokenEnv, MinTokenLength)
			case n < MinTokenLength:
				l.fail(key+".token_env", "the token in %s has %d characters; at least %d are required (e.g. openssl rand -hex 32)", cl.TokenEnv, n, MinTokenLength)
			case strings.IndexFunc(tok, unicode.IsSpace) >= 0:
				l.fail(key+".token_env", "the token in %s contains white space (a trailing newline?); tokens are compared byte for byte", cl.TokenEnv)
			case tokens[tok] != "":
				l.fail(key+".token_env", "the token in %s is also the token of client %q; each client needs its own", cl.TokenEnv, tokens[tok])
			default:
				tokens[tok] = cl.ID
				cl.Token = tok
			}
		}

		for _, g := range []struct {
			field string
			list  []string
		}{{"read", cl.Read}, {"write", cl.Write}} {
			for j, k := range g.list {
				if k == "*" {
					continue
				}
				if _, ok := c.Plan(k); !ok {
					l.fail(fmt.Sprintf("%s.%s[%d]", key, g.field, j), "%q is not a configured plan key (use \"*\" for all plans)", k)
				}
			}
		}
	}
}
