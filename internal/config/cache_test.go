package config

import (
	"path/filepath"
	"strings"
	"testing"
)

func TestCacheDirFollowsXDGAndFallsBackToTheStateDir(t *testing.T) {
	dir, e := home(t)
	if got := mustLoad(t, e).Server.CacheDir; got != filepath.Join(dir, ".cache", "talk") {
		t.Errorf("HOME only: cache_dir = %q", got)
	}
	xdg := filepath.Join(dir, "xdg-cache")
	if got := mustLoad(t, e.with("XDG_CACHE_HOME", xdg)).Server.CacheDir; got != filepath.Join(xdg, "talk") {
		t.Errorf("XDG_CACHE_HOME: cache_dir = %q", got)
	}
	if got := mustLoad(t, e.with("XDG_CACHE_HOME", "relative")).Server.CacheDir; got != filepath.Join(dir, ".cache", "talk") {
		t.Errorf("relative XDG_CACHE_HOME is not ignored: cache_dir = %q", got)
	}
	state := filepath.Join(dir, "state")
	c := mustLoad(t, env{"TALK_STATE_DIR": state})
	if c.Server.CacheDir != filepath.Join(state, "cache") {
		t.Errorf("no HOME: cache_dir = %q, want below the state dir", c.Server.CacheDir)
	}
	if c.AnalysisCacheDir() != filepath.Join(state, "cache", "analyses") || c.Server.AnalysisCacheBytes != DefaultAnalysisCacheBytes {
		t.Errorf("analysis cache: %q, %d bytes", c.AnalysisCacheDir(), c.Server.AnalysisCacheBytes)
	}
}

func TestCacheKeysFromTheFile(t *testing.T) {
	dir, e := home(t)
	f := writeFile(t, filepath.Join(dir, "c.toml"), "version = 1\n[server]\ncache_dir = \"~/c\"\nanalysis_cache_bytes = 0\n")
	c := mustLoad(t, e.with("TALK_CONFIG", f))
	if c.Server.CacheDir != filepath.Join(dir, "c") || c.Server.AnalysisCacheBytes != 0 {
		t.Errorf("cache_dir %q, analysis_cache_bytes %d", c.Server.CacheDir, c.Server.AnalysisCacheBytes)
	}
	f = writeFile(t, filepath.Join(dir, "neg.toml"), "version = 1\n[server]\nanalysis_cache_bytes = -1\n")
	if msg := loadErr(t, e.with("TALK_CONFIG", f)); !strings.Contains(msg, "server.analysis_cache_bytes") || !strings.Contains(msg, "negative") {
		t.Errorf("negative size: %s", msg)
	}
}
