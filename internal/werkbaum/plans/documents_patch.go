package plans

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"talkd/internal/werkbaum"
	"talkd/internal/werkbaum/plans/docs"
	"talkd/internal/werkbaum/plans/docstore"
	"talkd/internal/werkbaum/plans/planfs"
)

// patchTool is the journal's tool name of an editor PATCH (and the mirror's WriteEvent.Tool).
const patchTool = "document_patch"

// patchClient is the journal's client of a document client id: PATCH answers live in the
// plan's journal like agent writes, keyed (clientId, seq) instead of (client, request id),
// so a repeat is answered from there and a crash between the rename and the settle is
// settled from the file on the next start, exactly like an agent write. The answers are
// bounded with the journal (Options.JournalLimit entries per plan, oldest dropped first,
// agent requests and every editor's seqs together): far more than the retries of any
// client, which repeat a seq within seconds.
func patchClient(clientID string) string { return "doc:" + clientID }

// checkPatch refuses a malformed patch (400): a missing or too long clientId or display
// name, a negative seq, ops that are unsorted, overlap, have negative numbers or an
// unknown op.
func checkPatch(p ContentPatch) error {
	switch n := utf8.RuneCountInString(p.ClientID); {
	case n == 0:
		return &werkbaum.InputError{Code: "badPatch", Message: "clientId: missing"}
	case n > docs.MaxClientID || !utf8.ValidString(p.ClientID):
		return &werkbaum.InputError{Code: "badPatch", Message: fmt.Sprintf("clientId: %d characters, at most %d allowed", n, docs.MaxClientID)}
	}
	if n := utf8.RuneCountInString(p.DisplayName); n > docs.MaxDisplayName || !utf8.ValidString(p.DisplayName) {
		return &werkbaum.InputError{Code: "badPatch", Message: fmt.Sprintf("displayName: %d characters, at most %d allowed", n, docs.MaxDisplayName)}
	}
	if p.Seq < 0 {
		return &werkbaum.InputError{Code: "badPatch", Message: fmt.Sprintf("seq: %d is negative", p.Seq)}
	}
	return werkbaum.ValidateLineOps(p.Ops)
}

// PatchContent applies an editor's line ops to the document, in the plan's write lane
// (the one of Write: an editor PATCH and an agent write racing on one plan run one after
// the other, and the later one rebases or conflicts, so no line is lost).
//
// Answers: *PatchResult (200; a repeat of (clientId, seq) gets the answer given then),
// *PatchConflict (409: the ops overlap what changed since the base), ErrPatchUnapplicable
// wrapped with the reason (422: checksum mismatch, an op out of range, a compacted or
// unknown base), *werkbaum.InputError (400: malformed ops), ErrUnknownDocument (404).
// The guards do not apply: an editor's PATCH is a person's write.
func (s *Service) PatchContent(ctx context.Context, id string, p ContentPatch) (*PatchResult, error) {
	key, err := s.docPlan(id)
	if err != nil {
		return nil, err
	}
	if err := checkPatch(p); err != nil {
		s.log.Info("document patch refused: malformed", "plan", key, "client_id", p.ClientID, "err", err)
		return nil, err
	}
	// The plan is looked up once, as for an agent write: a Reconfigure meanwhile does not
	// change the file this patch works on.
	pl, err := s.resolve(key)
	if err != nil {
		return nil, fmt.Errorf("%w %q", ErrUnknownDocument, id)
	}
	defer pl.Release()
	t := s.targetOf(pl)
	var res *PatchResult
	err = s.lanes.Do(ctx, t.lane(), func() error {
		var err error
		// The recorder's report is not called: it would wait for the mirror's commit, and
		// the document protocol has no place for its answer; the commit goes on anyway.
		res, _, err = commit(ctx, s, t, &patchChange{s: s, p: pl, patch: p, reqID: strconv.FormatInt(p.Seq, 10)})
		return err
	})
	return res, err
}

// patchChange is an editor's PATCH: line ops on a version of the document, rebased over
// what came since. Its journal client is patchClient(clientId), its request id the seq.
type patchChange struct {
	s     *Service
	p     planfs.Ref
	patch ContentPatch
	reqID string

	// Set by compute, for the settle of the same attempt.
	doc  *docstore.Doc
	next string // the new text, normalised (the document's content)
}

func (c *patchChange) entryKey() []byte {
	return entryKey(patchClient(c.patch.ClientID), c.reqID)
}

