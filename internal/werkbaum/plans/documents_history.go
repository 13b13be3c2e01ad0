package plans

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	"talkd/internal/werkbaum"
	"talkd/internal/werkbaum/plans/docs"
	"talkd/internal/werkbaum/plans/docstore"
	"talkd/internal/werkbaum/plans/planfs"
)

// What people do with a document's history: name who did what, mark the current version
// a milestone (the editor's camera button), and bring a kept version back (its history
// menu). A restore is a write like any other, through the one commit (commit.go), so it
// takes the plan's lane, journal and revision counter and cannot lose anyone's line.

// DocAuthor is who asks for a document change through the document doors: the editor's
// client id and the name it sent (either may be empty), the talkd client that was
// admitted, and the name that client claimed at admission (the X-Talk-Agent header).
type DocAuthor struct {
	ClientID    string
	DisplayName string
	Client      string
	Agent       string
}

// authorName is the name a document change is shown under: the name sent, else the last
// name its client id wrote under in this document (the editor sends none with a rename
// or a restore), else the name claimed at admission, else "someone".
func (s *Service) authorName(st *docstore.Doc, who DocAuthor) string {
	if who.DisplayName != "" {
		return who.DisplayName
	}
	if who.ClientID != "" {
		recs := st.Records()
		for i := len(recs) - 1; i >= 0; i-- {
			switch r := recs[i]; {
			case r.ClientID == who.ClientID && r.DisplayName != "":
				return r.DisplayName
			case r.MarkedByClientID == who.ClientID && r.MarkedBy != "":
				return r.MarkedBy
			}
		}
	}
	if who.Agent != "" {
		return who.Agent
	}
	return someoneName
}

// markMilestone is what an empty milestone PATCH records with its answer: version rev
// (the current one) becomes a milestone naming who asked, so the history keeps it like
// any milestone. A version marked before keeps its first mark.
func (s *Service) markMilestone(key string, rev uint64, who DocAuthor) (*alongside, error) {
	st, err := s.docs.Doc(key)
	if err != nil {
		return nil, err
	}
	name := s.authorName(st, who)
	known, marked := false, false
	for _, r := range st.Records() {
		if r.Version == rev {
			known, marked = true, r.MarkedBy != ""
		}
	}
	if !known {
		return nil, fmt.Errorf("document of plan %q: version %d has no record (it could not be saved); nothing was marked", key, rev)
	}
	if marked {
		return nil, nil
	}
	var rec docs.Record
	return &alongside{
		put: func(tx Tx) error {
			marked, err := docstore.MarkMilestone(tx, key, rev, name, who.ClientID)
			rec = marked
			return err
		},
		saved: func() {
			st.Replace(rec)
			s.log.Info("document version marked a milestone", "plan", key, "version", rev, "client_id", who.ClientID, "name", name)
		},
	}, nil
}

// restoreTool is the journal's tool name of a restore (and the mirror's WriteEvent.Tool).
const restoreTool = "document_restore"

// Restore brings back the text of a kept version of the document as a new version of
// type RESTORED, named after who asked (authorName). It is a person's write: the guards
// that refuse agents' writes do not apply, the plan limit does. Restoring a version
// whose text is the current one changes nothing and answers the document as it is.
//
// Errors: ErrNoSuchVersion (a version the document never had), ErrVersionNotKept (its
// text is no longer kept), ErrUnknownDocument, a deleted plan (ErrPlanMissing: its file
// comes back in its folder, not through the document), werkbaum.ErrTooLarge.
func (s *Service) Restore(ctx context.Context, id string, version uint64, who DocAuthor) (*Document, error) {
	key, err := s.docPlan(id)
	if err != nil {
		return nil, err
	}
	pl, err := s.resolve(key)
	if err != nil {
		return nil, fmt.Errorf("%w %q", ErrUnknownDocument, id)
	}
	defer pl.Release()
	st, err := s.docs.Doc(key)
	if err != nil {
		return nil, err
	}
	var b [8]byte
	rand.Read(b[:])
	c := &restoreChange{s: s, p: pl, from: version, who: who, name: s.authorName(st, who), reqID: hex.EncodeToString(b[:])}
	t := s.targetOf(pl)
	var doc *Document
	err = s.lanes.Do(ctx, t.lane(), func() error {
		// The report of the recorder (the mirror) is not waited for, as for a PATCH.
		if _, _, err := commit(ctx, s, t, c); err != nil {
			return err
		}
		snap, err := s.Read(ctx, key)
		if err != nil {
			return err
		}
		doc, err = s.documentOf(key, id, snap)
		return err
	})
	return doc, err
}

