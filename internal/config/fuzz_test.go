package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzLoad: any file content either loads into a valid configuration or fails with an
// error that names the file; it never panics.
func FuzzLoad(f *testing.F) {
	f.Add([]byte(Example()))
	for _, s := range []string{
		"version = 1\n", "version = 1\n[server]\nlisten = \"127.0.0.1:0\"\n",
		"version = 1\n[rules]\nquiet_hours = [\"22:00-07:00\"]\n[rules.rate_limit]\nlow = \"1s\"\n",
		"version = 1\n[[voice.commands]]\nname = \"x\"\nargv = [\"x\", \"{out}\"]\n",
		"version = 1\n[[clients]]\nid = \"a\"\ntoken_env = \"T\"\n", "version = \"1\"\n", "[server\n", "\x00",
	} {
		f.Add([]byte(s))
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(dir, "config.toml")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		env := map[string]string{"TALK_CONFIG": path, "HOME": dir}
		cfg, err := Load(func(k string) string { return env[k] })
		if err != nil {
			if !strings.Contains(err.Error(), path) && !strings.Contains(err.Error(), "TALK_") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		if cfg.Version != 1 || cfg.Server.Listen == "" || cfg.Rules.QueueSize < 1 || cfg.Voice.Lang == "" {
			t.Fatalf("loaded an incomplete configuration: %+v", cfg)
		}
	})
}
