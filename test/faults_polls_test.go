package test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// Faults of the document feed's parked long polls (issue 34): a poll that can never be
// answered, caps, clients that leave, descriptor exhaustion, a reload that revokes.

// TestPollSinceAheadRefusedAtOnce: a poll whose since is ahead of the document (a client
// that kept a version from before its state file was moved aside, or a made-up number)
// gets 422 at once, like a PATCH on such a base, instead of waiting out its wait for a
// 204 it would get again and again.
func TestPollSinceAheadRefusedAtOnce(t *testing.T) {
	t.Parallel()
	d, _ := startPlanDaemon(t, planFile{Key: "p", Text: docPlanText})
	mcp := newMCPClient(d)
	path := docPathOf(t, d, mcp, "p")
	cur := mcp.read(t, "p").Base.Revision
	c := newDocHTTP(d, nil)
	start := time.Now()
	a := c.must(t, http.MethodGet, fmt.Sprintf("%s/changes?since=%d&wait=20", path, cur+5), nil)
	if el := time.Since(start); el > 5*time.Second {
		t.Errorf("the poll with since ahead took %v", el)
	}
	a.problem(t, http.StatusUnprocessableEntity, fmt.Sprintf("since %d is ahead of the document's version %d", cur+5, cur))
	if logs := d.logs(); !containsAll(logs, `msg="request refused"`, "status=422") {
		t.Errorf("the refusal left no log line:\n%s", logs)
	}
	// since = current still waits, and a write answers it.
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if a, err := c.do(ctx, http.MethodGet, fmt.Sprintf("%s/changes?since=%d&wait=20", path, cur), nil); err == nil {
		t.Errorf("a poll at the current version answered at once: %s", a)
	}
}

// containsAll reports whether s holds every one of parts.
func containsAll(s string, parts ...string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}
