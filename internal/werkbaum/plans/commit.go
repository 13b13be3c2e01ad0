package plans

// The one journalled commit. An agent's write (Write, over a file or a document server)
// and an editor's PATCH (PatchContent, over a file) are the same protocol, written here
// once: entry key → begin → settle a pending entry whose writer is gone → replay a known
// request → read → base check and compute (the change) → record a no-change answer, or
// put the new text (pending record, durable before the rename → store → failure handling
// → settle with the document version, queued on the group commit after the answer for a
// file) → the after-hook, inside the caller's lane. What differs is behind two small
// interfaces: where the text lives (target: fileTarget, remoteTarget) and what the write
// does to it (change: verbChange, patchChange).

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"talkd/internal/werkbaum"
	"talkd/internal/werkbaum/plans/docstore"
	"talkd/internal/werkbaum/plans/journal"
	"talkd/internal/werkbaum/plans/planfs"
	"talkd/internal/werkbaum/plans/remote"
)

// target is where a plan's text lives, chosen when the plan is resolved.
type target interface {
	ref() planfs.Ref
	// lane is the Serializer key of the text: the resolved path of a file, the URL of a
	// document (two keys naming one text share it).
	lane() string
	read(ctx context.Context) (*Snapshot, error)
	// settle settles a pending entry whose writer is gone; nil: not applied (forgotten).
	settle(ctx context.Context, e *journalEntry) (*journalEntry, error)
	// put records w's entry as pending, stores the new text and settles the entry (a
	// file: in the background, after the answer). It returns the settled entry (applied,
	// or a conflict a document server answered) and a func the commit calls once its
	// after-hook ran (nil: nothing to end).
	put(ctx context.Context, w *commitWrite) (*journalEntry, func(), error)
}

// change is what one write does to a plan's text; R is its answer (*WriteResult,
// *PatchResult).
type change[R any] interface {
	entryKey() []byte
	// retries is how often a write whose file moved under it (errFileMoved) runs again.
	retries() int
	replay(ctx context.Context, prior *journalEntry) (R, error)
	newEntry(snap *Snapshot) *journalEntry
	// compute checks the base and computes the new text (the file's bytes) and the
	// answer; a conflict or a refusal is recorded in the journal by compute and answered
	// as an error.
	compute(ctx context.Context, snap *Snapshot, e *journalEntry) (string, R, error)
	// unchanged completes the answer of a write that left the text as it was. What it
	// returns (nil: nothing) is recorded in the transaction of the answer's journal
	// record: an empty milestone PATCH marks the current version.
	unchanged(res R, snap *Snapshot) (*alongside, error)
	// changed completes the answer of a write that makes revision rev with checksum sum
	// (0 and "": the document server gives them when it applies the write).
	changed(res R, rev uint64, sum string)
	// version is the document version the settle records (nil: none).
	version(e *journalEntry, rev uint64, text string) (*docstore.Doc, *docstore.Version)
	// moved answers a write whose file was saved by someone else before the rename
	// (werr wraps errFileMoved).
	moved(ctx context.Context, e *journalEntry, werr error) error
	// decode is the answer a settled entry carries (a document server's version).
	decode(settled *journalEntry) (R, error)
	// event fills the after-hook's Tool, RequestID and Author.
	event(ev *WriteEvent)
	logs() commitLogs
}

// alongside is a change of the store that a write without a new text makes in the
// transaction of its journal record: put runs in it (maybe more than once), saved after
// it committed.
type alongside struct {
	put   func(Tx) error
	saved func()
}

// commitLogs are the log lines of a commit's failures, worded for its change.
type commitLogs struct {
	forget string // "journal: forget failed write"
	failed string // "plan write failed"
	settle string // "journal: settling an applied write failed; …"
	attrs  []any  // what identifies the request
}

// commitWrite is a changed text on its way into its target.
type commitWrite struct {
	key   string
	entry *journalEntry
	snap  *Snapshot
	text  string
	// result completes and encodes the answer at revision rev with checksum sum.
	result  func(rev uint64, sum string) []byte
	version func(rev uint64) (*docstore.Doc, *docstore.Version)
	moved   func(ctx context.Context, werr error) error
	author  Author
	logs    commitLogs
}

// commit runs c on t; the caller holds t's lane. The report (the after-hook's, nil when
// the text did not change) is for the caller to run outside the lane.
func commit[R any](ctx context.Context, s *Service, t target, c change[R]) (R, func(context.Context) string, error) {
	var zero R
	key, ek := t.ref().Key, c.entryKey()
	defer s.mem.Begin(key, ek)()
	prior, err := s.entry(key, ek)
	if err != nil {
		return zero, nil, fmt.Errorf("read journal: %w", err)
	}
	if prior != nil && prior.State == statePending {
		// This write holds the lane, so the writer of that entry is gone: it failed
		// without settling it. The target says whether it took effect; if not, the
		// request runs now (its new record replaces the old one).
		if prior, err = t.settle(ctx, prior); err != nil {
			return zero, nil, err
		}
	}
	if prior != nil {
		res, err := c.replay(ctx, prior)
		return res, nil, err
	}
	for attempt := 0; ; attempt++ {
		res, report, err := commitOnce(ctx, s, t, c)
		if errors.Is(err, errFileMoved) && attempt < c.retries() && ctx.Err() == nil {
			// The file was saved outside talkd while this write was computed: the next
			// read makes that save a version, and the write runs on it.
			continue
		}
		return res, report, err
	}
}

