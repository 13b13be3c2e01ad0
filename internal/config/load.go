package config

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"
)

// SourceDefaults is Config.Source when no config file exists.
const SourceDefaults = "embedded defaults"

// Environment variables read by Load. Each one beats the file.
const (
	EnvConfig         = "TALK_CONFIG"
	EnvListen         = "TALK_LISTEN"
	EnvPort           = "TALK_PORT"
	EnvAllowedOrigins = "TALK_ALLOWED_ORIGINS"
	EnvProvider       = "TALK_PROVIDER"
	EnvSink           = "TALK_SINK"
	EnvStateDir       = "TALK_STATE_DIR"
)

// Load builds the one validated Config of a daemon: the file ($TALK_CONFIG, else
// $XDG_CONFIG_HOME/talk/config.toml, else $HOME/.config/talk/config.toml) decoded strictly
// onto the embedded defaults, then the TALK_* environment overrides, then validation.
// getenv is os.Getenv in the daemon and a map lookup in tests (nil means os.Getenv).
//
// All problems found are reported at once, one per line, each naming the file and line
// (where known) or the environment variable, the key and what is wrong. Token values never
// appear in an error.
func Load(getenv func(string) string) (*Config, error) {
	return load(getenv, true)
}

// Peek reads the file and the environment like Load but skips validation: it fails only
// when the file cannot be read or decoded or a TALK_* variable is malformed. It is for
// clients such as `talk`, which need the daemon's listen address but neither its plan
// files nor its clients' tokens (those variables are set in the daemon's environment,
// not in the user's shell). Never start a daemon on a peeked Config.
func Peek(getenv func(string) string) (*Config, error) {
	return load(getenv, false)
}

func load(getenv func(string) string, check bool) (*Config, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	l := &loader{getenv: getenv, check: check, home: getenv("HOME"), envKeys: map[string][]string{}}
	cfg := defaults(defaultStateDir(getenv))
	cfg.Server.CacheDir = defaultCacheDir(getenv)
	cfg.Source = SourceDefaults

	path, explicit := configPath(getenv)
	if path != "" {
		data, err := os.ReadFile(path)
		switch {
		case err == nil:
			l.file = path
			cfg.Source = path
			if !l.decode(data, &cfg) {
				return nil, l.err()
			}
		case explicit && errors.Is(err, fs.ErrNotExist):
			return nil, fmt.Errorf("%s: config file %s does not exist", EnvConfig, path)
		case errors.Is(err, fs.ErrNotExist):
			// No file: the embedded defaults stand.
		default:
			return nil, fmt.Errorf("read config file: %w", err)
		}
	}

	l.applyEnv(&cfg)
	if check {
		l.validate(&cfg)
	}
	if err := l.err(); err != nil {
		return nil, err
	}
	return &cfg, nil
}

// configPath finds the config file; explicit reports that TALK_CONFIG named it, in which
// case a missing file is an error rather than "use the defaults".
func configPath(getenv func(string) string) (path string, explicit bool) {
	if p := getenv(EnvConfig); p != "" {
		return p, true
	}
	if x := getenv("XDG_CONFIG_HOME"); filepath.IsAbs(x) {
		return filepath.Join(x, "talk", "config.toml"), false
	}
	if h := getenv("HOME"); h != "" {
		return filepath.Join(h, ".config", "talk", "config.toml"), false
	}
	return "", false
}

// defaultStateDir follows the XDG base directory spec (a relative XDG_STATE_HOME is
// ignored); it is empty when neither variable helps.
func defaultStateDir(getenv func(string) string) string {
	if x := getenv("XDG_STATE_HOME"); filepath.IsAbs(x) {
		return filepath.Join(x, "talk")
	}
	if h := getenv("HOME"); h != "" {
		return filepath.Join(h, ".local", "state", "talk")
	}
	return ""
}

// defaultCacheDir follows the XDG base directory spec like defaultStateDir; empty when
// neither variable helps (validate then puts it below the state dir).
func defaultCacheDir(getenv func(string) string) string {
	if x := getenv("XDG_CACHE_HOME"); filepath.IsAbs(x) {
		return filepath.Join(x, "talk")
	}
	if h := getenv("HOME"); h != "" {
		return filepath.Join(h, ".cache", "talk")
	}
	return ""
}

// loader carries one Load: where values came from (for messages) and the problems found.
type loader struct {
	getenv func(string) string
	check  bool // false for Peek: decode and apply the environment, judge nothing else
	home   string
	file   string    // the config file read, "" when none
	lines  lineIndex // key path -> line in file
	// envKeys records which environment variables set a key, so that an error about
	// the value names the variable the user has to fix, not a file key they never wrote.
	envKeys map[string][]string
	errs    []error
}

// problem is one thing wrong with the configuration.
type problem struct {
	where string // "file:line", "file" or "TALK_X"; may be empty (defaults)
	key   string
	msg   string
}

func (p problem) Error() string {
	var b strings.Builder
	if p.where != "" {
		b.WriteString(p.where)
		b.WriteString(": ")
	}
	if p.key != "" {
		b.WriteString(p.key)
		b.WriteString(": ")
	}
	b.WriteString(p.msg)
	return b.String()
}

