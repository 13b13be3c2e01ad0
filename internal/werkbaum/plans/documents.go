package plans

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"talkd/internal/werkbaum"
	"talkd/internal/werkbaum/plans/docs"
	"talkd/internal/werkbaum/plans/docstore"
	"talkd/internal/werkbaum/plans/journal"
)

// The document store serves every plan as a Werkbaum live document (DOCUMENTS.md): a
// stable UUID, a version that is the plan's revision (the one counter agents see as
// base.revision), a bounded version log with the texts needed for rebasing and history,
// line-diff PATCHes from editors in the plan's write lane, and a change feed. Editor
// PATCHes and agent writes go through the same lane, the same journal and the same
// revision counter, so neither can lose the other's line; every revision, whoever made
// it (an editor, an agent, an edit outside talkd that a read notices), is a version with
// its author.

// Document is a plan as the document protocol shows it. Content is the normalised text
// (LF line endings, no byte order mark); the file keeps its own line endings and BOM.
type Document struct {
	ID        string    `json:"id"`
	Title     string    `json:"title"`
	Content   string    `json:"content"`
	Version   uint64    `json:"version"`
	CreatedAt time.Time `json:"createdAt"` // when talkd first saw the plan as a document
	UpdatedAt time.Time `json:"updatedAt"` // the time of the newest version
}

// ContentPatch is one editor PATCH of a document's content (DOCUMENTS.md ContentPatch).
type ContentPatch struct {
	BaseVersion uint64 `json:"baseVersion"`
	// Checksum is werkbaum.DocumentChecksum of the base text the ops refer to.
	Checksum    string            `json:"checksum"`
	ClientID    string            `json:"clientId"`
	Seq         int64             `json:"seq"`
	DisplayName string            `json:"displayName,omitempty"`
	Milestone   bool              `json:"milestone,omitempty"`
	Ops         []werkbaum.LineOp `json:"ops"`
}

// PatchResult is the 200 answer of a PATCH: the new version, and the ops that other
// writers made since the patch's base (empty when the base was current), so the client
// can bring its shadow copy forward.
type PatchResult struct {
	Version      uint64            `json:"version"`
	OpsSinceBase []werkbaum.LineOp `json:"opsSinceBase"`
}

// ChangeEvent is one version in the change feed.
type ChangeEvent struct {
	Version     uint64 `json:"version"`
	ChangeType  string `json:"changeType"`
	ClientID    string `json:"clientId,omitempty"`
	DisplayName string `json:"displayName,omitempty"`
	Title       string `json:"title,omitempty"` // RENAMED only: the new title
}

// ChangeFeed is the answer of the long poll: ops from FromVersion when the store still
// has that version's text, else the whole Content; Events lists the versions since.
type ChangeFeed struct {
	FromVersion    *uint64           `json:"fromVersion,omitempty"`
	CurrentVersion uint64            `json:"currentVersion"`
	Ops            []werkbaum.LineOp `json:"ops,omitempty"`
	Content        *string           `json:"content,omitempty"`
	Events         []ChangeEvent     `json:"events"`
}

// HistoryEntry is one user-visible state of a document.
type HistoryEntry struct {
	DocumentID  string    `json:"documentId"`
	Version     uint64    `json:"version"`
	Title       string    `json:"title"`
	Content     string    `json:"content"`
	ChangeType  string    `json:"changeType"`
	Timestamp   time.Time `json:"timestamp"`
	ClientID    string    `json:"clientId,omitempty"`
	DisplayName string    `json:"displayName,omitempty"`
	// Milestone: a state someone meant (not a person's ordinary save). MarkedBy names who
	// marked it with an empty milestone PATCH, when someone did.
	Milestone        bool   `json:"milestone"`
	MarkedBy         string `json:"markedBy,omitempty"`
	MarkedByClientID string `json:"markedByClientId,omitempty"`
	// RestoredFrom is the version a RESTORED version brought back (0: a file that came back).
	RestoredFrom uint64 `json:"restoredFrom,omitempty"`
}

// Change types of DOCUMENTS.md that a file-backed plan produces (docs: a version
// record's ChangeType).
const (
	ChangeCreated  = docs.ChangeCreated
	ChangeUpdated  = docs.ChangeUpdated
	ChangeRenamed  = docs.ChangeRenamed
	ChangeDeleted  = docs.ChangeDeleted
	ChangeRestored = docs.ChangeRestored
)

// someoneName is the display name of a person who sent none and whose client id never did.
const someoneName = "someone"

// outsideName is the display name of a version made outside talkd (an editor saving the
// file, a git checkout) that a read noticed.
const outsideName = docstore.OutsideName

// agentName is the display name of an agent write whose MCP host sent no name.
const agentName = "Agent"