func commitOnce[R any](ctx context.Context, s *Service, t target, c change[R]) (R, func(context.Context) string, error) {
	var zero R
	p := t.ref()
	key := p.Key
	snap, err := t.read(ctx)
	if err != nil {
		return zero, nil, err
	}
	entry := c.newEntry(snap)
	if ek := c.entryKey(); !bytes.Equal(keyOf(entry), ek) {
		// The entry would be recorded where neither the running mark nor a retry's
		// lookup (both under entryKey) finds it: a change whose two keys disagree.
		return zero, nil, fmt.Errorf("journal: the %s entry of client %q would be kept under %q, but its request is looked up under %q", entry.Tool, entry.Author.Client, keyOf(entry), ek)
	}
	newText, res, err := c.compute(ctx, snap, entry)
	if err != nil {
		return zero, nil, err
	}
	if newText == snap.Text {
		also, err := c.unchanged(res, snap)
		if err != nil {
			return zero, nil, err
		}
		entry.State, entry.Revision, entry.NewChecksum = StateApplied, snap.Base.Revision, snap.Base.Checksum
		entry.Result, _ = json.Marshal(res)
		if err := s.recordWith(key, entry, also); err != nil {
			return zero, nil, err
		}
		return res, nil, nil
	}
	w := &commitWrite{key: key, entry: entry, snap: snap, text: newText, logs: c.logs(),
		result: func(rev uint64, sum string) []byte {
			c.changed(res, rev, sum)
			raw, _ := json.Marshal(res)
			return raw
		},
		version: func(rev uint64) (*docstore.Doc, *docstore.Version) { return c.version(entry, rev, newText) },
		moved:   func(ctx context.Context, werr error) error { return c.moved(ctx, entry, werr) },
	}
	ev := WriteEvent{Plan: key, Path: p.Path, Lang: p.Lang, Mirror: p.Mirror, Announce: p.Announce, OldText: snap.Text, NewText: newText}
	c.event(&ev)
	w.author = ev.Author
	settled, done, err := t.put(ctx, w)
	if done != nil {
		defer done()
	}
	if err != nil {
		return zero, nil, err
	}
	if settled.State != StateApplied {
		res, err := c.replay(ctx, settled)
		return res, nil, err
	}
	if settled != entry {
		// Settled by its target's answer (a document server's version): the answer is
		// the settled entry's.
		if res, err = c.decode(settled); err != nil {
			return zero, nil, err
		}
	}
	var report func(context.Context) string
	if s.recorder != nil {
		ev.Revision = settled.Revision
		report = s.recorder.AfterWrite(ctx, ev)
	}
	return res, report, nil
}

// fileTarget is a plan file.
type fileTarget struct {
	s *Service
	p planfs.Ref
}

func (t fileTarget) ref() planfs.Ref                             { return t.p }
func (t fileTarget) lane() string                                { return t.p.Path }
func (t fileTarget) read(ctx context.Context) (*Snapshot, error) { return t.s.read(ctx, t.p) }
func (t fileTarget) settle(_ context.Context, e *journalEntry) (*journalEntry, error) {
	return t.s.settleByFile(t.p, e)
}