// retries: a file saved outside talkd while the patch was computed makes a version on
// the next read, and the patch rebases onto it.
func (c *patchChange) retries() int { return 3 }

func (c *patchChange) replay(_ context.Context, prior *journalEntry) (*PatchResult, error) {
	return replayPatch(prior)
}

func (c *patchChange) newEntry(snap *Snapshot) *journalEntry {
	p := c.patch
	return &journalEntry{RequestID: c.reqID, Tool: patchTool, Author: Author{Client: patchClient(p.ClientID), Agent: p.DisplayName},
		At: c.s.now().UTC(), OldChecksum: snap.Base.Checksum}
}

// replayPatch answers a (clientId, seq) the journal knows with the answer given then.
func replayPatch(e *journalEntry) (*PatchResult, error) {
	switch e.State {
	case StateApplied:
		var res PatchResult
		if err := json.Unmarshal(e.Result, &res); err != nil {
			return nil, fmt.Errorf("journal result of seq %s: %w", e.RequestID, err)
		}
		return &res, nil
	case StateConflict:
		var c PatchConflict
		if err := json.Unmarshal(e.Result, &c); err != nil {
			return nil, fmt.Errorf("journal result of seq %s: %w", e.RequestID, err)
		}
		return nil, &c
	case StateRejected:
		return nil, fmt.Errorf("%w: %s", ErrPatchUnapplicable, e.Error)
	}
	return nil, fmt.Errorf("seq %s is in an unexpected journal state %q", e.RequestID, e.State)
}

// compute checks the base version and its checksum, rebases the ops over the versions
// since (a conflict when they overlap) and applies them; the result keeps the file's BOM
// and line ends and must fit the plan limit.
func (c *patchChange) compute(ctx context.Context, snap *Snapshot, entry *journalEntry) (string, *PatchResult, error) {
	s, key, p := c.s, c.p.Key, c.patch
	st, err := s.docs.Doc(key)
	if err != nil {
		return "", nil, err
	}
	rev := snap.Base.Revision
	style := styleOf(snap.Text)
	cur := docstore.Normalize(snap.Text)
	reject := func(reason string) error {
		entry.State, entry.Error = StateRejected, reason
		if err := s.record(key, entry); err != nil {
			return err
		}
		s.log.Info("document patch refused: does not apply", "plan", key, "client_id", p.ClientID, "seq", p.Seq, "reason", reason)
		return fmt.Errorf("%w: %s", ErrPatchUnapplicable, reason)
	}

	ops := p.Ops
	since := []werkbaum.LineOp{}
	switch {
	case p.BaseVersion == rev:
		if sum := werkbaum.DocumentChecksum(cur); sum != p.Checksum {
			return "", nil, reject(fmt.Sprintf("checksum mismatch: the base version %d has checksum %s, the patch says %s", rev, sum, p.Checksum))
		}
	case p.BaseVersion > rev:
		return "", nil, reject(fmt.Sprintf("base version %d is unknown: the document is at version %d", p.BaseVersion, rev))
	default:
		base, ok, err := s.docs.Text(key, p.BaseVersion)
		if err != nil {
			return "", nil, err
		}
		if !ok {
			return "", nil, reject(fmt.Sprintf("base version %d is no longer available (compacted); the document is at version %d: reload it", p.BaseVersion, rev))
		}
		if sum := werkbaum.DocumentChecksum(base); sum != p.Checksum {
			return "", nil, reject(fmt.Sprintf("checksum mismatch: the base version %d has checksum %s, the patch says %s", p.BaseVersion, sum, p.Checksum))
		}
		if _, err := s.engine.ApplyLines(ctx, base, ops); err != nil {
			if msg, bad := inputMessage(err); bad {
				return "", nil, reject(fmt.Sprintf("the ops do not apply to base version %d: %s", p.BaseVersion, msg))
			}
			return "", nil, err
		}
		if since, err = s.engine.DiffLines(ctx, base, cur); err != nil {
			return "", nil, fmt.Errorf("diff since base version %d: %w", p.BaseVersion, err)
		}
		if since == nil {
			since = []werkbaum.LineOp{}
		}
		rebased, ok, err := s.engine.RebaseLines(ctx, ops, since)
		if err != nil {
			return "", nil, fmt.Errorf("rebase onto version %d: %w", rev, err)
		}
		if !ok {
			conflict := &PatchConflict{CurrentVersion: rev, OpsSinceBase: since}
			entry.State, entry.Error = StateConflict, "the ops overlap changes since the base"
			entry.Result, _ = json.Marshal(conflict)
			if err := s.record(key, entry); err != nil {
				return "", nil, err
			}
			s.log.Info("document patch conflict", "plan", key, "client_id", p.ClientID, "seq", p.Seq, "base", p.BaseVersion, "version", rev)
			return "", nil, conflict
		}
		ops = rebased
	}
	if style.bom {
		ops = withoutLeadingBOM(ops)
	}
	next, err := s.engine.ApplyLines(ctx, cur, ops)
	if err != nil {
		if msg, bad := inputMessage(err); bad {
			return "", nil, reject(fmt.Sprintf("the ops do not apply to version %d: %s", rev, msg))
		}
		return "", nil, err
	}
	res := &PatchResult{Version: rev, OpsSinceBase: since}
	if next == cur {
		return snap.Text, res, nil
	}
	data := style.encode(next)
	if int64(len(data)) > s.maxBytes {
		// An editor's PATCH skips the guards, which refuse such a text for agents: without
		// this the plan would be written and then be refused by every read.
		return "", nil, reject(fmt.Sprintf("the result would have %d bytes, more than the plan limit of %d bytes (the notation engine's input limit)", len(data), s.maxBytes))
	}
	c.doc, c.next = st, next
	return string(data), res, nil
}

