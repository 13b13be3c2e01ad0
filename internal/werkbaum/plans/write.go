package plans

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"talkd/internal/werkbaum"
	"talkd/internal/werkbaum/plans/docstore"
	"talkd/internal/werkbaum/plans/journal"
	"talkd/internal/werkbaum/plans/planfs"
)

// WriteRequest is one write of a plan.
type WriteRequest struct {
	Tool      string // the tool name, recorded in the journal
	RequestID string
	// ArgsHash identifies the request's arguments: the same request id with another hash
	// is refused instead of answered from the journal.
	ArgsHash string
	Base     Base
	Verb     werkbaum.Verb
	Guard    werkbaum.GuardOptions
	Author   Author
}

// WriteResult is the answer of every successful write.
type WriteResult struct {
	Base     Base               `json:"base"`
	Revision uint64             `json:"revision"`
	Changed  bool               `json:"changed"`
	Warnings []werkbaum.Warning `json:"warnings"`
	Added    []werkbaum.Warning `json:"added"`
	Removed  []werkbaum.Warning `json:"removed"`
	// Replayed is set when the answer comes from the journal (a retried request id).
	Replayed bool `json:"replayed,omitempty"`
	// Mirror reports the git mirror's commit for this write ("committed …", "failed …").
	Mirror string `json:"mirror,omitempty"`
}

// Write applies one verb to a plan, strictly one write per plan text at a time. The lane
// is the file's resolved path (or the document's URL), not the key: two keys may name one
// file (for different grants), and writes through both must not rename over each other.
func (s *Service) Write(ctx context.Context, key string, req WriteRequest) (*WriteResult, error) {
	// The plan is looked up once: a Reconfigure meanwhile does not change the file this
	// write works on.
	p, err := s.resolve(key)
	if err != nil {
		return nil, err
	}
	defer p.Release()
	if !p.Remote() {
		// A document server checks the base itself, in the lane (remote.go).
		if err := s.staleBase(ctx, p, req); err != nil {
			return nil, err
		}
	}
	t := s.targetOf(p)
	var res *WriteResult
	var report func(context.Context) string
	func() {
		// The view of the new text is made once the writes pause (warm.go), while the
		// engine's memo still holds the model this write's guards made of it. end runs
		// also when the write panics: a write left counted would hold every later view.
		var wroteKey, wroteSum string
		s.afterWrites.begin()
		defer func() { s.afterWrites.end(wroteKey, wroteSum) }()
		err = s.lanes.Do(ctx, t.lane(), func() error {
			var err error
			res, report, err = commit(ctx, s, t, &verbChange{s: s, p: p, req: req})
			return err
		})
		if err == nil && res.Changed && !res.Replayed && !p.Remote() {
			wroteKey, wroteSum = key, res.Base.Checksum
		}
	}()
	if res != nil && report != nil {
		// Outside the lane: waiting for the mirror's commit never holds up the next write.
		res.Mirror = report(ctx)
	}
	return res, err
}

// verbChange is an agent's write: a verb and its guards, on a base the agent read.
type verbChange struct {
	s   *Service
	p   planfs.Ref
	req WriteRequest
}

func (c *verbChange) entryKey() []byte { return entryKey(c.req.Author.Client, c.req.RequestID) }
func (c *verbChange) retries() int     { return 0 }

func (c *verbChange) replay(ctx context.Context, prior *journalEntry) (*WriteResult, error) {
	return c.s.replay(ctx, c.p, c.req, prior)
}

func (c *verbChange) newEntry(snap *Snapshot) *journalEntry {
	req := c.req
	return &journalEntry{RequestID: req.RequestID, ArgsHash: req.ArgsHash, Tool: req.Tool, Author: req.Author,
		At: c.s.now().UTC(), OldChecksum: snap.Base.Checksum}
}

// compute refuses a stale base (a conflict carrying the text now) and a read-only file,
// then applies the verb and runs the guards.
func (c *verbChange) compute(ctx context.Context, snap *Snapshot, entry *journalEntry) (string, *WriteResult, error) {
	s, key := c.s, c.p.Key
	if c.req.Base.Checksum != snap.Base.Checksum {
		entry.State, entry.Error = StateConflict, "stale base"
		if err := s.record(key, entry); err != nil {
			return "", nil, err
		}
		return "", nil, &ConflictError{Current: snap}
	}
	if !c.p.Remote() {
		if err := s.checkWritable(c.p); err != nil {
			return "", nil, err
		}
	}
	newText, verdict, err := s.runVerb(ctx, key, snap, c.req, entry)
	if err != nil {
		return "", nil, err
	}
	return newText, &WriteResult{Warnings: verdict.Warnings, Added: verdict.Added, Removed: verdict.Removed}, nil
}

