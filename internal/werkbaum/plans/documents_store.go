package plans

import (
	"crypto/rand"
	"encoding/hex"
	"strings"

	"talkd/internal/werkbaum/plans/docs"
	"talkd/internal/werkbaum/plans/docstore"
	"talkd/internal/werkbaum/plans/journal"
)

// The façade's side of the document store (package docstore): the version records its
// writes get (an agent's, a deletion a read found, a write a crash left pending).

// newAgentClientID is the document client id of this process's agent writes.
func newAgentClientID() string {
	var b [8]byte
	rand.Read(b[:])
	return "mcp-" + hex.EncodeToString(b[:])
}

// deletedChecksum is the plan checksum kept while its file is missing: no text has it, so
// the file's return (with any text, also the one it had) is a revision of its own.
const deletedChecksum = "deleted"

// noteDeleted records that a read found the plan's file missing: one DELETED version,
// once, which moves the plan's revision on with it (so the version numbers stay one
// counter). Its kept text is the last version's, so the feed's diffs stay true: the
// deletion changes no line, and the file's return is diffed against what was there. A
// plan that never had a version has nothing to delete. A failure is logged and changes
// nothing; the next read tries again. (A file back by the time this runs is a RESTORED
// version at the next read: it was missing when the read looked.)
func (s *Service) noteDeleted(key string) {
	if !s.docs.Known(key) {
		return // no document (a mistyped key below a root has none): nothing to delete
	}
	st, err := s.docs.Doc(key)
	if err != nil {
		s.log.Warn("document: versions unreadable", "plan", key, "err", err)
		return
	}
	last, gone := st.Last()
	if last == 0 || gone {
		return
	}
	text, _, err := s.docs.Text(key, last)
	if err != nil {
		s.log.Warn("document: versions unreadable", "plan", key, "err", err)
		return
	}
	var meta journal.Meta
	var pv *docstore.Version
	err = s.commit.Do(func(tx Tx) error {
		pv = nil
		b, err := tx.CreateBucket(journal.BucketName(key))
		if err != nil {
			return err
		}
		if err := journal.ReadMeta(b, &meta); err != nil {
			return err
		}
		meta = s.mem.NewerMeta(key, meta)
		if meta.Checksum == deletedChecksum || meta.Revision < last {
			return nil // recorded by another read already, or the versions are ahead
		}
		meta = journal.Meta{Revision: meta.Revision + 1, Checksum: deletedChecksum}
		if err := journal.WriteMeta(b, meta); err != nil {
			return err
		}
		pv = &docstore.Version{Rec: docs.Record{Version: meta.Revision, ChangeType: ChangeDeleted,
			DisplayName: outsideName, Milestone: true, At: s.now().UTC()}, Text: text}
		return st.Put(tx, pv)
	})
	if err != nil {
		s.log.Warn("document: recording the deletion failed", "plan", key, "err", err)
		return
	}
	if pv == nil {
		return
	}
	s.mem.MetaSaved(key, meta)
	st.Saved(pv)
	s.log.Info("document: the plan's file is missing; its document reads as deleted until the file is back", "plan", key, "version", pv.Rec.Version)
}

// fileStyle is how a plan file writes its lines: BOM and line ending. A PATCH's result
// is written back in the file's style, so an editor's change to a CRLF file does not
// rewrite every line; a file with mixed endings gets its most common one.
type fileStyle struct {
	bom bool
	eol string
}

func styleOf(raw string) fileStyle {
	st := fileStyle{bom: strings.HasPrefix(raw, "\ufeff"), eol: "\n"}
	crlf := strings.Count(raw, "\r\n")
	cr := strings.Count(raw, "\r") - crlf
	lf := strings.Count(raw, "\n") - crlf
	switch {
	case crlf > 0 && crlf >= lf && crlf >= cr:
		st.eol = "\r\n"
	case cr > lf:
		st.eol = "\r"
	}
	return st
}

// encode writes the normalised text in the file's style.
func (st fileStyle) encode(text string) []byte {
	if st.eol != "\n" {
		text = strings.ReplaceAll(text, "\n", st.eol)
	}
	if st.bom {
		text = "\ufeff" + text
	}
	return []byte(text)
}

// agentVersion prepares the version record of an agent write (Write): the process's
// agent client id, the MCP host's name (or "Agent"), the authenticated client, a
// milestone. doc is nil when the document's state cannot be read; the write then goes
// on without a record (a later read records the revision as seen).
func (s *Service) agentVersion(key string, who Author, rev uint64, text string) (*docstore.Doc, *docstore.Version) {
	st, err := s.docs.Doc(key)
	if err != nil {
		s.log.Warn("document: versions unreadable; the agent write gets no version record", "plan", key, "err", err)
		return nil, nil
	}
	name := who.Agent
	if name == "" {
		name = agentName
	}
	return st, &docstore.Version{Rec: docs.Record{Version: rev, ChangeType: ChangeUpdated, ClientID: s.agentClientID,
		DisplayName: name, Client: who.Client, Milestone: true, At: s.now().UTC()}, Text: docstore.Normalize(text)}
}

// docWriting marks rev as being written by a writer that records its version itself,
// until the returned func is called (after the settle): docstore.Doc.Writing, or nothing
// when the document's state cannot be read.
func (s *Service) docWriting(key string, rev uint64) func() {
	st, err := s.docs.Doc(key)
	if err != nil {
		return func() {}
	}
	return st.Writing(rev)
}

// settledVersion is the version record of a write that a crash left pending and the start
// found applied, which the store's journal participant (docstore.Store.Participant)
// records: an editor's PATCH under its clientId and display name, an agent's write under
// the MCP host's name (its process's agent client id is gone with it).
func (s *Service) settledVersion(e *journalEntry, text string) *docstore.Version {
	rec := docs.Record{Version: e.Revision, ChangeType: ChangeUpdated, DisplayName: e.Author.Agent, Milestone: true, At: e.At}
	switch e.Tool {
	case patchTool:
		rec.ClientID = strings.TrimPrefix(e.Author.Client, patchClient(""))
	case restoreTool:
		settledRestore(&rec, e)
	default:
		rec.Client = e.Author.Client
		if rec.DisplayName == "" {
			rec.DisplayName = agentName
		}
	}
	return &docstore.Version{Rec: rec, Text: docstore.Normalize(text)}
}
