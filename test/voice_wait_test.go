package test

import (
	"strings"
	"testing"
	"time"
)

// TestVoiceWaitMeansHeard: talk say --wait exits 0 only when the announcement was heard,
// and with its own code for each other end: muted 6, discarded 7, failed 8, stale 9 (no
// audio, 10, in TestVoiceNoSoundCard). With the default rules, the second of two
// announcements 0.1 s apart is not discarded by the rate limit: both are heard.
func TestVoiceWaitMeansHeard(t *testing.T) {
	t.Parallel()
	d := startDaemon(t, daemonOptions{Config: "version = 1\n[[voice.commands]]\nname = \"broken\"\nargv = [\"/bin/false\", \"{text}\"]\n"})

	second := make(chan cliResult, 1)
	first := talkRun(t, map[string]string{"TALK_URL": d.URL, "TALK_AGENT": "agent-a"}, "", "say", "tests pass")
	first.want(t, 0, "agent A")
	time.Sleep(100 * time.Millisecond)
	go func() {
		second <- talkRun(t, map[string]string{"TALK_URL": d.URL, "TALK_AGENT": "agent-b"}, "", "say", "--wait", "build broken")
	}()
	r := <-second
	r.want(t, 0, "agent B's announcement 0.1 s after agent A's, with --wait")
	if got := strings.Join(texts(d.waitSpoken(t, 2)), " | "); got != "tests pass | build broken" {
		t.Fatalf("spoken: %s", got)
	}

	if status, _ := d.postJSON(t, "/mute", map[string]any{"for": "10m"}, nil); status != 200 {
		t.Fatal("mute failed")
	}
	r = talkAt(t, d, "", "say", "--wait", "--now", "while muted")
	r.want(t, 6, "say --wait while muted")
	if !strings.Contains(r.stderr, "muted") || strings.Contains(r.stderr, "not an error") {
		t.Errorf("say --wait while muted: %q", r.stderr)
	}
	d.postJSON(t, "/unmute", "", nil)

	r = talkAt(t, d, "", "say", "--wait", "--now", "--provider", "broken", "an engine that fails")
	r.want(t, 8, "say --wait with a failing engine")
	if !strings.Contains(r.stderr, "failed") {
		t.Errorf("say --wait with a failing engine: %q", r.stderr)
	}

	q := startDaemon(t, daemonOptions{Config: "version = 1\n[rules]\nquiet_hours = [\"" + quietAroundNow() + "\"]\n", Env: utcEnv(nil)})
	r = talkAt(t, q, "", "say", "--wait", "in quiet hours")
	r.want(t, 7, "say --wait in quiet hours")
	if !strings.Contains(r.stderr, "quiet_hours") {
		t.Errorf("say --wait in quiet hours: %q", r.stderr)
	}

	s := startDaemon(t, daemonOptions{Config: "version = 1\n[voice]\nfake_duration = \"3s\"\n[rules]\nmax_wait = \"1s\"\n[rules.rate_limit]\nnormal = \"0s\"\n"})
	talkAt(t, s, "", "say", "a long one").want(t, 0, "the long one")
	r = talkAt(t, s, "", "say", "--wait", "behind it")
	r.want(t, 9, "say --wait of an announcement that waited too long")
	if !strings.Contains(r.stderr, "stale") {
		t.Errorf("say --wait stale: %q", r.stderr)
	}
}

// 6 is talk's exit code for say --wait while muted.