func (c *verbChange) unchanged(res *WriteResult, snap *Snapshot) (*alongside, error) {
	res.Base, res.Revision = snap.Base, snap.Base.Revision
	return nil, nil
}

func (c *verbChange) changed(res *WriteResult, rev uint64, sum string) {
	res.Changed = true
	if rev != 0 {
		res.Revision = rev
		res.Base = Base{Revision: rev, Checksum: sum}
	}
}

// version is the write's document version: the process's agent client id, the MCP host's
// name, a milestone.
func (c *verbChange) version(_ *journalEntry, rev uint64, text string) (*docstore.Doc, *docstore.Version) {
	return c.s.agentVersion(c.p.Key, c.req.Author, rev, text)
}

// moved: someone saved the plan while the engine worked; their text stands and this
// write becomes a conflict that carries it.
func (c *verbChange) moved(ctx context.Context, entry *journalEntry, _ error) error {
	return c.s.conflictDuringWrite(ctx, c.p, entry)
}

func (c *verbChange) decode(settled *journalEntry) (*WriteResult, error) {
	var out WriteResult
	if err := json.Unmarshal(settled.Result, &out); err != nil {
		return nil, fmt.Errorf("journal result of %q: %w", c.req.RequestID, err)
	}
	return &out, nil
}

func (c *verbChange) event(ev *WriteEvent) {
	ev.Tool, ev.RequestID, ev.Author = c.req.Tool, c.req.RequestID, c.req.Author
}

func (c *verbChange) logs() commitLogs {
	return commitLogs{forget: "journal: forget failed write", failed: "plan write failed",
		settle: "journal: settling an applied write failed; kept in memory and saved in the background",
		attrs:  []any{"request_id", c.req.RequestID}}
}

// runVerb applies the request's verb to snap's text and runs the guards on the result,
// the one place that does so for file and document plans. Bad input and a guard refusal
// are recorded in the journal as rejected (entry) and answered as errors.
func (s *Service) runVerb(ctx context.Context, key string, snap *Snapshot, req WriteRequest, entry *journalEntry) (string, *werkbaum.GuardResult, error) {
	// One call of the engine for the verb and its guards (Engine.Edit: the new text stays
	// in the script between the two).
	ed, err := s.engine.Edit(ctx, snap.Text, req.Verb, req.Guard)
	if err != nil {
		if errors.Is(err, werkbaum.ErrBadInput) {
			entry.State, entry.Error = StateRejected, err.Error()
			if rerr := s.record(key, entry); rerr != nil {
				return "", nil, rerr
			}
		}
		return "", nil, err
	}
	newText, verdict := ed.Text, ed.Guard
	if !verdict.OK && verdict.Refused != nil {
		refused := &RefusedError{Refusal: *verdict.Refused}
		entry.State, entry.Error = StateRejected, refused.Error()
		entry.Result, _ = json.Marshal(verdict.Refused)
		if err := s.record(key, entry); err != nil {
			return "", nil, err
		}
		return "", nil, refused
	}
	return newText, verdict, nil
}

// settleTx is the transaction that settles an applied write after its rename: the
// journal entry, the plan's new revision and checksum, and its document version
// (putVersion). Agent writes and editor PATCHes settle through it (fileTarget.put).
func (s *Service) settleTx(key string, entry *journalEntry, meta journal.Meta, putVersion func(Tx) error) func(Tx) error {
	return func(tx Tx) error {
		b := tx.Bucket(journal.BucketName(key))
		if err := s.putEntry(b, entry); err != nil {
			return err
		}
		if err := journal.WriteMeta(b, meta); err != nil {
			return err
		}
		return putVersion(tx)
	}
}

// conflictDuringWrite settles a pending write whose file changed before the rename as a
// conflict and answers it with the plan as it is now.
func (s *Service) conflictDuringWrite(ctx context.Context, p planfs.Ref, entry *journalEntry) error {
	key := p.Key
	cur, err := s.read(ctx, p)
	if err != nil {
		if ferr := s.forget(key, entry); ferr != nil {
			s.log.Error("journal: forget failed write", "plan", key, "err", ferr)
		}
		return err
	}
	entry.State, entry.Error = StateConflict, "the plan changed while the write ran"
	entry.NewChecksum, entry.Revision, entry.Result = "", 0, nil
	if err := s.record(key, entry); err != nil {
		return err
	}
	return &ConflictError{Current: cur}
}