// put writes the file: the pending record before the rename (the rename is the commit
// point), and the settle with the document version in one transaction after it, which
// the answer does not wait for.
func (t fileTarget) put(ctx context.Context, w *commitWrite) (*journalEntry, func(), error) {
	s, p, key, entry := t.s, t.p, w.key, w.entry
	data := []byte(w.text) // one copy for the hash and the file (a 10,000-node plan: 470 KB)
	newSum := werkbaum.Checksum(data)
	rev := w.snap.Base.Revision + 1
	entry.State, entry.NewChecksum, entry.Revision = statePending, newSum, rev
	entry.Result = w.result(rev, newSum)
	// The pending record must be durable before the rename, not before the temp file:
	// its commit (two syncs) runs while the temp file is written and synced, and the
	// rename waits for both. A crash before the record leaves only a temp file, which
	// recovery removes.
	recorded := make(chan error, 1)
	go func() { recorded <- s.record(key, entry) }()
	waitRecord := sync.OnceValue(func() error { return <-recorded })
	done := s.docWriting(key, rev) // this write records its document version itself
	werr := s.folders.WriteAtomic(p, data, w.snap.Base.Checksum, s.maxBytes, s.lockTimeout, waitRecord)
	if err := waitRecord(); err != nil {
		// No rename happened: WriteAtomic waits for the record before it, and stopped
		// there or earlier.
		return nil, done, err
	}
	if werr != nil {
		if errors.Is(werr, errFileMoved) {
			// Someone saved the plan while the engine worked: their text stands.
			return nil, done, w.moved(ctx, werr)
		}
		// The rename is the commit point: if it happened after all (only the folder sync
		// failed), the write stands; otherwise the request never took effect.
		if data, rerr := p.ReadFile(); rerr == nil && werkbaum.Checksum(data) == newSum {
			s.log.Warn("plan written but not fully synced", "plan", key, "err", werr)
		} else {
			if err := s.forget(key, entry); err != nil {
				s.log.Error(w.logs.forget, "plan", key, "err", err)
			}
			s.log.Error(w.logs.failed, "plan", key, "path", p.Path, "err", werr)
			if errors.Is(werr, errReadOnly) {
				return nil, done, werr
			}
			return nil, done, fmt.Errorf("write the file of plan %q: %w", key, planfs.Unpath(werr))
		}
	}
	// The next read hashes the file again (its identity is new) and keeps this string.
	s.texts.Wrote(key, w.text, newSum)
	// The rename is the commit point: the file is synced and the pending record durable,
	// so the write is applied and the answer need not wait for its settle. The settle (the
	// entry, the revision and the document version in one transaction) is queued on the
	// group commit, where every later journal change of this plan queues behind it: the
	// next write's pending record cannot be durable before it, so a crash never leaves
	// the checksum rule of a restart a file that hides this write. Until it commits, the
	// journal's memory answers operation_get, retries and reads with the applied entry and
	// the revision, and the readers of the document's versions wait for its version
	// (Doc.Renamed); the plan's next write does not, it computes meanwhile. A crash before
	// it leaves the pending entry, which the next start settles from the file
	// (TestPlanCrashAfterAnswerBeforeSettle).
	entry.State = StateApplied
	meta := journal.Meta{Revision: rev, Checksum: newSum}
	doc, pv := w.version(rev)
	settling := *entry // the settle's own copy: the caller reads entry meanwhile
	s.mem.Settling(key, &settling, meta)
	if doc != nil {
		doc.Renamed(rev)
	}
	s.commit.Start(s.settleTx(key, &settling, meta, func(tx Tx) error {
		if doc == nil {
			return nil
		}
		return doc.Put(tx, pv)
	}), func(err error) {
		if err != nil {
			// The journal keeps the write in memory and saves it in the background; its
			// document version waits in memory for the read that records the revision.
			s.log.Error(w.logs.settle, append([]any{"plan", key}, append(w.logs.attrs, "err", err)...)...)
			if doc != nil && pv != nil {
				doc.Keep(pv)
			}
		} else if doc != nil {
			doc.Saved(pv)
		}
		s.mem.Settled(key, &settling, meta, err)
		done()
	})
	return entry, nil, nil
}

// remoteTarget is a document on a Werkbaum document server (remote.go).
type remoteTarget struct {
	s *Service
	p planfs.Ref
}

func (t remoteTarget) ref() planfs.Ref { return t.p }
func (t remoteTarget) lane() string    { return t.p.URL }
func (t remoteTarget) read(ctx context.Context) (*Snapshot, error) {
	return t.s.readRemote(ctx, t.p.Key, t.p.Plan)
}

// settle sends a pending entry's PATCH again: the server's idempotency answers it.
func (t remoteTarget) settle(ctx context.Context, e *journalEntry) (*journalEntry, error) {
	return t.s.settleRemote(ctx, t.p.Key, t.p.Plan, e)
}

// put sends the line diff of the new text as a PATCH against the version read; the
// pending record (with the patch and its seq) comes first, the server's answer settles it.
func (t remoteTarget) put(ctx context.Context, w *commitWrite) (*journalEntry, func(), error) {
	s, key, snap, entry := t.s, w.key, w.snap, w.entry
	ops, err := s.engine.DiffLines(ctx, snap.Text, w.text)
	if err != nil {
		return nil, nil, fmt.Errorf("plan %q: diff the new text: %w", key, err)
	}
	entry.State = statePending
	entry.NewChecksum = werkbaum.Checksum([]byte(w.text))
	patch, err := json.Marshal(&remote.Patch{BaseVersion: snap.Base.Revision, Checksum: werkbaum.DocumentChecksum(snap.Text), ClientID: s.agentClientID,
		DisplayName: remote.DisplayName(t.p.DisplayName, w.author.Agent), Milestone: true, Ops: ops})
	if err != nil {
		return nil, nil, fmt.Errorf("plan %q: encode the patch: %w", key, err)
	}
	entry.Remote = patch
	entry.Result = w.result(0, "")
	if err := s.recordRemotePending(key, entry); err != nil {
		return nil, nil, err
	}
	settled, err := s.settleRemote(ctx, key, t.p.Plan, entry)
	if err != nil {
		return nil, nil, err
	}
	if settled == nil {
		// Cannot happen for a first send (only a definite refusal forgets an entry, and
		// that comes back as an error); answered as "not applied" all the same.
		return nil, nil, fmt.Errorf("plan %q: the document server did not take the write; nothing was changed", key)
	}
	return settled, nil, nil
}

// targetOf is the target of a resolved plan.
func (s *Service) targetOf(p planfs.Ref) target {
	if p.Remote() {
		return remoteTarget{s: s, p: p}
	}
	return fileTarget{s: s, p: p}
}
