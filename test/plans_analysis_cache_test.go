package test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// analysisCachePlan has non-ASCII people, a dependency and a choice, so its analysis has
// warnings, a path and loads to get right.
const analysisCachePlan = `%% analysis cache plan
- [ ] #root: Root & <Wurzel>
  - [ ] #a: Alpha "quoted" (S) @jörg
  - [ ] #b: Beta (M) @Müller :#a
  - [ ] #c: Gamma (XS)
  - [ ] #d: Delta (L) @jörg
`

// analysisCache is the analysis_cache object of /status.
func analysisCache(t *testing.T, d *daemon) map[string]any {
	t.Helper()
	status, st := d.getJSON(t, "/status")
	if status != 200 {
		t.Fatalf("/status: %d %v", status, st)
	}
	ac, ok := st["analysis_cache"].(map[string]any)
	if !ok {
		t.Fatalf("/status has no analysis_cache: %v", st)
	}
	return ac
}

func cacheCount(ac map[string]any, name string) int {
	n, _ := ac[name].(float64)
	return int(n)
}

// TestAnalysisCacheAcrossRestarts: a restarted daemon answers werkbaum_inspect of a plan
// it analysed before from disk, byte for byte the first daemon's answer, without
// analysing it; after an edit outside talkd the first inspect analyses the new text and
// answers what a daemon without the cache answers; a damaged entry is a miss with a log
// line and the right answer.
func TestAnalysisCacheAcrossRestarts(t *testing.T) {
	t.Parallel()
	d, paths := startPlanDaemon(t, planFile{Key: "p", Text: analysisCachePlan})
	full := `{"plan":"p","detail":"full"}`
	sub := `{"plan":"p","id":"#b","detail":"full"}`
	first, view := inspectRaw(t, d, full, nil, "")
	if nodeStatus(t, view, "a") == "done" || view["base"].(map[string]any)["checksum"] != sha([]byte(analysisCachePlan)) {
		t.Fatalf("first inspect: %.400s", first)
	}
	firstSub, _ := inspectRaw(t, d, sub, nil, "")
	if ac := analysisCache(t, d); cacheCount(ac, "from_disk") != 0 || cacheCount(ac, "misses") < 2 {
		t.Fatalf("a fresh daemon's cache: %v", ac)
	}
	if code := d.terminate(t); code != 0 {
		t.Fatalf("talkd exited %d", code)
	}
	dir := filepath.Join(d.Home, ".cache", "talk", "analyses")
	entries, _ := filepath.Glob(filepath.Join(dir, "*.analysis"))
	if len(entries) < 2 {
		t.Fatalf("after the stop %d entries in %s, want the full view and the subtree", len(entries), dir)
	}

	// Restarted: both answers come from disk, nothing is analysed.
	d2 := startDaemon(t, daemonOptions{Config: plansConfig(paths), Home: d.Home})
	if got, _ := inspectRaw(t, d2, full, nil, ""); got != first {
		t.Fatalf("the restarted daemon's answer differs:\n%.400s\n%.400s", got, first)
	}
	if got, _ := inspectRaw(t, d2, sub, nil, ""); got != firstSub {
		t.Fatalf("the restarted daemon's subtree differs:\n%.400s\n%.400s", got, firstSub)
	}
	ac := analysisCache(t, d2)
	if cacheCount(ac, "from_disk") < 2 || cacheCount(ac, "misses") != 0 || cacheCount(ac, "corrupt") != 0 {
		t.Fatalf("after the restart: %v, want both answers from disk and no analysis", ac)
	}
	fromDisk := cacheCount(ac, "from_disk")

	// An edit outside talkd: the first inspect is the new text's, analysed.
	edited := strings.Replace(analysisCachePlan, "[ ] #a:", "[x] #a:", 1)
	replaceFile(t, paths["p"], edited)
	afterEdit, view := inspectRaw(t, d2, full, nil, "")
	if nodeStatus(t, view, "a") != "done" || view["base"].(map[string]any)["checksum"] != sha([]byte(edited)) {
		t.Fatalf("after the edit: %.400s", afterEdit)
	}
	if ac := analysisCache(t, d2); cacheCount(ac, "from_disk") != fromDisk || cacheCount(ac, "misses") < 1 {
		t.Fatalf("after the edit: %v, want a miss and nothing more from disk", ac)
	}
	// What a daemon without the cache answers on the same file.
	off := startDaemon(t, daemonOptions{Config: plansConfig(paths) + "[server]\nanalysis_cache_bytes = 0\n"})
	plain, _ := inspectRaw(t, off, full, nil, "")
	if withoutRevision(plain) != withoutRevision(afterEdit) || !strings.Contains(plain, `"revision":1`) {
		t.Fatalf("the analysis after the edit differs from a daemon without the cache:\n%.400s\n%.400s", afterEdit, plain)
	}
	if _, st := off.getJSON(t, "/status"); st["analysis_cache"] != nil {
		t.Errorf("analysis_cache = 0 still shows a cache: %v", st["analysis_cache"])
	}
	if _, err := os.Stat(filepath.Join(off.Home, ".cache", "talk", "analyses")); err == nil {
		t.Error("analysis_cache_bytes = 0 still made the cache's folder")
	}
	off.terminate(t)
	if code := d2.terminate(t); code != 0 {
		t.Fatalf("talkd exited %d", code)
	}
	// The stop says what the cache did, for a user reading the log.
	if want := fmt.Sprintf(`msg="analysis cache closed" from_disk=%d`, fromDisk); !strings.Contains(d2.logs(), want) {
		t.Fatalf("no %s in the log:\n%s", want, d2.logs())
	}

	// Every entry damaged in the middle of its answer: misses, logged, the right answer.
	entries, _ = filepath.Glob(filepath.Join(dir, "*.analysis"))
	for _, e := range entries {
		b := readFile(t, e)
		b[len(b)-len(b)/4] ^= 0x01
		if err := os.WriteFile(e, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	d3 := startDaemon(t, daemonOptions{Config: plansConfig(paths), Home: d.Home})
	if got, _ := inspectRaw(t, d3, full, nil, ""); got != afterEdit {
		t.Fatalf("the answer after damaged entries differs:\n%.400s\n%.400s", got, afterEdit)
	}
	ac = analysisCache(t, d3)
	if cacheCount(ac, "from_disk") != 0 || cacheCount(ac, "corrupt") < 1 || cacheCount(ac, "misses") < 1 {
		t.Fatalf("after damaged entries: %v, want a corrupt entry, a miss, nothing from disk", ac)
	}
	if logs := d3.logs(); !strings.Contains(logs, "analysis cache: entry unusable") {
		t.Fatalf("no log line for the damaged entry:\n%s", logs)
	}
}

// revisionRe matches the base's revision in an answer and in its escaped text copy.
var revisionRe = regexp.MustCompile(`\\?"revision\\?":\d+`)

// withoutRevision is an inspect answer with its revision left out: another daemon's
// state database numbers the same text differently.
func withoutRevision(raw string) string { return revisionRe.ReplaceAllString(raw, "revision") }

// replaceFile replaces a file as an editor that saves safely does, so the plan
// follower never reads half a text.
func replaceFile(t *testing.T, path, text string) {
	t.Helper()
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// TestCheckConfigAnalysisCache: talkd --check-config accepts the cache's keys and names
// the key of a bad size.
func TestCheckConfigAnalysisCache(t *testing.T) {
	t.Parallel()
	talkd, _ := binaries(t)
	home := t.TempDir()
	dir := filepath.Join(home, ".config", "talk")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	check := func(body string) (string, int) {
		if err := os.WriteFile(filepath.Join(dir, "config.toml"), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(talkd, "--check-config")
		cmd.Env = daemonEnv(home, nil)
		out, _ := cmd.CombinedOutput()
		return string(out), cmd.ProcessState.ExitCode()
	}
	if out, code := check("version = 1\n[server]\ncache_dir = \"~/cache\"\nanalysis_cache_bytes = 0\n"); code != 0 {
		t.Errorf("the cache's keys: %d %q", code, out)
	}
	if out, code := check("version = 1\n[server]\nanalysis_cache_bytes = -1\n"); code != 1 || !strings.Contains(out, "server.analysis_cache_bytes") {
		t.Errorf("a negative size: %d %q", code, out)
	}
}