// DocumentID returns the plan's document id, creating it (a random UUID v4, kept in the
// state database) on first use.
func (s *Service) DocumentID(ctx context.Context, key string) (string, error) {
	if p, ok := s.Plan(key); !ok {
		return "", fmt.Errorf("%w %q", ErrUnknownPlan, key)
	} else if p.Remote() {
		return "", &RemotePlanError{Key: key, URL: p.URL}
	}
	return s.docs.ID(key)
}

// DocumentKey returns the plan key of a document id (any case), if a configured plan has it.
func (s *Service) DocumentKey(id string) (key string, ok bool) {
	id = strings.ToLower(id)
	if !docs.ValidDocumentID(id) {
		return "", false
	}
	key, ok = s.docs.Key(id)
	if !ok {
		return "", false
	}
	// A plan whose file is gone below a root still has its (deleted) document.
	p, err := s.resolve(key)
	p.Release()
	if err != nil && !errors.Is(err, ErrPlanMissing) || err == nil && p.Remote() {
		return "", false
	}
	return key, true
}

// docPlan resolves a document id to its plan key, or ErrUnknownDocument.
func (s *Service) docPlan(id string) (string, error) {
	key, ok := s.DocumentKey(id)
	if !ok {
		return "", fmt.Errorf("%w %q", ErrUnknownDocument, id)
	}
	return key, nil
}

// Document returns the document as it is now (a change made outside talkd is noticed
// and becomes a version first).
func (s *Service) Document(ctx context.Context, id string) (*Document, error) {
	key, err := s.docPlan(id)
	if err != nil {
		return nil, err
	}
	snap, err := s.Read(ctx, key)
	if err != nil {
		return nil, err
	}
	return s.documentOf(key, id, snap)
}

func (s *Service) documentOf(key, id string, snap *Snapshot) (*Document, error) {
	st, err := s.docs.Doc(key)
	if err != nil {
		return nil, err
	}
	d := &Document{ID: id, Content: docstore.Normalize(snap.Text), Version: snap.Base.Revision}
	title, created, recs := st.Info()
	d.Title, d.CreatedAt = title, created
	for i := len(recs) - 1; i >= 0; i-- {
		if r := recs[i]; r.Version <= snap.Base.Revision {
			d.UpdatedAt = r.At
			break
		}
	}
	if d.Title == "" {
		d.Title = s.defaultTitle(key)
	}
	if d.UpdatedAt.IsZero() {
		d.UpdatedAt = d.CreatedAt
	}
	return d, nil
}

// defaultTitle is the title of a plan never renamed: its file name without .werkbaum.
func (s *Service) defaultTitle(key string) string {
	p, _ := s.Plan(key)
	name := strings.TrimSuffix(filepath.Base(p.Path), ".werkbaum")
	if name == "" || name == "." || name == "/" {
		return key
	}
	return name
}

// checkTitle enforces the contract's 1–255 characters, on one line.
func checkTitle(title string) error {
	n := utf8.RuneCountInString(title)
	switch {
	case !utf8.ValidString(title):
		return &werkbaum.InputError{Code: "badTitle", Message: "title: not valid UTF-8"}
	case strings.TrimSpace(title) == "":
		return &werkbaum.InputError{Code: "badTitle", Message: "title: must not be empty"}
	case n > docs.MaxTitle:
		return &werkbaum.InputError{Code: "badTitle", Message: fmt.Sprintf("title: %d characters, at most %d allowed", n, docs.MaxTitle)}
	case strings.IndexFunc(title, unicode.IsControl) >= 0:
		return &werkbaum.InputError{Code: "badTitle", Message: "title: must not contain control characters (line breaks, tabs)"}
	}
	return nil
}

// SetTitle renames the document: a new version of type RENAMED with the same content.
// expectedVersion must be the current version (else ErrStaleVersion). The title is kept
// in the state database; the plan file is not touched.
func (s *Service) SetTitle(ctx context.Context, id, title string, expectedVersion uint64, who DocAuthor) (*Document, error) {
	if err := checkTitle(title); err != nil {
		s.log.Info("document rename refused: bad title", "document", id, "err", err)
		return nil, err
	}
	key, err := s.docPlan(id)
	if err != nil {
		return nil, err
	}
	p, ok := s.Plan(key)
	if !ok {
		return nil, fmt.Errorf("%w %q", ErrUnknownDocument, id)
	}
	var doc *Document
	err = s.lanes.Do(ctx, p.Path, func() error {
		var err error
		doc, err = s.setTitle(ctx, key, id, title, expectedVersion, who)
		return err
	})
	return doc, err
}

