package test

import (
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCLIPlanOpen: talk plan open KEY prints the editor's link with ?live= for the plan's
// document (the published editor by default, [editor] url of the config, or --editor),
// says on stderr when the config does not let that editor's pages in, opens the link with
// --browser through xdg-open, and refuses an unknown key or misplaced flags.
func TestCLIPlanOpen(t *testing.T) {
	t.Parallel()
	d, _ := startPlanDaemon(t, planFile{Key: "joerg-plan", Text: docPlanText})
	doc := d.URL + docPathOf(t, d, newMCPClient(d), "joerg-plan")
	live := "?live=" + url.QueryEscape(doc)

	// No config: the published editor, and a hint how to let it in.
	r := talkAt(t, d, "", "plan", "open", "joerg-plan")
	r.want(t, 0, "plan open")
	if r.stdout != "https://werkbaum.javagil.de/"+live+"\n" {
		t.Errorf("plan open printed %q, want the published editor with %s", r.stdout, live)
	}
	if !strings.Contains(r.stderr, `origins = ["https://werkbaum.javagil.de"]`) || !strings.Contains(r.stderr, "talk reload") {
		t.Errorf("no hint how to let the editor in: %q", r.stderr)
	}

	// The config names the other published editor and lists its origin: no hint.
	cfg := filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(cfg, []byte("version = 1\n[editor]\nurl = \"https://mhoennig.github.io/werkbaum/\"\norigins = [\"https://mhoennig.github.io\"]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"TALK_URL": d.URL, "TALK_CONFIG": cfg}
	r = talkRun(t, env, "", "plan", "open", "joerg-plan")
	r.want(t, 0, "plan open with [editor] url")
	if r.stdout != "https://mhoennig.github.io/werkbaum/"+live+"\n" || r.stderr != "" {
		t.Errorf("plan open with the config: stdout %q stderr %q", r.stdout, r.stderr)
	}
	// --editor beats the config; --json names every part.
	r = talkRun(t, env, "", "--json", "plan", "open", "--editor", "http://localhost:5173/?lang=de", "joerg-plan")
	r.want(t, 0, "plan open --editor --json")
	m := r.jsonLine(t)
	if m["url"] != "http://localhost:5173/?lang=de&live="+url.QueryEscape(doc) || m["document"] != doc || m["key"] != "joerg-plan" {
		t.Errorf("--json: %v", m)
	}

	// --browser hands the link to xdg-open.
	bin := t.TempDir()
	got := filepath.Join(bin, "opened")
	script := "#!/bin/sh\nprintf '%s' \"$1\" > " + got + "\n"
	if err := os.WriteFile(filepath.Join(bin, "xdg-open"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	r = talkRun(t, map[string]string{"TALK_URL": d.URL, "TALK_CONFIG": cfg, "PATH": bin}, "", "plan", "open", "--browser", "joerg-plan")
	r.want(t, 0, "plan open --browser")
	if opened := string(readFile(t, got)); opened != "https://mhoennig.github.io/werkbaum/"+live {
		t.Errorf("xdg-open got %q", opened)
	}
	// Without an opener: the link is printed, exit 1 saying so.
	r = talkRun(t, map[string]string{"TALK_URL": d.URL, "TALK_CONFIG": cfg, "PATH": t.TempDir()}, "", "plan", "open", "--browser", "joerg-plan")
	r.want(t, 1, "plan open --browser without xdg-open")
	if !strings.Contains(r.stdout, live) || !strings.Contains(r.stderr, "xdg-open is not installed") {
		t.Errorf("without xdg-open: stdout %q stderr %q", r.stdout, r.stderr)
	}

	// A plan on a document server (here: the first talkd's document, as a remote plan of a
	// second talkd) opens that server's document; its CORS is not this talkd's, so no hint.
	remote := startDaemon(t, daemonOptions{Config: "version = 1\n[[plans]]\nkey = \"remote\"\nurl = \"" + doc + "\"\n"})
	r = talkAt(t, remote, "", "plan", "open", "remote")
	r.want(t, 0, "plan open of a remote plan")
	if r.stdout != "https://werkbaum.javagil.de/"+live+"\n" || r.stderr != "" {
		t.Errorf("remote plan: stdout %q stderr %q", r.stdout, r.stderr)
	}

	// Refusals.
	r = talkAt(t, d, "", "plan", "open", "nope")
	r.want(t, 4, "plan open of an unknown key")
	if !strings.Contains(r.stderr, `no plan "nope"`) {
		t.Errorf("unknown key: %q", r.stderr)
	}
	talkAt(t, d, "", "plan", "show", "--browser", "joerg-plan").want(t, 2, "--browser on plan show")
	talkAt(t, d, "", "plan", "open").want(t, 2, "plan open without a key")
	r = talkRun(t, env, "", "plan", "open", "--editor", "ftp://x", "joerg-plan")
	r.want(t, 2, "plan open with a bad --editor")
	if !strings.Contains(r.stderr, "http(s) URL") {
		t.Errorf("bad --editor: %q", r.stderr)
	}
}
