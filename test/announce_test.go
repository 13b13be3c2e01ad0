package test

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Spoken plan events at the process boundary (issue 8): agents change plans over POST
// /mcp, and the fake provider's log shows what the voice said, in which language and for
// whom; /history shows what the laws did with the announcements that were not spoken.

const announcePlanDE = `[~] #auth: Anmeldung (M)
  - [ ] #auth.token: Token prüfen (S)
  - [ ] #auth.form: Formular (S)
`

const announcePlanEN = `[~] #shop: Shop (M)
  - [ ] #shop.cart: Cart (S)
  - [ ] #shop.pay: Payment (S)
  - [?] #shop.coupon: Coupons (S)
`

// announceDaemon serves announcePlanDE as "de" and announcePlanEN as "en", both with
// announce = true; extra is appended to the config (rules).
func announceDaemon(t *testing.T, extra string, env map[string]string) *daemon {
	t.Helper()
	dir := t.TempDir()
	de, en := filepath.Join(dir, "de.werkbaum"), filepath.Join(dir, "en.werkbaum")
	for p, text := range map[string]string{de: announcePlanDE, en: announcePlanEN} {
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return startDaemon(t, daemonOptions{Env: env, Config: fmt.Sprintf(`version = 1
%s
[[plans]]
key = "de"
path = %q
lang = "de"
announce = true
[[plans]]
key = "en"
path = %q
lang = "en"
announce = true
`, extra, de, en)})
}

// announceWrite calls a write tool on plan with a fresh base.
func announceWrite(t *testing.T, c *mcpClient, plan, tool, requestID string, args map[string]any) map[string]any {
	t.Helper()
	base := c.read(t, plan).Base
	return c.ok(t, tool, writeArgs(plan, base, requestID, args), nil).Map
}

// historyOf returns the daemon's announcement history (newest last or first, as served).
func historyOf(t *testing.T, d *daemon) []map[string]any {
	t.Helper()
	status, body := d.getJSON(t, "/history?limit=100")
	if status != http.StatusOK {
		t.Fatalf("/history: %d %v", status, body)
	}
	var out []map[string]any
	for _, e := range body["entries"].([]any) {
		out = append(out, e.(map[string]any))
	}
	return out
}

// quietlyWaited gives the voice time to speak something it should not.
func quietlyWaited() { time.Sleep(400 * time.Millisecond) }

func TestAnnounceStatusChanges(t *testing.T) {
	t.Parallel()
	// No rate limit on low, so a second announcement of one write could not hide.
	d := announceDaemon(t, "[rules.rate_limit]\nlow = \"0s\"\n", nil)
	c := newMCPClient(d)

	announceWrite(t, c, "de", "werkbaum_set_status", "a1", map[string]any{"id": "auth.token", "status": "done", "agent": "Claude Code"})
	recs := d.waitSpoken(t, 1)
	r := recs[0]
	if r.Text != "Claude Code: Token prüfen ist fertig" || r.Lang != "de" || r.Priority != "low" || r.Agent != "Claude Code" || r.Caller != "local" {
		t.Fatalf("spoken %+v", r)
	}

	// Changes that finish nothing are not announced.
	announceWrite(t, c, "de", "werkbaum_set_status", "a2", map[string]any{"id": "auth.form", "status": "progress", "agent": "Claude Code"})
	announceWrite(t, c, "de", "werkbaum_set_size", "a3", map[string]any{"id": "auth.form", "size": "M", "agent": "Claude Code"})
	quietlyWaited()
	if recs := d.spoken(t); len(recs) != 1 {
		t.Fatalf("spoken %d times, want once: %+v", len(recs), recs)
	}

	// One write that finishes two nodes is one announcement naming both.
	text := strings.Replace(strings.Replace(announcePlanEN, "[ ] #shop.cart", "[x] #shop.cart", 1), "[ ] #shop.pay", "[x] #shop.pay", 1)
	announceWrite(t, c, "en", "werkbaum_write", "b1", map[string]any{"text": text, "agent": "Codex"})
	recs = d.waitSpoken(t, 2)
	if r := recs[1]; r.Text != "Codex finished Cart and Payment" || r.Lang != "en" || r.Agent != "Codex" {
		t.Fatalf("spoken %+v", r)
	}

	// In production and discarded.
	announceWrite(t, c, "en", "werkbaum_set_status", "b2", map[string]any{"id": "shop.cart", "status": "prod", "allowProd": true, "agent": "Codex"})
	recs = d.waitSpoken(t, 3)
	if r := recs[2]; r.Text != "Codex: Cart is in production" {
		t.Fatalf("spoken %+v", r)
	}
	announceWrite(t, c, "de", "werkbaum_remove_node", "a4", map[string]any{"id": "auth.form", "discard": true, "agent": "Claude Code"})
	recs = d.waitSpoken(t, 4)
	if r := recs[3]; r.Text != "Claude Code: Formular ist verworfen" || r.Lang != "de" {
		t.Fatalf("spoken %+v", r)
	}
	quietlyWaited()
	if recs := d.spoken(t); len(recs) != 4 {
		t.Fatalf("spoken %d times, want 4: %+v", len(recs), recs)
	}
}

func TestAnnounceWhileMuted(t *testing.T) {
	t.Parallel()
	d := announceDaemon(t, "", nil)
	c := newMCPClient(d)
	if status, body := d.postJSON(t, "/mute", map[string]any{"for": "1h"}, nil); status != http.StatusOK || body["muted"] != true {
		t.Fatalf("mute: %d %v", status, body)
	}
	announceWrite(t, c, "de", "werkbaum_set_status", "m1", map[string]any{"id": "auth.token", "status": "done", "agent": "Claude Code"})
	quietlyWaited()
	if recs := d.spoken(t); len(recs) != 0 {
		t.Fatalf("spoken while muted: %+v", recs)
	}
	// The announcement went to the laws and was muted there.
	found := false
	for _, e := range historyOf(t, d) {
		if e["text"] == "Claude Code: Token prüfen ist fertig" {
			found = true
			if e["outcome"] != "muted" || e["priority"] != "low" {
				t.Fatalf("history entry %v, want outcome muted, priority low", e)
			}
		}
	}
	if !found {
		t.Fatalf("no announcement in the history: %v", historyOf(t, d))
	}
}

func TestAnnounceInQuietHours(t *testing.T) {
	t.Parallel()
	// A stand-in notify-send records what it is asked to show.
	bin := t.TempDir()
	shown := filepath.Join(bin, "shown.txt")
	script := "#!/bin/sh\nprintf '%s\\n' \"$@\" >> '" + shown + "'\n"
	if err := os.WriteFile(filepath.Join(bin, "notify-send"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	d := announceDaemon(t, "[rules]\nquiet_hours = [\""+quietAroundNow()+"\"]\nquiet_notify = true\n",
		utcEnv(map[string]string{"PATH": bin + string(os.PathListSeparator) + os.Getenv("PATH")}))
	c := newMCPClient(d)
	announceWrite(t, c, "en", "werkbaum_set_status", "q1", map[string]any{"id": "shop.pay", "status": "done", "agent": "Codex"})
	deadline := time.Now().Add(10 * time.Second)
	for {
		b, _ := os.ReadFile(shown)
		if strings.Contains(string(b), "Codex finished Payment") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no desktop notification for the discarded announcement (got %q); log:\n%s", b, d.logs())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if recs := d.spoken(t); len(recs) != 0 {
		t.Fatalf("spoken inside quiet hours: %+v", recs)
	}
	found := false
	for _, e := range historyOf(t, d) {
		if e["text"] == "Codex finished Payment" {
			found = e["outcome"] == "discarded" && e["reason"] == "quiet_hours"
		}
	}
	if !found {
		t.Fatalf("history lacks the discarded announcement: %v", historyOf(t, d))
	}
}
