package test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"
)

// The document history at the process boundary (issue 32): people's saves are history
// with their names, an empty milestone PATCH marks the current version naming who asked,
// POST …/restore brings a kept version back as a new RESTORED version through the one
// write path, and renames name who renamed — over real HTTP, checked against the plan
// file, the MCP tools' view and a restarted daemon.

// docHistoryEntry is a HistoryEntry with talkd's members.
type docHistoryEntry struct {
	DocumentID       string    `json:"documentId"`
	Version          uint64    `json:"version"`
	Title            string    `json:"title"`
	Content          string    `json:"content"`
	ChangeType       string    `json:"changeType"`
	Timestamp        time.Time `json:"timestamp"`
	ClientID         string    `json:"clientId"`
	DisplayName      string    `json:"displayName"`
	Milestone        bool      `json:"milestone"`
	MarkedBy         string    `json:"markedBy"`
	MarkedByClientID string    `json:"markedByClientId"`
	RestoredFrom     uint64    `json:"restoredFrom"`
}

func docHistory(t *testing.T, c *docHTTP, path string) map[uint64]docHistoryEntry {
	t.Helper()
	a := c.must(t, http.MethodGet, path+"/history", nil)
	if a.Status != http.StatusOK {
		t.Fatalf("GET history: %s", a)
	}
	var list []docHistoryEntry
	a.decode(t, &list)
	out := map[uint64]docHistoryEntry{}
	for i, e := range list {
		if i > 0 && e.Version <= list[i-1].Version {
			t.Errorf("history not oldest first: %s", a)
		}
		out[e.Version] = e
	}
	return out
}

