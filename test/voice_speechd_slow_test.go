package test

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestVoiceSpeechDispatcherSlowOrDead: a speech-dispatcher that takes long to list its
// voices does not hold up the first announcement for it (it is admitted at once), and
// one that hangs while speaking fails within seconds, not the engine timeout: the
// announcement behind it is spoken soon after, and while speech-dispatcher stays silent
// its next announcements fail at once instead of each blocking the queue again.
func TestVoiceSpeechDispatcherSlowOrDead(t *testing.T) {
	t.Parallel()
	bin, seen := t.TempDir(), t.TempDir()
	voiceScript(t, filepath.Join(bin, "spd-say"), `if [ "$1" = "-L" ]; then /bin/sleep 20; printf 'NAME LANGUAGE VARIANT\nfrench fr none\n'; exit 0; fi
if [ -e "`+seen+`/hang" ]; then exec /bin/sleep 60; fi
for a; do printf '%s|' "$a"; done >> "`+seen+`/args"; echo >> "`+seen+`/args"`)
	d := startDaemon(t, daemonOptions{Config: "version = 1\n[voice]\ntimeout = \"30s\"\n[rules.rate_limit]\nnormal = \"0s\"\n",
		Env: map[string]string{"TALK_SINK": "null", "PATH": bin + ":" + os.Getenv("PATH")}})

	start := time.Now()
	r := talkAt(t, d, "", "say", "--wait", "--now", "--provider", "speechd", "-l", "fr", "bonjour")
	r.want(t, 0, "the first announcement for speech-dispatcher")
	if took := time.Since(start); took > 8*time.Second {
		t.Fatalf("the first speechd announcement took %v: it waited for the voice list", took)
	}

	if err := os.WriteFile(filepath.Join(seen, "hang"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	start = time.Now()
	_, hung := d.postJSON(t, "/speak", map[string]any{"text": "hangs", "provider": "speechd", "now": true}, nil)
	_, behind := d.postJSON(t, "/speak", map[string]any{"text": "behind it", "now": true}, nil)
	e := voiceHistoryEntry(t, d, hung["id"].(string))
	if e["outcome"] != "failed" || !strings.Contains(e["reason"].(string), "killed after timeout of 3") {
		t.Fatalf("the hanging speech-dispatcher: %v", e)
	}
	if e := voiceHistoryEntry(t, d, behind["id"].(string)); e["outcome"] != "spoken" {
		t.Fatalf("the announcement behind it: %v", e)
	}
	if took := time.Since(start); took > 15*time.Second {
		t.Fatalf("the queue was blocked %v by a hanging speech-dispatcher (the engine timeout is 30s)", took)
	}

	start = time.Now()
	status, again := d.postJSON(t, "/speak", map[string]any{"text": "still there?", "provider": "speechd", "now": true}, nil)
	if status != http.StatusAccepted {
		t.Fatalf("speak: %d %v", status, again)
	}
	e = voiceHistoryEntry(t, d, again["id"].(string))
	if e["outcome"] != "failed" || !strings.Contains(e["reason"].(string), "speech-dispatcher is not answering") || time.Since(start) > 3*time.Second {
		t.Fatalf("after %v: %v, want it failed at once", time.Since(start), e)
	}
}