func (l *loader) err() error { return errors.Join(l.errs...) }

// fail records a problem with a key, located by the environment variable that set it, or
// else by the file and line.
func (l *loader) fail(key, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	for k := key; k != ""; {
		if vars, ok := l.envKeys[k]; ok {
			l.errs = append(l.errs, problem{where: strings.Join(vars, ", "), key: key, msg: msg})
			return
		}
		cut := strings.LastIndexAny(k, ".[")
		if cut < 0 {
			break
		}
		k = k[:cut]
	}
	l.errs = append(l.errs, problem{where: l.fileAt(l.lines.lookup(key)), key: key, msg: msg})
}

// failEnv records a problem with an environment variable's own syntax.
func (l *loader) failEnv(name, format string, args ...any) {
	l.errs = append(l.errs, problem{where: name, msg: fmt.Sprintf(format, args...)})
}

func (l *loader) fileAt(line int) string {
	switch {
	case l.file == "":
		return ""
	case line > 0:
		return l.file + ":" + strconv.Itoa(line)
	default:
		return l.file
	}
}

// decode reads the file onto cfg strictly. It reports false when the file cannot be used
// at all (syntax or type errors); unknown keys and a wrong version are recorded but do not
// stop validation, so the user sees every problem in one run. Peek skips those checks.
func (l *loader) decode(data []byte, cfg *Config) bool {
	src := string(data)
	l.lines = indexLines(src)

	// Pass 1: syntax only, so that a syntax error is never mistaken for a bad value.
	var raw map[string]any
	md, err := toml.Decode(src, &raw)
	if err != nil {
		l.errs = append(l.errs, l.decodeError(err, src))
		return false
	}
	unknown := map[string]bool{}
	for _, k := range md.Keys() {
		if msg := checkKey(k); msg != "" && !unknown[k.String()] {
			unknown[k.String()] = true
			l.problemAt(k.String(), msg)
		}
	}

	// Pass 2: onto the defaults, so keys the file leaves out keep their default.
	cfg.Version = 0
	md, err = toml.Decode(src, cfg)
	if err != nil {
		l.errs = append(l.errs, l.decodeError(err, src))
		return false
	}
	for _, k := range md.Undecoded() {
		if !unknown[k.String()] {
			unknown[k.String()] = true
			l.problemAt(k.String(), "unknown key")
		}
	}
	switch {
	case !md.IsDefined("version"):
		l.problemAt("version", fmt.Sprintf("missing; this talkd reads version = %d (add `version = %d` at the top of the file)", SupportedVersion, SupportedVersion))
	case cfg.Version != SupportedVersion:
		l.problemAt("version", fmt.Sprintf("%d is not supported; this talkd reads version = %d", cfg.Version, SupportedVersion))
	}
	return true
}

// problemAt records a problem of the file's key, unless this is a Peek.
func (l *loader) problemAt(key, msg string) {
	if l.check {
		l.errs = append(l.errs, problem{where: l.fileAt(l.lines.lookup(key)), key: key, msg: msg})
	}
}

// badTypeRE matches the decoder's plain type errors: toml: line 3 (last key "server.listen"): ...
var badTypeRE = regexp.MustCompile(`^toml: (?:line (\d+) )?\(last key "(.*?)"\): (.*)$`)

// decodeError turns a decoder error into "file:line: key: problem".
func (l *loader) decodeError(err error, src string) error {
	var pe toml.ParseError
	if errors.As(err, &pe) {
		// The decoder counts an unexpected newline as part of the next line; the byte
		// offset says where the problem really is.
		line := pe.Position.Line
		if pe.Position.Start >= 0 && pe.Position.Start < len(src) {
			line = 1 + strings.Count(src[:pe.Position.Start], "\n")
		}
		return problem{where: l.fileAt(line), key: pe.LastKey, msg: pe.Message}
	}
	if m := badTypeRE.FindStringSubmatch(err.Error()); m != nil {
		line, _ := strconv.Atoi(m[1])
		if line == 0 {
			line = l.lines.lookup(m[2])
		}
		return problem{where: l.fileAt(line), key: m[2], msg: friendlyType(m[3])}
	}
	return problem{where: l.file, msg: strings.TrimPrefix(err.Error(), "toml: ")}
}

// checkKey tells whether a key of the file exists in Config with exactly that spelling
// (the decoder also matches field names case-insensitively, which would let "Listen"
// pass silently). It returns "" for a known key, else the message.
func checkKey(k toml.Key) string {
	t := reflect.TypeOf(Config{})
	for i, seg := range k {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
			t = t.Elem()
		}
		switch {
		case t.Kind() == reflect.Map:
			t = t.Elem()
			continue
		case t.Kind() != reflect.Struct || t == reflect.TypeOf(Duration{}):
			return fmt.Sprintf("unknown key (%s takes a value, not a table)", toml.Key(k[:i]).String())
		}
		var names []string
		found := false
		for j := 0; j < t.NumField(); j++ {
			f := t.Field(j)
			name, _, _ := strings.Cut(f.Tag.Get("toml"), ",")
			if name == "" || name == "-" {
				continue
			}
			names = append(names, name)
			if name == seg {
				t, found = f.Type, true
				break
			}
		}
		if !found {
			if s := closest(seg, names); s != "" {
				return fmt.Sprintf("unknown key (did you mean %q?)", s)
			}
			return "unknown key"
		}
	}
	return ""
}