// TestDocumentHistoryMilestoneRestore: two people type and one marks a milestone, an
// agent writes; the history lists every save with its writer and keeps the mark after
// newer versions and a restart; a restore brings a save back as a new version named
// after the client id that asked; refusals say why.
func TestDocumentHistoryMilestoneRestore(t *testing.T) {
	t.Parallel()
	d, paths := startPlanDaemon(t, planFile{Key: "p", Text: docPlanText})
	agent := newMCPClient(d)
	agent.headers = map[string]string{"X-Talk-Agent": "Agent Jörg"}
	path := docPathOf(t, d, agent, "p")
	c := newDocHTTP(d, nil)
	ctx := context.Background()

	a := c.must(t, http.MethodGet, "/api/v1/info", nil)
	if f, _ := a.Map["features"].(map[string]any); f["restore"] != true || f["history"] != true {
		t.Errorf("/info features: %s", a)
	}

	jörg := newDocEditor(c, path, "ed-jörg", "Jörg")
	müller := newDocEditor(c, path, "ed-müller", "Müller")
	step := func(e *docEditor, ops []docOp, milestone bool) uint64 {
		t.Helper()
		if err := e.load(ctx); err != nil {
			t.Fatal(err)
		}
		a, err := e.patch(ctx, ops, milestone)
		if err != nil || a.Status != http.StatusOK {
			t.Fatalf("%s's PATCH: %v %s", e.name, err, a)
		}
		return uint64(a.Map["version"].(float64))
	}
	v2 := step(jörg, []docOp{{Op: "insert", Index: 4, Lines: []string{"  - [ ] #j: Von Jörg (S)"}}}, false)
	v2Text := string(readFile(t, paths["p"]))
	v3 := step(müller, []docOp{{Op: "insert", Index: 5, Lines: []string{"  - [ ] #m: Von Müller (S)"}}}, false)
	// The camera button: no ops, milestone. It answers the current version and makes none.
	if v := step(jörg, []docOp{}, true); v != v3 {
		t.Fatalf("an empty milestone PATCH answered version %d, want the current %d", v, v3)
	}
	base := agent.read(t, "p").Base
	agent.must(t, "werkbaum_set_status", writeArgs("p", base, "h-1", map[string]any{"id": "a", "status": "done"}))
	v4 := base.Revision + 1
	if v3 != v2+1 || base.Revision != v3 {
		t.Fatalf("versions %d, %d; the agent read revision %d", v2, v3, base.Revision)
	}

	check := func(h map[uint64]docHistoryEntry, when string) {
		t.Helper()
		if e := h[v2]; e.DisplayName != "Jörg" || e.ClientID != "ed-jörg" || e.Milestone || e.Content != v2Text {
			t.Errorf("%s: Jörg's save v%d in the history: %+v", when, v2, e)
		}
		if e := h[v3]; e.DisplayName != "Müller" || !e.Milestone || e.MarkedBy != "Jörg" || e.MarkedByClientID != "ed-jörg" {
			t.Errorf("%s: Müller's save v%d marked by Jörg: %+v", when, v3, e)
		}
		if e := h[v4]; e.DisplayName != "Agent Jörg" || !e.Milestone {
			t.Errorf("%s: the agent's write v%d: %+v", when, v4, e)
		}
	}
	check(docHistory(t, c, path), "after newer versions")

	// Restore Jörg's save, asked by Müller's client without a name.
	a = c.must(t, http.MethodPost, path+"/restore", map[string]any{"version": v2, "clientId": "ed-müller"})
	var doc docDocument
	if a.Status != http.StatusOK {
		t.Fatalf("restore: %s", a)
	}
	a.decode(t, &doc)
	v5 := v4 + 1
	if doc.Version != v5 || doc.Content != v2Text {
		t.Fatalf("restore answered %+v, want version %d with the text of %d", doc, v5, v2)
	}
	if got := string(readFile(t, paths["p"])); got != v2Text {
		t.Errorf("the file after the restore:\n%s\nwant\n%s", got, v2Text)
	}
	if r := agent.read(t, "p"); r.Base.Revision != v5 || r.Text != v2Text {
		t.Errorf("the agents read revision %d:\n%s", r.Base.Revision, r.Text)
	}
	var feed docFeed
	c.must(t, http.MethodGet, fmt.Sprintf("%s/changes?since=%d&wait=0", path, v4), nil).decode(t, &feed)
	if len(feed.Events) != 1 || feed.Events[0].ChangeType != "RESTORED" || feed.Events[0].DisplayName != "Müller" ||
		feed.Events[0].ClientID != "ed-müller" || feed.FromVersion == nil || len(feed.Ops) == 0 {
		t.Errorf("the feed after the restore: %+v", feed)
	}
	if e := docHistory(t, c, path)[v5]; e.ChangeType != "RESTORED" || e.RestoredFrom != v2 || e.DisplayName != "Müller" {
		t.Errorf("the restore in the history: %+v", e)
	}

	// Renames name who renamed: the client id's last name, else "someone".
	c.must(t, http.MethodPatch, path+"/title", map[string]any{"title": "Plan für @jörg", "expectedVersion": v5, "clientId": "ed-jörg"})
	c.must(t, http.MethodPatch, path+"/title", map[string]any{"title": "Plan", "expectedVersion": v5 + 1})
	feed = docFeed{}
	c.must(t, http.MethodGet, fmt.Sprintf("%s/changes?since=%d&wait=0", path, v5), nil).decode(t, &feed)
	if len(feed.Events) != 2 || feed.Events[0].DisplayName != "Jörg" || feed.Events[1].DisplayName != "someone" {
		t.Errorf("the renames' names: %+v", feed.Events)
	}

	// Refusals say why and change nothing.
	c.must(t, http.MethodPost, path+"/restore", map[string]any{"version": 999}).problem(t, http.StatusNotFound, "version 999")
	c.must(t, http.MethodPost, path+"/restore", map[string]any{}).problem(t, http.StatusConflict, "name the version")
	c.must(t, http.MethodPost, path+"/restore", map[string]any{"version": "2"}).problem(t, http.StatusBadRequest, "version")
	if !strings.Contains(d.logs(), `msg="request refused" door=/api/v1/documents/`) || !strings.Contains(d.logs(), "document restore refused: no such version") {
		t.Errorf("no log lines for the refused restores:\n%s", d.logs())
	}

	// The history survives a restart: the state file keeps the saves and the mark.
	if code := d.terminate(t); code != 0 {
		t.Fatalf("talkd exited with %d", code)
	}
	d2 := startDaemon(t, daemonOptions{Config: plansConfig(paths), Home: d.Home})
	check(docHistory(t, newDocHTTP(d2, nil), path), "after a restart")
}

