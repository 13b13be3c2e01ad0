package config

import (
	"encoding/json"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

// The example loads, and what it states equals the embedded defaults, so the documented
// defaults cannot drift from the real ones.
func TestExampleIsTheDefaults(t *testing.T) {
	dir, e := home(t)
	f := writeFile(t, filepath.Join(dir, "example.toml"), Example())
	fromExample := mustLoad(t, e.with("TALK_CONFIG", f))
	fromDefaults := mustLoad(t, e)
	a, _ := json.MarshalIndent(fromExample, "", " ")
	b, _ := json.MarshalIndent(fromDefaults, "", " ")
	if string(a) != string(b) {
		t.Errorf("example.toml differs from the defaults:\nexample:\n%s\ndefaults:\n%s", a, b)
	}
}

// Every key of Config is documented in the example (set, or shown in a comment).
func TestExampleDocumentsEveryKey(t *testing.T) {
	ex := Example()
	for _, key := range tomlKeys(reflect.TypeOf(Config{}), "") {
		parts := strings.Split(key, ".")
		last := regexp.QuoteMeta(parts[len(parts)-1])
		re := regexp.MustCompile(`(?m)^#?\s*(` + last + `\s*=|\[\[?` + regexp.QuoteMeta(key) + `\]\]?)`)
		if !re.MatchString(ex) {
			t.Errorf("example.toml does not document %s", key)
		}
	}
	for _, envVar := range []string{EnvConfig, EnvListen, EnvPort, EnvAllowedOrigins, EnvProvider, EnvSink, EnvStateDir} {
		if !strings.Contains(ex, envVar) {
			t.Errorf("example.toml does not mention %s", envVar)
		}
	}
}

// tomlKeys lists the dotted key paths of a struct type.
func tomlKeys(t reflect.Type, prefix string) []string {
	var keys []string
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name := f.Tag.Get("toml")
		if name == "" || name == "-" {
			continue
		}
		full := prefix + name
		keys = append(keys, full)
		ft := f.Type
		for ft.Kind() == reflect.Pointer || ft.Kind() == reflect.Slice {
			ft = ft.Elem()
		}
		if ft.Kind() == reflect.Struct && ft != reflect.TypeOf(Duration{}) {
			keys = append(keys, tomlKeys(ft, full+".")...)
		}
	}
	return keys
}

func TestLineIndex(t *testing.T) {
	src := `# comment
version = 1
[server]
listen = "x"
"quoted key" = 1
[voice]
cleanup.urls = false
text = """
fake = "inside a multi-line string"
"""
lang = "de"
[[plans]]
key = "a"
[[plans]]
key = "b"
[ rules . rate_limit ]
low = "1s"
`
	idx := indexLines(src)
	tests := []struct {
		key  string
		want int
	}{
		{"version", 2},
		{"server", 3},
		{"server.listen", 4},
		{"server.quoted key", 5},
		{"voice.cleanup.urls", 7},
		{"voice.cleanup", 6}, // falls back to the table
		{"voice.fake", 6},    // not a key: it is inside a string
		{"voice.lang", 11},
		{"plans.key", 13},
		{"plans[0].key", 13},
		{"plans[1].key", 15},
		{"plans[1].path", 14}, // falls back to the entry's header
		{"rules.rate_limit.low", 17},
		{"server.listen[3]", 4},
		{"nothing", 0},
	}
	for _, tt := range tests {
		if got := idx.lookup(tt.key); got != tt.want {
			t.Errorf("lookup(%q) = %d, want %d", tt.key, got, tt.want)
		}
	}
}