// closest suggests the known name a misspelt key most likely meant, or "".
func closest(seg string, names []string) string {
	best, bestD := "", 3
	for _, n := range names {
		if strings.EqualFold(n, seg) {
			return n
		}
		if d := editDistance(strings.ToLower(seg), n); d < bestD {
			best, bestD = n, d
		}
	}
	return best
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// applyEnv lays the TALK_* variables over the file. An empty variable counts as unset.
func (l *loader) applyEnv(cfg *Config) {
	if v := strings.TrimSpace(l.getenv(EnvListen)); v != "" {
		if _, _, err := net.SplitHostPort(v); err != nil {
			// A bare host keeps the port of the file or the default.
			host := strings.TrimSuffix(strings.TrimPrefix(v, "["), "]")
			port := "7077"
			if _, p, err := net.SplitHostPort(cfg.Server.Listen); err == nil {
				port = p
			}
			v = net.JoinHostPort(host, port)
		}
		cfg.Server.Listen = v
		l.envKeys["server.listen"] = append(l.envKeys["server.listen"], EnvListen)
	}
	if v := strings.TrimSpace(l.getenv(EnvPort)); v != "" {
		if n, err := strconv.Atoi(v); err != nil || !allDigits(v) || n > 65535 {
			l.failEnv(EnvPort, "%q is not a port number (0-65535; 0 picks a free port)", v)
		} else {
			host := cfg.Server.Listen
			if h, _, err := net.SplitHostPort(cfg.Server.Listen); err == nil {
				host = h
			}
			cfg.Server.Listen = net.JoinHostPort(host, v)
			l.envKeys["server.listen"] = append(l.envKeys["server.listen"], EnvPort)
		}
	}
	if v := strings.TrimSpace(l.getenv(EnvAllowedOrigins)); v != "" {
		origins := []string{}
		ok := true
		if !strings.EqualFold(v, "off") {
			for i, o := range strings.Split(v, ",") {
				o = strings.TrimSpace(o)
				if o == "" {
					l.failEnv(EnvAllowedOrigins, "entry %d is empty (write origins separated by commas, or off to allow none)", i+1)
					ok = false
					continue
				}
				origins = append(origins, o)
			}
		}
		if ok {
			cfg.Server.AllowedOrigins = origins
			l.envKeys["server.allowed_origins"] = []string{EnvAllowedOrigins}
		}
	}
	if v := strings.TrimSpace(l.getenv(EnvProvider)); v != "" {
		cfg.Voice.Provider = v
		l.envKeys["voice.provider"] = []string{EnvProvider}
	}
	if v := strings.TrimSpace(l.getenv(EnvSink)); v != "" {
		cfg.Voice.Sink = v
		l.envKeys["voice.sink"] = []string{EnvSink}
	}
	if v := strings.TrimSpace(l.getenv(EnvStateDir)); v != "" {
		cfg.Server.StateDir = v
		l.envKeys["server.state_dir"] = []string{EnvStateDir}
	}
}

// expandHome turns a leading "~/" into $HOME, as users write paths in a config by hand.
func (l *loader) expandHome(p string) string {
	if l.home != "" && (p == "~" || strings.HasPrefix(p, "~/")) {
		return filepath.Join(l.home, p[1:])
	}
	return p
}

// typeErrRE matches the decoder's type mismatch message.
var typeErrRE = regexp.MustCompile(`^incompatible types: TOML value has type (\S+); destination has type (.+)$`)

// tableErrRE matches the decoder's message for a value where a table belongs.
var tableErrRE = regexp.MustCompile(`^type mismatch for \S+: expected table but found (.+)$`)

// friendlyType rewrites the decoder's type mismatch in the words of TOML, not of Go.
func friendlyType(msg string) string {
	m := typeErrRE.FindStringSubmatch(msg)
	if m == nil {
		if t := tableErrRE.FindStringSubmatch(msg); t != nil {
			m = []string{msg, t[1], "map"}
		} else {
			return msg
		}
	}
	name := func(t string) string {
		switch t {
		case "int64", "integer":
			return "an integer"
		case "float64", "float":
			return "a float"
		case "bool", "boolean":
			return "a boolean (true or false)"
		case "string":
			return "a string (in quotes)"
		case "[]any", "slice":
			return "an array"
		case "[]map[string]any":
			return "an array of tables"
		case "map[string]any", "map":
			return "a table"
		case "primitive (string-like)":
			return "a string (in quotes)"
		case "time.Time", "datetime":
			return "a date-time"
		}
		return t
	}
	return fmt.Sprintf("wrong type: the value is %s, the key takes %s", name(m[1]), name(m[2]))
}
