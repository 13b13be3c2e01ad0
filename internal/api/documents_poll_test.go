package api

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"talkd/internal/config"
)

// TestParkedPollCapsAndRevocation: the caps count parked polls per client and in all and
// refuse beyond them (429, 503, Retry-After, Connection: close); a reconfiguration that
// takes a client's read grant ends exactly its parked polls with 403 and frees their
// places, so another client can park again.
func TestParkedPollCapsAndRevocation(t *testing.T) {
	tok := func(id string) string { return "tok-" + id + "-" + strings.Repeat("x", 30) }
	clients := []config.Client{
		{ID: "reader", Token: tok("reader"), Read: []string{"p"}},
		{ID: "reader2", Token: tok("reader2"), Read: []string{"p"}},
		{ID: "writer", Token: tok("writer"), Write: []string{"p"}},
	}
	var cfg *config.Config
	f := newDocFixture(t, func(c *config.Config) {
		c.Server.MaxParkedPolls, c.Server.MaxParkedPollsPerClient = 3, 2
		c.Clients = clients
		cfg = c
	})
	auth := func(id string) map[string]string { return map[string]string{"Authorization": "Bearer " + tok(id)} }
	type answer struct {
		status int
		close  bool
		body   map[string]any
	}
	answers := make(chan answer, 8)
	poll := func(id string) {
		resp, body := f.do(http.MethodGet, docPath+"/changes?since=3&wait=20", "", auth(id))
		answers <- answer{resp.StatusCode, resp.Close, body}
	}
	refused := func(id string, status int, want string) {
		t.Helper()
		resp, body := f.do(http.MethodGet, docPath+"/changes?since=3&wait=20", "", auth(id))
		f.problem(resp, body, status, want)
		if resp.Header.Get("Retry-After") != "5" || !resp.Close {
			t.Errorf("refused poll of %s: Retry-After %q, close %v", id, resp.Header.Get("Retry-After"), resp.Close)
		}
	}
	go poll("reader")
	go poll("reader")
	f.parkedWaits(2, time.Now())
	refused("reader", http.StatusTooManyRequests, `client "reader" has 2 polls waiting`)
	go poll("writer")
	f.parkedWaits(3, time.Now())
	refused("reader2", http.StatusServiceUnavailable, "talkd holds 3 waiting polls")

	next := *cfg
	next.Clients = append([]config.Client(nil), clients...)
	next.Clients[0].Read = nil
	if err := f.srv.Reconfigure(&next); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		select {
		case a := <-answers:
			if a.status != http.StatusForbidden || !strings.Contains(a.body["detail"].(string), `client "reader" has no read grant for plan "p" any more`) {
				t.Errorf("the reader's poll after the reload: %d %v", a.status, a.body)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("the reader's polls were not ended by the reconfiguration")
		}
	}
	p := f.srv.documents.parker
	p.mu.Lock()
	total, perReader := p.total, p.perClient["reader"]
	p.mu.Unlock()
	if total != 1 || perReader != 0 {
		t.Errorf("after the revocation: %d parked in all, %d of the reader's counted; want 1 and 0", total, perReader)
	}
	go poll("reader2") // the places are free again
	deadline := time.Now().Add(5 * time.Second)
	for {
		p.mu.Lock()
		total = p.total
		p.mu.Unlock()
		if total == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d parked, want 2 (the writer's and reader2's)", total)
		}
		time.Sleep(2 * time.Millisecond)
	}
	select {
	case a := <-answers:
		t.Errorf("a poll answered although it keeps its grant: %d %v", a.status, a.body)
	default:
	}
}
