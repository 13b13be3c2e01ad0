package test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSharedModeRequestIDsPerClient: in shared mode request ids are each client's own.
// The same request_id from two clients is two requests (the second is applied, not
// answered with the first one's result), and operation_get tells each client only about
// its own requests, before and after a restart.
func TestSharedModeRequestIDsPerClient(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	plan := filepath.Join(dir, "p.werkbaum")
	if err := os.WriteFile(plan, []byte(sharedPlan), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := fmt.Sprintf(`version = 1
[[plans]]
key = "p"
path = %q
lang = "en"

[[clients]]
id = "alice"
token_env = "TOK_ALICE"
write = ["p"]

[[clients]]
id = "bob"
token_env = "TOK_BOB"
write = ["p"]
`, plan)
	tokens := map[string]string{"alice": "ali-" + strings.Repeat("a", 36), "bob": "bob-" + strings.Repeat("b", 36)}
	env := map[string]string{"TOK_ALICE": tokens["alice"], "TOK_BOB": tokens["bob"]}
	home := t.TempDir()
	d := startDaemon(t, daemonOptions{Config: cfg, Home: home, Env: env})
	clients := func(d *daemon) map[string]*mcpClient {
		out := map[string]*mcpClient{}
		for id, tok := range tokens {
			c := newMCPClient(d)
			c.headers = map[string]string{"Authorization": "Bearer " + tok}
			out[id] = c
		}
		return out
	}
	c := clients(d)

	aliceArgs := writeArgs("p", c["alice"].read(t, "p").Base, "r-1", map[string]any{"id": "a", "status": "done"})
	var wa writeAnswer
	c["alice"].ok(t, "werkbaum_set_status", aliceArgs, &wa)
	if !wa.Changed || wa.Replayed || wa.Revision != 2 {
		t.Fatalf("alice's r-1: %+v", wa)
	}
	if op := c["bob"].operation(t, "p", "r-1"); op.State != "unknown" || op.Author != nil {
		t.Fatalf("bob's operation_get r-1 tells of alice's request: %+v", op)
	}
	var wb writeAnswer
	c["bob"].ok(t, "werkbaum_set_status", writeArgs("p", wa.Base, "r-1", map[string]any{"id": "b", "status": "done"}), &wb)
	if !wb.Changed || wb.Replayed || wb.Revision != 3 {
		t.Fatalf("bob's r-1 was not applied as its own request: %+v", wb)
	}
	text := string(readFile(t, plan))
	if !strings.Contains(text, "[x] #a") || !strings.Contains(text, "[x] #b") {
		t.Fatalf("the plan does not hold both writes:\n%s", text)
	}

	check := func(when string, c map[string]*mcpClient) {
		t.Helper()
		for id, rev := range map[string]uint64{"alice": 2, "bob": 3} {
			op := c[id].operation(t, "p", "r-1")
			if op.State != "applied" || op.Revision != rev || op.Author == nil || op.Author.Client != id {
				t.Errorf("%s: %s's operation_get r-1: %+v, want applied at revision %d by %s", when, id, op, rev, id)
			}
		}
		var again writeAnswer
		c["alice"].ok(t, "werkbaum_set_status", aliceArgs, &again)
		if !again.Replayed || again.Revision != 2 {
			t.Errorf("%s: alice's retry of r-1: %+v, want her own result replayed", when, again)
		}
	}
	check("running", c)
	if code := d.terminate(t); code != 0 {
		t.Fatalf("exit %d", code)
	}
	check("after a restart", clients(startDaemon(t, daemonOptions{Config: cfg, Home: home, Env: env})))
	if got := string(readFile(t, plan)); got != text {
		t.Errorf("the retries changed the plan:\n%s", got)
	}
}