func (s *Service) setTitle(ctx context.Context, key, id, title string, expected uint64, who DocAuthor) (*Document, error) {
	snap, err := s.Read(ctx, key)
	if err != nil {
		return nil, err
	}
	rev := snap.Base.Revision
	if expected != rev {
		s.log.Info("document rename refused: stale expectedVersion", "plan", key, "expected", expected, "version", rev)
		return nil, fmt.Errorf("%w: expectedVersion %d, but the document is at version %d", ErrStaleVersion, expected, rev)
	}
	st, err := s.docs.Doc(key)
	if err != nil {
		return nil, err
	}
	cur, _, _ := st.Info()
	same := cur == title || (cur == "" && title == s.defaultTitle(key))
	if same {
		return s.documentOf(key, id, snap)
	}
	name := s.authorName(st, who)
	pv := &docstore.Version{Rec: docs.Record{Version: rev + 1, ChangeType: ChangeRenamed, ClientID: who.ClientID,
		DisplayName: name, Client: who.Client, Milestone: true, At: s.now().UTC()}, Text: docstore.Normalize(snap.Text), Title: &title}
	meta := journal.Meta{Revision: rev + 1, Checksum: snap.Base.Checksum}
	err = s.commit.Do(func(tx Tx) error {
		b := tx.Bucket(journal.BucketName(key))
		var cur journal.Meta
		if err := journal.ReadMeta(b, &cur); err != nil {
			return err
		}
		if cur = s.mem.NewerMeta(key, cur); cur.Revision != rev || cur.Checksum != snap.Base.Checksum {
			return errFileMoved
		}
		if err := journal.WriteMeta(b, meta); err != nil {
			return err
		}
		return st.Put(tx, pv)
	})
	if errors.Is(err, errFileMoved) {
		return nil, fmt.Errorf("%w: the document changed while it was renamed; read it again", ErrStaleVersion)
	}
	if err != nil {
		return nil, fmt.Errorf("document %s: record the new title: %w", id, err)
	}
	s.mem.MetaSaved(key, meta)
	st.Saved(pv)
	s.log.Info("document renamed", "plan", key, "version", rev+1, "client", who.Client, "client_id", who.ClientID, "name", name)
	snap.Base.Revision = rev + 1
	return s.documentOf(key, id, snap)
}

// Changes is the long poll of the change feed. since < current answers at once: the
// ops from since when its text is still kept (FromVersion = since), else the whole
// content, and the events of the versions after since. since = current waits until a
// new version is recorded, wait passes or ctx ends; (nil, nil) means nothing new.
// since > current is ErrPatchUnapplicable at once (422: the client reloads).
//
// A waiter costs no goroutine and no polling: each plan has one channel that is closed
// (and replaced) whenever a version is recorded, and waiters select on it with a timer.
// A change made outside talkd becomes a version when a read notices it: any read of the
// plan (a tool call, /status, a document GET, the start of a long poll), or the
// follower's, about a second after the save (follow.go).
func (s *Service) Changes(ctx context.Context, id string, since uint64, wait time.Duration) (*ChangeFeed, error) {
	key, st, err := s.docPlanState(id)
	if err != nil {
		return nil, err
	}
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		// The channel is taken before the read: a version recorded after it closes it.
		changed := st.Changed()
		snap, err := s.Read(ctx, key)
		if errors.Is(err, ErrPlanMissing) {
			// A deleted document's feed still answers: the DELETED version (recorded by
			// this read), then nothing until the file is back.
			snap, err = s.deletedSnapshot(key, st, err)
		}
		if err != nil {
			return nil, err
		}
		settling := st.Settling(snap.Base.Revision)
		if since < snap.Base.Revision && !settling {
			return s.feed(ctx, key, st, since, snap)
		}
		if since > snap.Base.Revision && !settling {
			// Not a version of this document (versions only grow): waiting would only
			// end in 204, again and again. The client reloads, as after a failed PATCH.
			return nil, fmt.Errorf("%w: since %d is ahead of the document's version %d; reload the document", ErrPatchUnapplicable, since, snap.Base.Revision)
		}
		if wait <= 0 {
			return nil, nil
		}
		if timer == nil {
			timer = time.NewTimer(wait)
		}
		select {
		case <-changed:
		case <-timer.C:
			return nil, nil
		case <-ctx.Done():
			// Like the end of the wait: the caller may bound the wait by its context.
			return nil, nil
		}
	}
}

