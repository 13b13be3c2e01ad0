package plans

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"unicode/utf8"

	"talkd/internal/werkbaum"
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
	case n > maxClientField || !utf8.ValidString(p.ClientID):
		return &werkbaum.InputError{Code: "badPatch", Message: fmt.Sprintf("clientId: %d characters, at most %d allowed", n, maxClientField)}
	}
	if n := utf8.RuneCountInString(p.DisplayName); n > maxClientField || !utf8.ValidString(p.DisplayName) {
		return &werkbaum.InputError{Code: "badPatch", Message: fmt.Sprintf("displayName: %d characters, at most %d allowed", n, maxClientField)}
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
	defer pl.release()
	var res *PatchResult
	err = s.lanes.Do(ctx, pl.Path, func() error {
		var err error
		// AfterWrite's report is not called: it would wait for the mirror's commit, and
		// the document protocol has no place for its answer; the commit goes on anyway.
		res, _, err = s.patch(ctx, pl, p)
		return err
	})
	return res, err
}

func (s *Service) patch(ctx context.Context, pl planRef, p ContentPatch) (*PatchResult, func(context.Context) string, error) {
	key := pl.Key
	reqID := strconv.FormatInt(p.Seq, 10)
	ek := entryKey(patchClient(p.ClientID), reqID)
	defer s.mem.begin(key, ek)()
	prior, err := s.entry(key, ek)
	if err != nil {
		return nil, nil, fmt.Errorf("read journal: %w", err)
	}
	if prior != nil && prior.State == statePending {
		if prior, err = s.settleByFile(pl, prior); err != nil {
			return nil, nil, err
		}
	}
	if prior != nil {
		res, err := replayPatch(prior)
		return res, nil, err
	}
	for attempt := 0; ; attempt++ {
		res, report, err := s.patchOnce(ctx, pl, reqID, p)
		if errors.Is(err, errFileMoved) && attempt < 3 && ctx.Err() == nil {
			// The file was saved outside talkd while this patch was computed: the next
			// read makes that save a version, and the patch rebases onto it.
			continue
		}
		return res, report, err
	}
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

func (s *Service) patchOnce(ctx context.Context, pl planRef, reqID string, p ContentPatch) (*PatchResult, func(context.Context) string, error) {
	key, path := pl.Key, pl.Path
	snap, err := s.read(ctx, pl)
	if err != nil {
		return nil, nil, err
	}
	st, err := s.docState(key)
	if err != nil {
		return nil, nil, err
	}
	rev := snap.Base.Revision
	style := styleOf(snap.Text)
	cur := docText(snap.Text)
	entry := &journalEntry{RequestID: reqID, Tool: patchTool, Author: Author{Client: patchClient(p.ClientID), Agent: p.DisplayName},
		At: s.now().UTC(), OldChecksum: snap.Base.Checksum}
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
			return nil, nil, reject(fmt.Sprintf("checksum mismatch: the base version %d has checksum %s, the patch says %s", rev, sum, p.Checksum))
		}
	case p.BaseVersion > rev:
		return nil, nil, reject(fmt.Sprintf("base version %d is unknown: the document is at version %d", p.BaseVersion, rev))
	default:
		base, ok, err := s.versionText(key, p.BaseVersion)
		if err != nil {
			return nil, nil, err
		}
		if !ok {
			return nil, nil, reject(fmt.Sprintf("base version %d is no longer available (compacted); the document is at version %d: reload it", p.BaseVersion, rev))
		}
		if sum := werkbaum.DocumentChecksum(base); sum != p.Checksum {
			return nil, nil, reject(fmt.Sprintf("checksum mismatch: the base version %d has checksum %s, the patch says %s", p.BaseVersion, sum, p.Checksum))
		}
		if _, err := s.engine.ApplyLines(ctx, base, ops); err != nil {
			if msg, bad := inputMessage(err); bad {
				return nil, nil, reject(fmt.Sprintf("the ops do not apply to base version %d: %s", p.BaseVersion, msg))
			}
			return nil, nil, err
		}
		if since, err = s.engine.DiffLines(ctx, base, cur); err != nil {
			return nil, nil, fmt.Errorf("diff since base version %d: %w", p.BaseVersion, err)
		}
		if since == nil {
			since = []werkbaum.LineOp{}
		}
		rebased, ok, err := s.engine.RebaseLines(ctx, ops, since)
		if err != nil {
			return nil, nil, fmt.Errorf("rebase onto version %d: %w", rev, err)
		}
		if !ok {
			c := &PatchConflict{CurrentVersion: rev, OpsSinceBase: since}
			entry.State, entry.Error = StateConflict, "the ops overlap changes since the base"
			entry.Result, _ = json.Marshal(c)
			if err := s.record(key, entry); err != nil {
				return nil, nil, err
			}
			s.log.Info("document patch conflict", "plan", key, "client_id", p.ClientID, "seq", p.Seq, "base", p.BaseVersion, "version", rev)
			return nil, nil, c
		}
		ops = rebased
	}
	next, err := s.engine.ApplyLines(ctx, cur, ops)
	if err != nil {
		if msg, bad := inputMessage(err); bad {
			return nil, nil, reject(fmt.Sprintf("the ops do not apply to version %d: %s", rev, msg))
		}
		return nil, nil, err
	}
	res := &PatchResult{Version: rev, OpsSinceBase: since}
	if next == cur {
		entry.State, entry.Revision, entry.NewChecksum = StateApplied, rev, snap.Base.Checksum
		entry.Result, _ = json.Marshal(res)
		return res, nil, s.record(key, entry)
	}

	data := style.encode(next)
	if int64(len(data)) > s.maxBytes {
		// An editor's PATCH skips the guards, which refuse such a text for agents: without
		// this the plan would be written and then be refused by every read.
		return nil, nil, reject(fmt.Sprintf("the result would have %d bytes, more than the plan limit of %d bytes (the notation engine's input limit)", len(data), s.maxBytes))
	}
	newSum := werkbaum.Checksum(data)
	res.Version = rev + 1
	entry.State, entry.NewChecksum, entry.Revision = statePending, newSum, res.Version
	entry.Result, _ = json.Marshal(res)
	if err := s.record(key, entry); err != nil {
		return nil, nil, err
	}
	defer s.docWriting(key, res.Version)()
	if werr := s.writeAtomic(pl, data, snap.Base.Checksum); werr != nil {
		if errors.Is(werr, errFileMoved) {
			if err := s.forget(key, entry); err != nil {
				s.log.Error("journal: forget failed patch", "plan", key, "err", err)
			}
			return nil, nil, werr
		}
		if now, rerr := pl.readFile(); rerr == nil && werkbaum.Checksum(now) == newSum {
			s.log.Warn("plan written but not fully synced", "plan", key, "err", werr)
		} else {
			if err := s.forget(key, entry); err != nil {
				s.log.Error("journal: forget failed patch", "plan", key, "err", err)
			}
			s.log.Error("document patch: plan write failed", "plan", key, "path", path, "err", werr)
			if errors.Is(werr, errReadOnly) {
				return nil, nil, werr
			}
			return nil, nil, fmt.Errorf("write the file of plan %q: %w", key, unpath(werr))
		}
	}
	entry.State = StateApplied
	meta := planMeta{Revision: res.Version, Checksum: newSum}
	name := p.DisplayName
	pv := &pendingVersion{rec: versionRecord{Version: res.Version, ChangeType: ChangeUpdated, ClientID: p.ClientID,
		DisplayName: name, Milestone: p.Milestone, At: entry.At}, text: next}
	err = s.settleApplied(key, entry, meta, func(tx Tx) error { return s.putVersion(tx, key, st, pv) })
	if err != nil {
		// As for an agent write: the file is written, the answer is the truth; the
		// journal keeps the settle in memory, and the version waits for the read that
		// records the revision (with the editor as its author).
		s.log.Error("journal: settling an applied document patch failed; kept in memory and saved in the background", "plan", key, "client_id", p.ClientID, "seq", p.Seq, "err", err)
		s.keepApplied(key, entry, meta)
		s.keepVersion(st, pv)
	} else {
		s.mem.metaSaved(key, meta)
		s.versionSaved(key, st, pv)
	}
	var report func(context.Context) string
	if s.after != nil {
		report = s.after(ctx, WriteEvent{Plan: key, Path: path, Lang: pl.Lang, Tool: patchTool, RequestID: reqID,
			Author: Author{Client: p.ClientID, Agent: name}, Revision: res.Version, OldText: snap.Text, NewText: string(data)})
	}
	return res, report, nil
}

// inputMessage returns the message of a *werkbaum.InputError.
func inputMessage(err error) (string, bool) {
	var ie *werkbaum.InputError
	if errors.As(err, &ie) {
		return ie.Message, true
	}
	return "", false
}
