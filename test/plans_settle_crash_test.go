package test

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// journalStateOf opens the state database of a killed daemon and returns the journal
// state ("pending", "applied", …) of request id (the entry's JSON carries its requestId),
// "" when no entry has it.
func journalStateOf(t *testing.T, stateDir, id string) string {
	t.Helper()
	db, err := bolt.Open(filepath.Join(stateDir, "talkd.db"), 0o600, &bolt.Options{ReadOnly: true, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatalf("open the state database of the killed daemon: %v", err)
	}
	defer db.Close()
	state := ""
	err = db.View(func(tx *bolt.Tx) error {
		return tx.ForEach(func(_ []byte, b *bolt.Bucket) error {
			return b.ForEach(func(_, v []byte) error {
				var e struct {
					RequestID string `json:"requestId"`
					State     string `json:"state"`
				}
				if v != nil && json.Unmarshal(v, &e) == nil && e.RequestID == id {
					state = e.State
				}
				return nil
			})
		})
	})
	if err != nil {
		t.Fatalf("read the state database: %v", err)
	}
	return state
}

// TestPlanCrashAfterAnswerBeforeSettle: a write is answered once its file is renamed into
// place (the commit point), before its settle transaction commits. talkd is SIGKILLed
// right after each answer, and the state database, read after the kill, shows whether the
// kill came before the settle (the entry still pending). After every restart the answered
// write is applied at its revision (operation_get), a retry of its request id is replayed,
// a read gives its text and revision, the document history lists its version under the
// agent's name, and the next write gets the next revision: nothing answered is lost or
// doubled. The rounds go on until at least three kills came before the settle; with a
// settle before the answer (the code before) none ever does and the test fails.
func TestPlanCrashAfterAnswerBeforeSettle(t *testing.T) {
	t.Parallel()
	const maxRounds, wantCaught = 40, 3
	d, paths := startPlanDaemon(t, planFile{Key: "p", Text: crashPlan("%% settle crash test")})
	config, home := plansConfig(paths), d.Home
	caught, round := 0, 0
	for ; round < maxRounds && caught < wantCaught; round++ {
		c := newMCPClient(d)
		c.headers = map[string]string{"X-Talk-Agent": "Agent Jörg"}
		base := c.read(t, "p").Base
		id := fmt.Sprintf("sc-%d", round)
		status := map[bool]string{true: "done", false: "progress"}[round%2 == 0]
		args := writeArgs("p", base, id, map[string]any{"id": fmt.Sprintf("n%d", round%40), "status": status})
		var w writeAnswer
		c.ok(t, "werkbaum_set_status", args, &w)
		d.kill(t) // right after the answer
		if !w.Changed || w.Revision != base.Revision+1 {
			t.Fatalf("round %d: the write answered %+v on revision %d", round, w, base.Revision)
		}
		text := string(readFile(t, paths["p"]))
		if w.Base.Checksum != sha([]byte(text)) {
			t.Fatalf("round %d: %s answered applied but the file is not its text", round, id)
		}
		switch st := journalStateOf(t, d.StateDir, id); st {
		case "pending":
			caught++
		case "applied":
		default:
			t.Fatalf("round %d: %s answered applied, the journal holds %q", round, id, st)
		}

		d = startDaemon(t, daemonOptions{Config: config, Home: home})
		c = newMCPClient(d)
		c.headers = map[string]string{"X-Talk-Agent": "Agent Jörg"}
		if op := c.operation(t, "p", id); op.State != "applied" || op.InProgress || op.Revision != w.Revision {
			t.Fatalf("round %d: %s after the restart: %+v, want applied at revision %d", round, id, op, w.Revision)
		}
		var again writeAnswer
		c.ok(t, "werkbaum_set_status", args, &again)
		if !again.Replayed || again.Revision != w.Revision || again.Base != w.Base {
			t.Fatalf("round %d: retry of %s after the restart: %+v, want the replay of %+v", round, id, again, w)
		}
		if r := c.read(t, "p"); r.Base != w.Base || r.Text != text {
			t.Fatalf("round %d: read after the restart: %+v, want %+v", round, r.Base, w.Base)
		}
		h := docHistory(t, newDocHTTP(d, nil), docPathOf(t, d, c, "p"))
		if e, ok := h[w.Revision]; !ok || e.DisplayName != "Agent Jörg" || e.Content == "" {
			t.Fatalf("round %d: the history after the restart lacks the agent's version %d: %+v", round, w.Revision, e)
		}
	}
	if caught < wantCaught {
		t.Fatalf("only %d of the kills right after an answer came before the settle: the answer waits for the settle", caught)
	}
	t.Logf("%d of %d kills right after an answer came before its settle; each restart knew the write", caught, round)
}