// deletedSnapshot stands in for the snapshot of a plan whose file is missing once its
// document has recorded the deletion: the DELETED version with the text it keeps. Without
// that record (it could not be saved) readErr stays the answer.
func (s *Service) deletedSnapshot(key string, st *docstore.Doc, readErr error) (*Snapshot, error) {
	v, gone := st.Last()
	if !gone {
		return nil, readErr
	}
	text, ok, err := s.docs.Text(key, v)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, readErr
	}
	return &Snapshot{Text: text, Base: Base{Revision: v, Checksum: werkbaum.Checksum([]byte(text))}, Lines: countLines(text)}, nil
}

// ChangeSignal returns a channel that is closed when the next version of document id is
// recorded. It is the waiting half of Changes for a caller that holds many polls at once
// without a goroutine each (the document doors park their long polls): take the signal,
// then ask Changes with wait 0; when that has nothing new, the signal says when to ask
// again. A version recorded between the two closes the signal, so none is missed.
func (s *Service) ChangeSignal(id string) (<-chan struct{}, error) {
	_, st, err := s.docPlanState(id)
	if err != nil {
		return nil, err
	}
	return st.Changed(), nil
}

// docPlanState resolves a document id to its plan key and the document's state.
func (s *Service) docPlanState(id string) (string, *docstore.Doc, error) {
	key, err := s.docPlan(id)
	if err != nil {
		return "", nil, err
	}
	st, err := s.docs.Doc(key)
	if err != nil {
		return "", nil, err
	}
	return key, st, nil
}

func (s *Service) feed(ctx context.Context, key string, st *docstore.Doc, since uint64, snap *Snapshot) (*ChangeFeed, error) {
	cur := snap.Base.Revision
	now := docstore.Normalize(snap.Text)
	f := &ChangeFeed{CurrentVersion: cur, Events: []ChangeEvent{}}
	for _, r := range st.Records() {
		if r.Version > since && r.Version <= cur {
			ev := ChangeEvent{Version: r.Version, ChangeType: r.ChangeType, ClientID: r.ClientID, DisplayName: r.DisplayName}
			if r.ChangeType == ChangeRenamed {
				ev.Title = r.Title
			}
			f.Events = append(f.Events, ev)
		}
	}
	if since > 0 {
		d := st.Diff(ctx, since, cur, s.feedDiff(key, now))
		if d.Err != nil {
			return nil, d.Err
		}
		if d.Kept {
			from := since
			f.FromVersion, f.Ops = &from, d.Ops
			return f, nil
		}
	}
	f.Content = &now
	return f, nil
}

// feedDiff computes the feed's diff from a kept version to now, the current text, once
// for all the waiters asking for it (docstore.Doc.Diff).
func (s *Service) feedDiff(key, now string) docstore.DiffFunc {
	return func(ctx context.Context, from uint64) (bool, []werkbaum.LineOp, error) {
		base, ok, err := s.docs.Text(key, from)
		if err != nil || !ok {
			return false, nil, err
		}
		ops, err := s.engine.DiffLines(ctx, base, now)
		if err != nil {
			return false, nil, fmt.Errorf("document feed: diff from version %d: %w", from, err)
		}
		if ops == nil {
			ops = []werkbaum.LineOp{}
		}
		return true, ops, nil
	}
}

// History lists the document's kept states oldest first, as retain picks them: its
// milestones (agent writes, milestone PATCHes and marks, restores, renames, changes made
// outside talkd, the first version seen), people's saves (all of the last hour, then
// one per person per hour) and always the newest state; a version whose text is no
// longer kept is left out.
func (s *Service) History(ctx context.Context, id string) ([]HistoryEntry, error) {
	key, st, err := s.docPlanState(id)
	if err != nil {
		return nil, err
	}
	snap, err := s.Read(ctx, key)
	if errors.Is(err, ErrPlanMissing) {
		snap, err = s.deletedSnapshot(key, st, err) // the history survives the deletion
	}
	if err != nil {
		return nil, err
	}
	var picked []docs.Record
	recs := st.Records()
	listed := docs.Retain(recs).History
	for _, r := range recs {
		if listed[r.Version] && r.Version <= snap.Base.Revision {
			picked = append(picked, r)
		}
	}
	texts, kept, err := s.docs.Texts(key, picked)
	if err != nil {
		return nil, err
	}
	out := make([]HistoryEntry, 0, len(picked))
	for i, r := range picked {
		if !kept[i] {
			continue
		}
		title := r.Title
		if title == "" {
			title = s.defaultTitle(key)
		}
		out = append(out, HistoryEntry{DocumentID: id, Version: r.Version, Title: title, Content: texts[i],
			ChangeType: r.ChangeType, Timestamp: r.At, ClientID: r.ClientID, DisplayName: r.DisplayName,
			Milestone: r.Milestone, MarkedBy: r.MarkedBy, MarkedByClientID: r.MarkedByClientID, RestoredFrom: r.RestoredFrom})
	}
	return out, nil
}
