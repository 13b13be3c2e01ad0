package test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The configuration reload (SIGHUP and talk reload): what changes live, what a broken
// file does, and that nothing is lost while reloads happen under load.

// writeConfig replaces the daemon's config file (atomically, as an editor would).
func (d *daemon) writeConfig(t testing.TB, text string) {
	t.Helper()
	path := filepath.Join(d.Home, ".config", "talk", "config.toml")
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// sighup sends SIGHUP and waits until the daemon logged the outcome of one more reload
// ("configuration reloaded" or "configuration reload refused") than before.
func (d *daemon) sighup(t testing.TB) string {
	t.Helper()
	before := reloadOutcomes(d.logs())
	if err := d.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(15 * time.Second)
	for {
		logs := d.logs()
		if n := reloadOutcomes(logs); n > before {
			lines := strings.Split(strings.TrimSpace(logs), "\n")
			for i := len(lines) - 1; i >= 0; i-- {
				if strings.Contains(lines[i], "configuration reload") {
					return lines[i]
				}
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no reload outcome logged after SIGHUP; log:\n%s", logs)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func reloadOutcomes(logs string) int {
	return strings.Count(logs, `msg="configuration reloaded"`) + strings.Count(logs, `msg="configuration reload refused`)
}

func bearer(tok string) map[string]string { return map[string]string{"Authorization": "Bearer " + tok} }

// SIGHUP with a new client and a new voice.lang: the old token is refused, the new one
// admitted with exactly its grants, and its announcement spoken in the new language.
func TestReloadSIGHUPTokensAndGrants(t *testing.T) {
	tokA, tokB := "tok-a-"+strings.Repeat("a", 34), "tok-b-"+strings.Repeat("b", 34)
	d := startDaemon(t, daemonOptions{
		Config: "version = 1\n[[clients]]\nid = \"alpha\"\ntoken_env = \"TOK_A\"\nspeak = true\ncontrol = true\n",
		Env:    map[string]string{"TOK_A": tokA, "TOK_B": tokB},
	})
	if st, _ := d.postJSON(t, "/speak", map[string]any{"text": "vorher für @jörg"}, bearer(tokA)); st != http.StatusAccepted {
		t.Fatalf("alpha before the reload: %d", st)
	}
	if st, _ := d.postJSON(t, "/speak", map[string]any{"text": "x"}, bearer(tokB)); st != http.StatusUnauthorized {
		t.Fatalf("bravo before the reload: %d, want 401", st)
	}

	d.writeConfig(t, "version = 1\n[voice]\nlang = \"de\"\n[[clients]]\nid = \"bravo\"\ntoken_env = \"TOK_B\"\nspeak = true\n")
	if line := d.sighup(t); !strings.Contains(line, `msg="configuration reloaded"`) {
		t.Fatalf("SIGHUP: %s", line)
	}
	if st, _ := d.postJSON(t, "/speak", map[string]any{"text": "x"}, bearer(tokA)); st != http.StatusUnauthorized {
		t.Errorf("alpha's token after the reload: %d, want 401", st)
	}
	st, ans := d.postJSON(t, "/speak", map[string]any{"text": "nachher für @Müller", "priority": "high"}, bearer(tokB))
	if st != http.StatusAccepted {
		t.Fatalf("bravo after the reload: %d %v", st, ans)
	}
	if st, _ := d.postJSON(t, "/mute", map[string]any{}, bearer(tokB)); st != http.StatusForbidden {
		t.Errorf("bravo has no control grant, /mute: %d, want 403", st)
	}
	recs := d.waitSpoken(t, 2)
	if recs[0].Caller != "alpha" || recs[1].Caller != "bravo" || recs[1].ID != ans["id"] {
		t.Errorf("spoken: %+v, want alpha's then bravo's %v", recs, ans["id"])
	}
	if recs[0].Lang != "en" || recs[1].Lang != "de" {
		t.Errorf("languages %q, %q: want the default en before the reload and the new voice.lang de after", recs[0].Lang, recs[1].Lang)
	}
}

// quietWindowNow is a quiet-hours window around the current local time.
func quietWindowNow() string {
	now := time.Now()
	return now.Add(-time.Hour).Format("15:04") + "-" + now.Add(time.Hour).Format("15:04")
}

// talk reload applies new quiet hours and rate limits; the next announcement is judged by
// them.
func TestReloadRulesWithTalkReload(t *testing.T) {
	base := "version = 1\n[rules]\nrate_limit = { normal = \"0s\" }\n"
	d := startDaemon(t, daemonOptions{Config: base})
	for i := range 2 {
		if st, ans := d.postJSON(t, "/speak", map[string]any{"text": fmt.Sprint("eins ", i)}, nil); st != http.StatusAccepted {
			t.Fatalf("speak %d without a normal rate limit: %d %v", i, st, ans)
		}
	}

	d.writeConfig(t, "version = 1\n[rules]\nrate_limit = { normal = \"1h\" }\n")
	r := talkAt(t, d, "", "reload")
	r.want(t, 0, "talk reload")
	if !strings.Contains(r.stdout, "reloaded ") {
		t.Errorf("talk reload printed %q", r.stdout)
	}
	st, ans := d.postJSON(t, "/speak", map[string]any{"text": "zu früh"}, nil)
	if st != http.StatusOK || ans["reason"] != "rate_limit" {
		t.Errorf("normal announcement under the new 1h interval: %d %v, want discarded: rate_limit", st, ans)
	}

	d.writeConfig(t, fmt.Sprintf("version = 1\n[rules]\nquiet_hours = [%q]\nrate_limit = { normal = \"0s\" }\n", quietWindowNow()))
	talkAt(t, d, "", "reload").want(t, 0, "talk reload")
	st, ans = d.postJSON(t, "/speak", map[string]any{"text": "leise", "priority": "high"}, nil)
	if st != http.StatusOK || ans["reason"] != "quiet_hours" {
		t.Errorf("announcement in the new quiet hours: %d %v, want discarded: quiet_hours", st, ans)
	}
	if st, ans := d.postJSON(t, "/speak", map[string]any{"text": "dringend", "now": true}, nil); st != http.StatusAccepted {
		t.Errorf("now in quiet hours before now_passes_quiet_hours = false: %d %v", st, ans)
	}
	d.writeConfig(t, fmt.Sprintf("version = 1\n[rules]\nquiet_hours = [%q]\nnow_passes_quiet_hours = false\nrate_limit = { normal = \"0s\" }\n", quietWindowNow()))
	talkAt(t, d, "", "reload").want(t, 0, "talk reload")
	if st, ans := d.postJSON(t, "/speak", map[string]any{"text": "noch dringender", "now": true}, nil); st != http.StatusOK || ans["reason"] != "quiet_hours" {
		t.Errorf("now in quiet hours after now_passes_quiet_hours = false: %d %v", st, ans)
	}
	d.writeConfig(t, fmt.Sprintf("version = 1\n[rules]\nquiet_hours = [%q]\nrate_limit = { normal = \"0s\" }\n", quietWindowNow()))
	talkAt(t, d, "", "reload").want(t, 0, "talk reload")
	_, status := d.getJSON(t, "/status")
	if q, _ := status["quiet_hours"].(map[string]any); q["active"] != true {
		t.Errorf("/status after the reload: quiet_hours %v", status["quiet_hours"])
	}
	if got := len(d.waitSpoken(t, 3)); got != 3 {
		t.Errorf("%d spoken, want the 2 admitted before the reloads and the now one", got)
	}
}

// A broken file changes nothing: the error is logged naming the file and the problem,
// talk reload exits 1 with it, and the daemon goes on serving under the old config.
func TestReloadBrokenConfigKeepsTheOld(t *testing.T) {
	tok := "tok-k-" + strings.Repeat("k", 34)
	good := "version = 1\n[[clients]]\nid = \"keeper\"\ntoken_env = \"TOK_K\"\nspeak = true\ncontrol = true\n"
	d := startDaemon(t, daemonOptions{Config: good, Env: map[string]string{"TOK_K": tok}})
	cfgPath := filepath.Join(d.Home, ".config", "talk", "config.toml")

	d.writeConfig(t, good+"[rules]\nqueue_size = 0\n")
	r := talkRun(t, map[string]string{"TALK_URL": d.URL, "TALK_TOKEN": tok}, "", "reload")
	r.want(t, 1, "talk reload of a broken config")
	if !strings.Contains(r.stderr, "queue_size") || !strings.Contains(r.stderr, "old one stays") {
		t.Errorf("talk reload's message %q does not name the problem", r.stderr)
	}
	logs := d.logs()
	if !strings.Contains(logs, "level=ERROR") || !strings.Contains(logs, `msg="configuration reload refused`) || !strings.Contains(logs, "queue_size") || !strings.Contains(logs, cfgPath) {
		t.Errorf("no error line naming %s and queue_size; log:\n%s", cfgPath, logs)
	}

	// SIGHUP with a file that does not parse: the same.
	d.writeConfig(t, "version = 1\n[[clients]\nid = \n")
	if line := d.sighup(t); !strings.Contains(line, "level=ERROR") || !strings.Contains(line, cfgPath) {
		t.Errorf("SIGHUP with a syntax error: %s", line)
	}
	if st, _ := d.postJSON(t, "/speak", map[string]any{"text": "noch da"}, bearer(tok)); st != http.StatusAccepted {
		t.Errorf("the old token after two refused reloads: %d", st)
	}
	_, st := d.getJSON(t, "/healthz")
	if st == nil {
		t.Error("no /healthz answer")
	}
	d.waitSpoken(t, 1)

	// Without the control grant, talk reload is refused by the admission (exit 4).
	d.writeConfig(t, good)
	talkRun(t, map[string]string{"TALK_URL": d.URL}, "", "reload").want(t, 4, "talk reload without a token")
}

// A daemon started without plans gets its first plan from a reload: the plan tools and
// the plan work; a changed setting that needs a restart is named.
func TestReloadAddsTheFirstPlan(t *testing.T) {
	d := startDaemon(t, daemonOptions{Config: "version = 1\n"})
	c := newMCPClient(d)
	if a, err := c.call(context.Background(), "plans_list", map[string]any{}); err == nil && !a.IsError {
		t.Fatalf("plans_list without plans succeeded: %s", a.Structured)
	}
	plan := filepath.Join(t.TempDir(), "neu.werkbaum")
	if err := os.WriteFile(plan, []byte(sharedPlan), 0o644); err != nil {
		t.Fatal(err)
	}
	d.writeConfig(t, plansConfig(map[string]string{"neu": plan})+"[server]\nmax_body_bytes = 131072\n")
	r := talkAt(t, d, "", "reload")
	r.want(t, 0, "talk reload")
	if !strings.Contains(r.stdout, "server.max_body_bytes changed but needs a restart") {
		t.Errorf("talk reload did not name the setting that needs a restart: %q", r.stdout)
	}
	if !strings.Contains(d.logs(), "level=WARN") || !strings.Contains(d.logs(), "setting=server.max_body_bytes") {
		t.Errorf("no warning naming server.max_body_bytes; log:\n%s", d.logs())
	}
	rd := c.read(t, "neu")
	if rd.Text != sharedPlan {
		t.Fatalf("werkbaum_read after the reload: %q", rd.Text)
	}
	var w writeAnswer
	c.ok(t, "werkbaum_set_status", writeArgs("neu", rd.Base, "first-plan-1", map[string]any{"id": "a", "status": "done"}), &w)
	if !w.Changed || !strings.Contains(string(readFile(t, plan)), "[x] #a: Alpha") {
		t.Errorf("the write after the reload: %+v; file:\n%s", w, readFile(t, plan))
	}
	// Removing the plan again: it is unknown from the next call on.
	d.writeConfig(t, "version = 1\n")
	talkAt(t, d, "", "reload").want(t, 0, "talk reload")
	if a, err := c.call(context.Background(), "werkbaum_read", map[string]any{"plan": "neu"}); err != nil || !a.IsError || !strings.Contains(a.Text, "unknown plan") {
		t.Errorf("werkbaum_read of the removed plan: %+v %v", a, err)
	}
}

// talk reload without a daemon says so (exit 3, as every command).
func TestReloadWithoutDaemon(t *testing.T) {
	r := talkRun(t, map[string]string{"TALK_URL": "http://127.0.0.1:1"}, "", "reload")
	r.want(t, 3, "talk reload without talkd")
	if !strings.Contains(r.stderr, "not reachable") {
		t.Errorf("stderr %q", r.stderr)
	}
}

// Reloads under load: announcements and plan writes go on while 20 reloads (SIGHUP and
// talk reload, alternating between two configurations) happen. Every /speak is answered,
// every accepted one is spoken, every plan write is applied exactly once.
func TestReloadUnderLoad(t *testing.T) {
	dir := t.TempDir()
	plan := filepath.Join(dir, "p.werkbaum")
	if err := os.WriteFile(plan, []byte(sharedPlan), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := func(lang, origin string) string {
		return plansConfig(map[string]string{"p": plan}) + fmt.Sprintf(`[server]
allowed_origins = [%q]
[voice]
lang = %q
fake_duration = "1ms"
[rules]
queue_size = 10000
rate_limit = { normal = "0s", low = "0s" }
`, origin, lang)
	}
	d := startDaemon(t, daemonOptions{Config: cfg("en", "https://a.example")})
	c := newMCPClient(d)
	start := c.read(t, "p").Base.Revision

	stop := make(chan struct{})
	var wg sync.WaitGroup
	var mu sync.Mutex
	accepted := map[string]bool{}
	var speakErrs []string
	for w := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cl := &http.Client{Timeout: 30 * time.Second}
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				// Paced below what the fake voice speaks (1 ms each, about 1.1 ms with this
				// machine's timer): unpaced, three clients filled the 10,000-place queue
				// within 1.3–2.5 s (345–1,575 queue_full answers per run), an honest answer
				// that says nothing about the reloads.
				time.Sleep(5 * time.Millisecond)
				body := fmt.Sprintf(`{"text":"Ansage %d von @jörg %d"}`, i, w)
				resp, err := cl.Post(d.URL+"/speak", "application/json", strings.NewReader(body))
				if err != nil {
					mu.Lock()
					speakErrs = append(speakErrs, err.Error())
					mu.Unlock()
					continue
				}
				var ans struct {
					Status, ID string
				}
				decodeErr := jsonDecode(resp, &ans)
				mu.Lock()
				switch {
				case decodeErr != nil || resp.StatusCode != http.StatusAccepted || ans.Status != "queued":
					speakErrs = append(speakErrs, fmt.Sprintf("HTTP %d %+v %v", resp.StatusCode, ans, decodeErr))
				default:
					accepted[ans.ID] = true
				}
				mu.Unlock()
			}
		}()
	}
	// One plan writer: each write flips node a and must land exactly once.
	var writes []string
	var writeErr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		status := []string{"done", "planned"}
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			r, err := c.call(ctx, "werkbaum_read", map[string]any{"plan": "p"})
			var rd readAnswer
			if err == nil && !r.IsError {
				err = r.decode(&rd)
			}
			if err != nil || r.IsError {
				cancel()
				writeErr = fmt.Errorf("read %d: %v %+v", i, err, r)
				return
			}
			id := fmt.Sprintf("load-%d", i)
			a, err := c.call(ctx, "werkbaum_set_status", writeArgs("p", rd.Base, id, map[string]any{"id": "a", "status": status[i%2]}))
			cancel()
			if err != nil || a.IsError {
				writeErr = fmt.Errorf("write %d: %v %+v", i, err, a)
				return
			}
			writes = append(writes, id)
		}
	}()

	for i := range 20 {
		if i%2 == 0 {
			d.writeConfig(t, cfg("de", "https://b.example"))
		} else {
			d.writeConfig(t, cfg("en", "https://a.example"))
		}
		if i%4 < 2 {
			if line := d.sighup(t); !strings.Contains(line, `msg="configuration reloaded"`) {
				t.Fatalf("reload %d: %s", i, line)
			}
		} else {
			talkAt(t, d, "", "reload").want(t, 0, fmt.Sprint("talk reload ", i))
		}
		time.Sleep(20 * time.Millisecond)
	}
	close(stop)
	wg.Wait()

	if writeErr != nil {
		t.Fatal(writeErr)
	}
	if len(speakErrs) > 0 {
		t.Fatalf("%d /speak calls failed during the reloads, e.g. %q", len(speakErrs), speakErrs[0])
	}
	if len(accepted) < 20 || len(writes) < 5 {
		t.Fatalf("too little load to prove anything: %d announcements, %d writes", len(accepted), len(writes))
	}
	// Every accepted announcement is spoken, exactly once.
	deadline := time.Now().Add(60 * time.Second)
	for {
		recs := d.spoken(t)
		seen := map[string]int{}
		for _, r := range recs {
			seen[r.ID]++
		}
		missing := 0
		for id := range accepted {
			if seen[id] == 0 {
				missing++
			}
			if seen[id] > 1 {
				t.Fatalf("%s spoken %d times", id, seen[id])
			}
		}
		if missing == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d accepted announcements were never spoken", missing, len(accepted))
		}
		time.Sleep(50 * time.Millisecond)
	}
	// Every write applied once: one revision per write, each request id in the journal.
	rd := c.read(t, "p")
	if want := start + uint64(len(writes)); rd.Base.Revision != want {
		t.Errorf("revision %d after %d writes from revision %d, want one revision per write", rd.Base.Revision, len(writes), start)
	}
	wantStatus := "[x] #a"
	if len(writes)%2 == 0 {
		wantStatus = "[ ] #a"
	}
	if !strings.Contains(rd.Text, wantStatus) {
		t.Errorf("after %d alternating writes the plan reads:\n%s", len(writes), rd.Text)
	}
	for _, id := range []string{writes[0], writes[len(writes)/2], writes[len(writes)-1]} {
		if op := c.operation(t, "p", id); op.State != "applied" {
			t.Errorf("operation %s: %+v", id, op)
		}
	}
	t.Logf("%d announcements and %d plan writes during 20 reloads", len(accepted), len(writes))
}