// unchanged: a milestone PATCH that changes no line marks the current version.
func (c *patchChange) unchanged(_ *PatchResult, snap *Snapshot) (*alongside, error) {
	if !c.patch.Milestone {
		return nil, nil
	}
	return c.s.markMilestone(c.p.Key, snap.Base.Revision, DocAuthor{ClientID: c.patch.ClientID, DisplayName: c.patch.DisplayName})
}

func (c *patchChange) changed(res *PatchResult, rev uint64, _ string) { res.Version = rev }

// version is the PATCH's document version, under the editor's clientId and name.
func (c *patchChange) version(entry *journalEntry, rev uint64, _ string) (*docstore.Doc, *docstore.Version) {
	p := c.patch
	return c.doc, &docstore.Version{Rec: docs.Record{Version: rev, ChangeType: ChangeUpdated, ClientID: p.ClientID,
		DisplayName: p.DisplayName, Milestone: p.Milestone, At: entry.At}, Text: c.next}
}

// moved: the file was saved outside talkd; the patch is forgotten and runs again.
func (c *patchChange) moved(_ context.Context, entry *journalEntry, werr error) error {
	if err := c.s.forget(c.p.Key, entry); err != nil {
		c.s.log.Error("journal: forget failed patch", "plan", c.p.Key, "err", err)
	}
	return werr
}

func (c *patchChange) decode(settled *journalEntry) (*PatchResult, error) {
	var res PatchResult
	if err := json.Unmarshal(settled.Result, &res); err != nil {
		return nil, fmt.Errorf("journal result of seq %s: %w", settled.RequestID, err)
	}
	return &res, nil
}

func (c *patchChange) event(ev *WriteEvent) {
	ev.Tool, ev.RequestID = patchTool, c.reqID
	ev.Author = Author{Client: c.patch.ClientID, Agent: c.patch.DisplayName}
}

func (c *patchChange) logs() commitLogs {
	return commitLogs{forget: "journal: forget failed patch", failed: "document patch: plan write failed",
		settle: "journal: settling an applied document patch failed; kept in memory and saved in the background",
		attrs:  []any{"client_id", c.patch.ClientID, "seq", c.patch.Seq}}
}

// withoutLeadingBOM drops one U+FEFF from the start of a new line 0 of a file that has a
// BOM: the document's content leaves the file's BOM out and encode puts it back, so a
// line 0 that brings its own would leave two. The ops are copied, not changed.
func withoutLeadingBOM(ops []werkbaum.LineOp) []werkbaum.LineOp {
	for i, op := range ops {
		if op.Index != 0 || len(op.Lines) == 0 || !strings.HasPrefix(op.Lines[0], "\ufeff") {
			continue
		}
		out := append([]werkbaum.LineOp(nil), ops...)
		lines := append([]string(nil), op.Lines...)
		lines[0] = strings.TrimPrefix(lines[0], "\ufeff")
		out[i].Lines = lines
		return out
	}
	return ops
}

// inputMessage returns the message of a *werkbaum.InputError.
func inputMessage(err error) (string, bool) {
	var ie *werkbaum.InputError
	if errors.As(err, &ie) {
		return ie.Message, true
	}
	return "", false
}
