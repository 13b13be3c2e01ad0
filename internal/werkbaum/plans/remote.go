package plans

// Plans kept on a Werkbaum document server ([[plans]] url = …, DOCUMENTS.md): a read is a
// GET of the document, a write runs the same verb and guards as for a file and sends the
// line diff of the result as PATCH …/content against the version it read. The journal
// works as for files, except that a pending write is settled by sending the same PATCH
// again, with the same (clientId, seq): the server's idempotency answers what it answered
// the first time, or applies it now if it never got it.

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"talkd/internal/config"
	"talkd/internal/werkbaum"
	"talkd/internal/werkbaum/plans/journal"
	"talkd/internal/werkbaum/plans/remote"
)

// remoteSummaryWait bounds the read of a document plan for its summary (/status,
// plans_list): a hanging server then costs a status one second, not ten.
const remoteSummaryWait = time.Second

// remoteBodyLimit bounds a document server's answer: the largest plan the store takes,
// JSON-escaped (up to six bytes a byte), and room for the rest of the document.
func (s *Service) remoteBodyLimit() int64 { return werkbaum.JSONBodyLimit(s.maxBytes) }

// readRemote is Read for a document plan: GET the document; its version is the base's
// revision. The base's checksum is the same as a file plan's (the hex SHA-256 of the
// text), what the tools take; the patch's checksum is the protocol's ("sha256:" + hex of
// the LF-normalised text), computed when the patch is made.
func (s *Service) readRemote(ctx context.Context, key string, p config.Plan) (*Snapshot, error) {
	status, location, body, err := s.remote.Do(ctx, remote.Call{Plan: key, Token: p.BearerToken(), Method: http.MethodGet, URL: p.URL, Request: "GET " + p.URL}, s.remoteBodyLimit())
	if err != nil {
		s.log.Warn("document plan unreadable", "plan", key, "url", p.URL, "err", err)
		return nil, err
	}
	if status != http.StatusOK {
		err := &RemoteError{Plan: key, Server: remote.HostOf(p.URL), Request: "GET " + p.URL, Status: status, Detail: remote.ProblemDetail(body), Hint: remote.StatusHint(p.TokenEnv, status), Location: location}
		s.log.Warn("document plan unreadable", "plan", key, "url", p.URL, "status", status, "err", err)
		return nil, err
	}
	var doc remote.Document
	if err := json.Unmarshal(body, &doc); err != nil {
		err := &RemoteError{Plan: key, Server: remote.HostOf(p.URL), Request: "GET " + p.URL, Status: status, Detail: "the answer is not a document: " + err.Error()}
		s.log.Warn("document plan unreadable", "plan", key, "url", p.URL, "err", err)
		return nil, err
	}
	if int64(len(doc.Content)) > s.maxBytes {
		return nil, fmt.Errorf("plan %q: the document has %d bytes, more than the %d the engine takes: %w", key, len(doc.Content), s.maxBytes, werkbaum.ErrTooLarge)
	}
	text := doc.Content
	return &Snapshot{Text: text, Base: Base{Revision: doc.Version, Checksum: werkbaum.Checksum([]byte(text))}, Lines: countLines(text)}, nil
}

// The journal's database keeps the running seq of this daemon's patches in one counter,
// across restarts and clientIds, so no seq is ever sent twice for different patches.
var (
	bucketRemote = []byte("remote")
	keyPatchSeq  = []byte("patch-seq")
)

// recordRemotePending saves a pending document write and gives its patch the next seq,
// in one transaction: the seq is spent exactly when the patch it names is recorded.
func (s *Service) recordRemotePending(key string, e *journalEntry) error {
	kept := s.mem.KeptOf(key)
	err := s.commit.Do(func(tx Tx) error {
		if err := s.mem.PutKept(tx, kept); err != nil {
			return err
		}
		rb, err := tx.CreateBucket(bucketRemote)
		if err != nil {
			return err
		}
		var seq uint64
		if v := rb.Get(keyPatchSeq); len(v) == 8 {
			seq = binary.BigEndian.Uint64(v)
		}
		seq++
		var sv [8]byte
		binary.BigEndian.PutUint64(sv[:], seq)
		if err := rb.Put(keyPatchSeq, sv[:]); err != nil {
			return err
		}
		var patch remote.Patch
		if err := json.Unmarshal(e.Remote, &patch); err != nil {
			return fmt.Errorf("document patch of %q: %w", e.RequestID, err)
		}
		patch.Seq = int64(seq)
		if e.Remote, err = json.Marshal(&patch); err != nil {
			return err
		}
		return s.putEntry(tx.Bucket(journal.BucketName(key)), e)
	})
	if err != nil {
		return fmt.Errorf("write journal: %w", err)
	}
	s.mem.ForgetKept(kept)
	return nil
}