// jsonDecode decodes a response body into v and closes it.
func jsonDecode(resp *http.Response, v any) error {
	defer resp.Body.Close()
	return json.NewDecoder(resp.Body).Decode(v)
}

// A daemon that cannot start (its port is taken) still exits at once with its error:
// the SIGHUP handler, set up first, does not hold up the early return.
func TestReloadHandlerDoesNotHoldAFailedStart(t *testing.T) {
	d := startDaemon(t, daemonOptions{})
	d2 := startDaemon(t, daemonOptions{ExpectFail: true, Env: map[string]string{"TALK_LISTEN": d.Addr}})
	if code := d2.exitCode(t); code != 1 {
		t.Errorf("exit code %d, want 1", code)
	}
	if !strings.Contains(d2.logs(), "the address is in use") {
		t.Errorf("log of the second talkd:\n%s", d2.logs())
	}
}

// A reload can bring the first root too (local mode): its plans are addressed as
// root:path from the next call on, and dropping the root refuses them again.
func TestReloadAddsARoot(t *testing.T) {
	d := startDaemon(t, daemonOptions{Config: "version = 1\n"})
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "team"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "team", "müller.werkbaum"), []byte(sharedPlan), 0o644); err != nil {
		t.Fatal(err)
	}
	d.writeConfig(t, fmt.Sprintf("version = 1\n[[roots]]\nname = \"notes\"\npath = %q\n", root))
	if line := d.sighup(t); !strings.Contains(line, `msg="configuration reloaded"`) {
		t.Fatalf("SIGHUP: %s", line)
	}
	c := newMCPClient(d)
	if rd := c.read(t, "notes:team/müller.werkbaum"); rd.Text != sharedPlan {
		t.Errorf("the root's plan after the reload: %q", rd.Text)
	}
	d.writeConfig(t, "version = 1\n")
	talkAt(t, d, "", "reload").want(t, 0, "talk reload")
	if a, err := c.call(context.Background(), "werkbaum_read", map[string]any{"plan": "notes:team/müller.werkbaum"}); err != nil || !a.IsError {
		t.Errorf("the root's plan after the root was dropped: %+v %v", a, err)
	}
}