// restoreChange is a restore: the text of a kept version, written in the file's style.
// Its journal client is the editor's, as a PATCH's (patchClient), its request id random
// hex, which no PATCH's seq can be (a restore repeated restores the same text, which
// changes nothing).
type restoreChange struct {
	s     *Service
	p     planfs.Ref
	from  uint64 // the version to bring back
	who   DocAuthor
	name  string
	reqID string

	// Set by compute, for the settle of the same attempt.
	doc  *docstore.Doc
	next string
}

func (c *restoreChange) entryKey() []byte { return entryKey(patchClient(c.who.ClientID), c.reqID) }

// retries: a file saved outside talkd meanwhile is a version of its own; the restore
// then runs on top of it.
func (c *restoreChange) retries() int { return 3 }

func (c *restoreChange) replay(_ context.Context, prior *journalEntry) (*PatchResult, error) {
	return replayPatch(prior)
}

func (c *restoreChange) newEntry(snap *Snapshot) *journalEntry {
	return &journalEntry{RequestID: c.reqID, Tool: restoreTool, Author: Author{Client: patchClient(c.who.ClientID), Agent: c.name},
		At: c.s.now().UTC(), OldChecksum: snap.Base.Checksum}
}

// compute takes the kept text of the version asked for.
func (c *restoreChange) compute(ctx context.Context, snap *Snapshot, _ *journalEntry) (string, *PatchResult, error) {
	s, key, v := c.s, c.p.Key, c.from
	rev := snap.Base.Revision
	if v == 0 || v > rev {
		s.log.Info("document restore refused: no such version", "plan", key, "version", v, "current", rev)
		return "", nil, fmt.Errorf("%w: version %d; the document is at version %d (GET …/history lists the versions kept)", ErrNoSuchVersion, v, rev)
	}
	st, err := s.docs.Doc(key)
	if err != nil {
		return "", nil, err
	}
	text, ok, err := s.docs.Text(key, v)
	if err != nil {
		return "", nil, err
	}
	if !ok {
		s.log.Info("document restore refused: version not kept", "plan", key, "version", v, "current", rev)
		return "", nil, fmt.Errorf("%w: talkd no longer keeps the text of version %d (it keeps milestones, people's saves thinned to one per person per hour, and recent versions); GET …/history lists the versions that can be restored", ErrVersionNotKept, v)
	}
	res := &PatchResult{Version: rev, OpsSinceBase: []werkbaum.LineOp{}}
	if text == docstore.Normalize(snap.Text) {
		return snap.Text, res, nil
	}
	data := styleOf(snap.Text).encode(text)
	if int64(len(data)) > s.maxBytes {
		s.log.Info("document restore refused: too large", "plan", key, "version", v, "bytes", len(data))
		return "", nil, fmt.Errorf("%w: version %d has %d bytes, more than the plan limit of %d bytes", werkbaum.ErrTooLarge, v, len(data), s.maxBytes)
	}
	c.doc, c.next = st, text
	return string(data), res, nil
}

func (c *restoreChange) unchanged(*PatchResult, *Snapshot) (*alongside, error) { return nil, nil }

func (c *restoreChange) changed(res *PatchResult, rev uint64, _ string) { res.Version = rev }

// version is the RESTORED version, named after who restored, a milestone.
func (c *restoreChange) version(entry *journalEntry, rev uint64, _ string) (*docstore.Doc, *docstore.Version) {
	return c.doc, &docstore.Version{Rec: docs.Record{Version: rev, ChangeType: ChangeRestored, ClientID: c.who.ClientID,
		DisplayName: c.name, Client: c.who.Client, Milestone: true, RestoredFrom: c.from, At: entry.At}, Text: c.next}
}

func (c *restoreChange) moved(_ context.Context, entry *journalEntry, werr error) error {
	if err := c.s.forget(c.p.Key, entry); err != nil {
		c.s.log.Error("journal: forget failed restore", "plan", c.p.Key, "err", err)
	}
	return werr
}

func (c *restoreChange) decode(settled *journalEntry) (*PatchResult, error) {
	var res PatchResult
	if err := json.Unmarshal(settled.Result, &res); err != nil {
		return nil, fmt.Errorf("journal result of restore %s: %w", settled.RequestID, err)
	}
	return &res, nil
}

func (c *restoreChange) event(ev *WriteEvent) {
	ev.Tool, ev.RequestID = restoreTool, c.reqID
	ev.Author = Author{Client: c.who.ClientID, Agent: c.name}
}

func (c *restoreChange) logs() commitLogs {
	return commitLogs{forget: "journal: forget failed restore", failed: "document restore: plan write failed",
		settle: "journal: settling an applied restore failed; kept in memory and saved in the background",
		attrs:  []any{"client_id", c.who.ClientID, "restored", c.from}}
}

// settledRestore completes the version record of a restore that a crash left pending
// and the start found applied (settledVersion).
func settledRestore(rec *docs.Record, e *journalEntry) {
	rec.ChangeType = ChangeRestored
	rec.ClientID = strings.TrimPrefix(e.Author.Client, patchClient(""))
}
