package main

import (
	"slices"
	"testing"

	"talkd/internal/config"
)

// The settings a running daemon cannot take are named, and the configuration in force
// keeps their old values, so the next reload compares against what really runs.
func TestRestartNeeded(t *testing.T) {
	old := &config.Config{}
	old.Server.Listen, old.Server.StateDir, old.Server.MaxBodyBytes = "127.0.0.1:7077", "/s/old", 65536
	next := *old
	next.Server.AllowedOrigins = []string{"https://a.example"}
	if got := restartNeeded(old, &next); len(got) != 0 {
		t.Errorf("only live settings changed, restart needed for %v", got)
	}
	next.Server.Listen, next.Server.StateDir, next.Server.MaxBodyBytes = "127.0.0.1:9999", "/s/new", 1<<20
	next.Server.CacheDir, next.Server.AnalysisCacheBytes = "/c/new", 1<<20
	got := restartNeeded(old, &next)
	if want := []string{"server.listen", "server.state_dir", "server.max_body_bytes", "server.cache_dir", "server.analysis_cache_bytes"}; !slices.Equal(got, want) {
		t.Errorf("restart needed for %v, want %v", got, want)
	}
	kept := keepFixed(old, &next)
	if kept.Server.Listen != old.Server.Listen || kept.Server.StateDir != old.Server.StateDir || kept.Server.MaxBodyBytes != old.Server.MaxBodyBytes ||
		kept.Server.CacheDir != old.Server.CacheDir || kept.Server.AnalysisCacheBytes != old.Server.AnalysisCacheBytes {
		t.Errorf("keepFixed: %+v", kept.Server)
	}
	if len(kept.Server.AllowedOrigins) != 1 || next.Server.Listen != "127.0.0.1:9999" {
		t.Errorf("keepFixed lost a live setting or changed its argument: %+v / %+v", kept.Server, next.Server)
	}
}