// A plan's announce flag changes with a reload: a write finishing a node is silent before
// and announced after it.
func TestReloadPlanAnnounceFlag(t *testing.T) {
	plan := filepath.Join(t.TempDir(), "en.werkbaum")
	if err := os.WriteFile(plan, []byte(announcePlanEN), 0o644); err != nil {
		t.Fatal(err)
	}
	conf := func(announce bool) string {
		return fmt.Sprintf("version = 1\n[rules.rate_limit]\nlow = \"0s\"\n[[plans]]\nkey = \"en\"\npath = %q\nlang = \"en\"\nannounce = %t\n", plan, announce)
	}
	d := startDaemon(t, daemonOptions{Config: conf(false)})
	c := newMCPClient(d)
	announceWrite(t, c, "en", "werkbaum_set_status", "r1", map[string]any{"id": "shop.cart", "status": "done", "agent": "Codex"})

	d.writeConfig(t, conf(true))
	talkAt(t, d, "", "reload").want(t, 0, "talk reload")
	announceWrite(t, c, "en", "werkbaum_set_status", "r2", map[string]any{"id": "shop.pay", "status": "done", "agent": "Codex"})
	d.waitSpoken(t, 1)
	quietlyWaited()
	recs := d.spoken(t)
	if len(recs) != 1 || !strings.Contains(recs[0].Text, "Payment") || recs[0].Agent != "Codex" {
		t.Fatalf("spoken %+v, want only the announcement of the write after the reload (Payment)", recs)
	}
	if strings.Contains(recs[0].Text, "Cart") {
		t.Errorf("the write before the reload (announce = false) was announced: %+v", recs)
	}
}