// settleRemote sends a pending entry's PATCH (again: the same body, the same (clientId,
// seq)) and settles the entry by the answer: 200 applied, 409 and 422 a conflict (the
// text is read again), another 4xx not applied (forgotten, nil). No answer, a timeout or a
// 5xx leave the entry pending and come back as a *RemoteError that says so.
func (s *Service) settleRemote(ctx context.Context, key string, p config.Plan, e *journalEntry) (*journalEntry, error) {
	if e.Remote == nil {
		return nil, fmt.Errorf("plan %q: pending journal entry %q has no document patch to send", key, e.RequestID)
	}
	var patch remote.Patch
	if err := json.Unmarshal(e.Remote, &patch); err != nil {
		return nil, fmt.Errorf("plan %q: the document patch of pending journal entry %q: %w", key, e.RequestID, err)
	}
	request := "PATCH " + p.URL + "/content"
	// Once sent, the PATCH is seen through even if the caller hangs up (bounded by the
	// request timeout): its answer settles the entry instead of leaving it pending.
	ctx = context.WithoutCancel(ctx)
	status, location, body, err := s.remote.Do(ctx, remote.Call{Plan: key, Token: p.BearerToken(), Method: http.MethodPatch, URL: p.URL + "/content", Request: request, Body: &patch}, 1<<20+s.remoteBodyLimit())
	if err != nil {
		var re *RemoteError
		if errors.As(err, &re) {
			re.MaybeApplied = true
		}
		s.log.Warn("document write unsettled: no answer from the server", "plan", key, "url", p.URL, "request_id", e.RequestID,
			"client_id", patch.ClientID, "seq", patch.Seq, "err", err)
		return nil, err
	}
	settled := *e
	settled.Remote = nil // kept only while pending: a settled entry needs no patch (and a whole text's ops are large)
	switch {
	case status == http.StatusOK:
		var ans remote.PatchAnswer
		if err := json.Unmarshal(body, &ans); err != nil || ans.Version == 0 {
			err := &RemoteError{Plan: key, Server: remote.HostOf(p.URL), Request: request, Status: status, MaybeApplied: true,
				Detail: fmt.Sprintf("the answer is not a patch result (%s)", remote.ProblemDetail(body))}
			s.log.Warn("document write unsettled", "plan", key, "request_id", e.RequestID, "err", err)
			return nil, err
		}
		var res WriteResult
		if err := json.Unmarshal(e.Result, &res); err != nil {
			return nil, fmt.Errorf("journal result of %q: %w", e.RequestID, err)
		}
		res.Revision = ans.Version
		res.Base = Base{Revision: ans.Version, Checksum: e.NewChecksum}
		if len(ans.OpsSinceBase) > 0 {
			// The server rebased the patch over other writes: the text now is not the one
			// this write computed. Report the base of the document as it is now.
			if cur, err := s.readRemote(ctx, key, p); err == nil {
				res.Base = cur.Base
			} else {
				// A base that matches no text: the next write is answered as a conflict
				// carrying the current text, which is true and safe.
				res.Base = Base{Revision: ans.Version}
			}
		}
		settled.State, settled.Revision, settled.NewChecksum, settled.Error = StateApplied, ans.Version, res.Base.Checksum, ""
		settled.Result, _ = json.Marshal(res)
		if err := s.record(key, &settled); err != nil {
			// The server applied it; the caller gets the truth, and the journal keeps it in
			// memory until it can be saved (a crash before that leaves the pending entry,
			// whose PATCH the next settle repeats: the server answers the same).
			s.log.Error("journal: settling an applied document write failed; kept in memory and saved in the background", "plan", key, "request_id", e.RequestID, "err", err)
			s.mem.KeepApplied(key, &settled, journal.Meta{})
		}
		s.log.Info("document write applied", "plan", key, "request_id", e.RequestID, "version", ans.Version,
			"client_id", patch.ClientID, "seq", patch.Seq, "rebased", len(ans.OpsSinceBase) > 0)
		return &settled, nil
	case status == http.StatusConflict || status == http.StatusUnprocessableEntity:
		reason := "the document changed since the base and the changes overlap (the server answered 409)"
		if status == http.StatusUnprocessableEntity {
			reason = "the document server could not apply the diff (422: " + remote.ProblemDetail(body) + ")"
		}
		settled.State, settled.Error, settled.Revision, settled.Result = StateConflict, reason, 0, nil
		if err := s.record(key, &settled); err != nil {
			return nil, err
		}
		s.log.Info("document write conflict", "plan", key, "request_id", e.RequestID, "status", status, "reason", reason)
		return &settled, nil
	case status >= 500:
		err := &RemoteError{Plan: key, Server: remote.HostOf(p.URL), Request: request, Status: status, Detail: remote.ProblemDetail(body), MaybeApplied: true}
		s.log.Warn("document write unsettled: the server failed", "plan", key, "request_id", e.RequestID, "status", status, "err", err)
		return nil, err
	case remote.IsRedirect(status):
		// A redirect talkd did not follow: the change went nowhere (the answering server
		// sent it elsewhere instead of taking it). The entry is forgotten, so the request
		// id is unknown again and its retry runs anew from a fresh read of the document.
		if err := s.forget(key, e); err != nil {
			s.log.Error("journal: forget redirected document write", "plan", key, "err", err)
		}
		err := &RemoteError{Plan: key, Server: remote.HostOf(p.URL), Request: request, Status: status, Location: location}
		s.log.Warn("document write refused: the server answered a redirect", "plan", key, "request_id", e.RequestID, "status", status, "location", location, "err", err)
		return nil, err
	default:
		// A definite refusal (400, 401, 403, 404, …): the server did not apply it.
		if err := s.forget(key, e); err != nil {
			s.log.Error("journal: forget refused document write", "plan", key, "err", err)
		}
		err := &RemoteError{Plan: key, Server: remote.HostOf(p.URL), Request: request, Status: status, Detail: remote.ProblemDetail(body), Hint: remote.StatusHint(p.TokenEnv, status)}
		s.log.Warn("document write refused by the server", "plan", key, "request_id", e.RequestID, "status", status, "err", err)
		return nil, err
	}
}