// staleBase answers a write on a stale base without waiting for the plan's lane, so that
// many writers racing for one plan do not queue behind each other only to learn they are
// late. Its conflict records go through the group commit (one fsync for many). A request
// id the journal already knows, and a write whose base is current, go on to the lane,
// which checks everything again.
func (s *Service) staleBase(ctx context.Context, p planfs.Ref, req WriteRequest) error {
	key := p.Key
	// The common case, a base that is the content talkd last read or wrote, goes on to the
	// lane without reading the file here (a 10,000-node plan: 470 KB read, copied and
	// hashed): the lane reads it and checks the base again.
	if sum, ok := s.texts.Known(key); ok && sum == req.Base.Checksum {
		return nil
	}
	ek := entryKey(req.Author.Client, req.RequestID)
	if prior, err := s.entry(key, ek); err != nil || prior != nil {
		return nil
	}
	snap, err := s.read(ctx, p)
	if err != nil || snap.Base.Checksum == req.Base.Checksum {
		return nil
	}
	entry := &journalEntry{RequestID: req.RequestID, ArgsHash: req.ArgsHash, Tool: req.Tool, Author: req.Author,
		At: s.now().UTC(), OldChecksum: snap.Base.Checksum, State: StateConflict, Error: "stale base"}
	recorded := false
	err = s.commit.Do(func(tx Tx) error {
		b := tx.Bucket(journal.BucketName(key))
		recorded = b.Get(ek) == nil
		if !recorded {
			return nil // the same request id arrived meanwhile; the lane answers it
		}
		return s.putEntry(b, entry)
	})
	if err != nil {
		return fmt.Errorf("write journal: %w", err)
	}
	if !recorded {
		return nil
	}
	return &ConflictError{Current: snap}
}

// replay answers a request id the journal knows.
func (s *Service) replay(ctx context.Context, p planfs.Ref, req WriteRequest, e *journalEntry) (*WriteResult, error) {
	if e.ArgsHash != req.ArgsHash {
		return nil, fmt.Errorf("%w (request_id %q was a %s at %s); choose a new request_id for a new request",
			ErrRequestReused, req.RequestID, e.Tool, e.At.Format("2006-01-02 15:04:05Z"))
	}
	switch e.State {
	case StateApplied:
		var res WriteResult
		if err := json.Unmarshal(e.Result, &res); err != nil {
			return nil, fmt.Errorf("journal result of %q: %w", req.RequestID, err)
		}
		res.Replayed = true
		return &res, nil
	case StateConflict:
		snap, err := s.read(ctx, p)
		if err != nil {
			return nil, err
		}
		return nil, &ConflictError{Current: snap}
	case StateRejected:
		rej := &RejectedError{Message: e.Error}
		if len(e.Result) > 0 {
			var r werkbaum.Refusal
			if json.Unmarshal(e.Result, &r) == nil {
				rej.Refusal = &r
			}
		}
		return nil, rej
	}
	return nil, fmt.Errorf("request_id %q is in an unexpected journal state %q", req.RequestID, e.State)
}

// record saves e in the journal (through the group commit: concurrent records on all
// plans share one transaction). Settles of the plan's earlier writes that are kept in
// memory (their settle failed) are saved in the same transaction: a write's pending record
// comes before its rename, and once the file holds the new text the checksum rule of a
// restart could no longer tell that those earlier writes were applied.
func (s *Service) record(key string, e *journalEntry) error { return s.recordWith(key, e, nil) }

// recordWith is record with also (nil: nothing) in the same transaction.
func (s *Service) recordWith(key string, e *journalEntry, also *alongside) error {
	kept := s.mem.KeptOf(key)
	err := s.commit.Do(func(tx Tx) error {
		if err := s.mem.PutKept(tx, kept); err != nil {
			return err
		}
		if also != nil {
			if err := also.put(tx); err != nil {
				return err
			}
		}
		return s.putEntry(tx.Bucket(journal.BucketName(key)), e)
	})
	if err != nil {
		return fmt.Errorf("write journal: %w", err)
	}
	s.mem.ForgetKept(kept)
	if also != nil {
		also.saved()
	}
	return nil
}

// forget removes e's record: the request never took effect, and its id is unknown again.
func (s *Service) forget(key string, e *journalEntry) error {
	return s.commit.Do(func(tx Tx) error {
		return tx.Bucket(journal.BucketName(key)).Delete(keyOf(e))
	})
}

// checkWritable refuses a write to a read-only plan file before any work is done (the
// write's rename checks again under the folder lock). A file that keeps being replaced
// while it is opened is left to that check too, which answers a conflict: the text the
// write started from is no longer there.
func (s *Service) checkWritable(p planfs.Ref) error {
	key, path := p.Key, p.Path
	pf, err := planfs.Open(p, s.maxBytes)
	if errors.Is(err, errPlanSwapped) {
		return nil
	}
	if err != nil {
		return err
	}
	fi := pf.Info()
	pf.Close()
	if err := planfs.WritableError(key, fi); err != nil {
		s.log.Warn("plan write refused: the file is read-only", "plan", key, "path", path, "mode", fi.Mode().Perm().String())
		return err
	}
	return nil
}