// TestDocumentRestoreCompacted: a save pushed out of the history by 70 newer ones has no
// text left: its restore is a 422 naming why, and nothing changes.
func TestDocumentRestoreCompacted(t *testing.T) {
	t.Parallel()
	d, paths := startPlanDaemon(t, planFile{Key: "p", Text: docPlanText})
	path := docPathOf(t, d, newMCPClient(d), "p")
	c := newDocHTTP(d, nil)
	ctx := context.Background()
	ed := newDocEditor(c, path, "typist", "Tippende")
	var first uint64
	for i := range 70 {
		if err := ed.load(ctx); err != nil {
			t.Fatal(err)
		}
		a, err := ed.patch(ctx, []docOp{{Op: "insert", Index: 4 + i, Lines: []string{fmt.Sprintf("  - [ ] #n%d: Zeile %d (XS)", i, i)}}}, false)
		if err != nil || a.Status != http.StatusOK {
			t.Fatalf("patch %d: %v %s", i, err, a)
		}
		if i == 0 {
			first = uint64(a.Map["version"].(float64))
		}
	}
	h := docHistory(t, c, path)
	if _, listed := h[first]; listed {
		t.Fatalf("version %d is still listed after 70 newer saves", first)
	}
	if len(h) < 64 {
		t.Errorf("the history lists %d versions, want the newest 64 saves (and the first version)", len(h))
	}
	before := string(readFile(t, paths["p"]))
	c.must(t, http.MethodPost, path+"/restore", map[string]any{"version": first}).problem(t, http.StatusUnprocessableEntity, "no longer keeps the text")
	if got := string(readFile(t, paths["p"])); got != before {
		t.Error("a refused restore changed the file")
	}
}

// TestDocumentRestoreReadOnly: a restore is a write like any other: a plan file its owner
// made read-only refuses it (403 read_only) as it refuses a PATCH, and nothing changes.
func TestDocumentRestoreReadOnly(t *testing.T) {
	t.Parallel()
	d, paths := startPlanDaemon(t, planFile{Key: "p", Text: docPlanText})
	path := docPathOf(t, d, newMCPClient(d), "p")
	c := newDocHTTP(d, nil)
	ed := newDocEditor(c, path, "ed", "Jörg")
	ctx := context.Background()
	if err := ed.load(ctx); err != nil {
		t.Fatal(err)
	}
	first := ed.version
	if a, err := ed.patch(ctx, []docOp{{Op: "insert", Index: 0, Lines: []string{"# Notiz von @Müller"}}}, false); err != nil || a.Status != http.StatusOK {
		t.Fatalf("patch: %v %s", err, a)
	}
	if err := os.Chmod(paths["p"], 0o444); err != nil {
		t.Fatal(err)
	}
	c.must(t, http.MethodPost, path+"/restore", map[string]any{"version": first}).problem(t, http.StatusForbidden, "read-only")
	if got := string(readFile(t, paths["p"])); got != "# Notiz von @Müller\n"+docPlanText {
		t.Errorf("a refused restore changed the file:\n%s", got)
	}
	if err := os.Chmod(paths["p"], 0o644); err != nil {
		t.Fatal(err)
	}
	if a := c.must(t, http.MethodPost, path+"/restore", map[string]any{"version": first}); a.Status != http.StatusOK || a.Map["content"] != docPlanText {
		t.Errorf("restore once writable: %s", a)
	}
}
