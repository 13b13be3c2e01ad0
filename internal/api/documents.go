package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"talkd/internal/werkbaum"
	"talkd/internal/werkbaum/plans"
	"talkd/internal/werkbaum/plans/docs"
)

// The document doors: the Werkbaum live-document protocol (shared/werkbaum/DOCUMENTS.md)
// under /api/v1 for talkd's plans, so the Werkbaum editor can edit a plan live beside the
// agents. This file holds the handlers (their rows are in the one route table, routes.go);
// documents_wire.go the request decoding and the answer shapes; the store behind them (versions, rebase, feed, history)
// is the plan service's (plans.Service, documents*.go there). Every request passes the one
// admission layer (admission.go) with the documents' door: Host check, Origin policy with
// CORS for the listed origins (the editor runs on another origin), caller, the plan's
// read or write grant, body limit; refusals are problem details (RFC 9457).

// documentStore is what the document doors need of the plan store: exactly the document
// API of plans.Service.
type documentStore interface {
	DocumentID(ctx context.Context, key string) (string, error)
	DocumentKey(id string) (key string, ok bool)
	Document(ctx context.Context, id string) (*plans.Document, error)
	PatchContent(ctx context.Context, id string, p plans.ContentPatch) (*plans.PatchResult, error)
	SetTitle(ctx context.Context, id, title string, expectedVersion uint64, who plans.DocAuthor) (*plans.Document, error)
	Restore(ctx context.Context, id string, version uint64, who plans.DocAuthor) (*plans.Document, error)
	Changes(ctx context.Context, id string, since uint64, wait time.Duration) (*plans.ChangeFeed, error)
	ChangeSignal(id string) (<-chan struct{}, error)
	History(ctx context.Context, id string) ([]plans.HistoryEntry, error)
}

// The long poll of GET …/changes: wait defaults to DefaultChangesWait and is clamped to
// [0, MaxChangesWait]. The cap keeps a held request below what proxies and the editor's
// own fetch timeouts tolerate; the client simply polls again.
const (
	DefaultChangesWait = 25 * time.Second
	MaxChangesWait     = 30 * time.Second
	// pollSlack is added to a held poll's connection deadlines: the answer itself must
	// still be written after the wait.
	pollSlack = 10 * time.Second
)

// documentsPrefix is the base of the protocol's paths.
const documentsPrefix = "/api/v1"

// documentDoors holds the document doors' state: the store (nil while no plans are
// configured) and the parked long polls (documents_poll.go).
type documentDoors struct {
	store  documentStore
	door   door
	parker *pollParker
}

func newDocumentDoors(s *Server) *documentDoors {
	return &documentDoors{
		parker: newPollParker(s),
		// One door for all document paths; its limit is for a content PATCH, which must
		// carry a whole plan like a werkbaum_write through /mcp (the other paths get the
		// small limit of the control doors).
		door: door{path: documentsPrefix, origin: originCORS, limit: s.mcpMaxBody, problem: true,
			corsMethods: "GET, HEAD, POST, PATCH, OPTIONS", editor: true},
	}
}

// EndPolls answers every held long poll of GET …/changes with 204 and makes new ones
// answer at once; call it when the HTTP server shuts down (http.Server.RegisterOnShutdown).
// The answers are written in the background: WaitPolls waits for them.
func (s *Server) EndPolls() { s.documents.parker.endAll() }

// WaitPolls ends the long polls (as EndPolls) and returns when every parked one has been
// answered, or ctx ends. http.Server.Shutdown does not wait for them: a parked poll's
// connection is no longer the server's.
func (s *Server) WaitPolls(ctx context.Context) error { return s.documents.parker.wait(ctx) }

// HeldPoll reports whether r is a long poll of a document feed (GET …/changes), which the
// server holds for up to MaxChangesWait without working on it.
func HeldPoll(r *http.Request) bool {
	if r.Method != http.MethodGet {
		return false
	}
	_, ok := matchPattern(documentChangesPattern, r.URL.Path)
	return ok
}

// The paths of the protocol, as patterns of the route table (routes.go).
const (
	documentListPattern    = documentsPrefix + "/documents"
	documentPattern        = documentListPattern + "/{id}"
	documentChangesPattern = documentPattern + "/changes"
)

func (s *Server) getInfo(w http.ResponseWriter, r *http.Request, _ admitted) {
	writeDocJSON(w, r, http.StatusOK, s.documentInfo(s.config()))
}

func (s *Server) getDocument(w http.ResponseWriter, r *http.Request, a admitted) {
	ctx := r.Context()
	doc, err := s.documents.store.Document(ctx, a.id)
	if err != nil {
		s.refuse(w, r, a.door, s.documentError(ctx, a.key, err))
		return
	}
	writeDocJSON(w, r, http.StatusOK, documentOf(doc))
}

func (s *Server) getHistory(w http.ResponseWriter, r *http.Request, a admitted) {
	ctx := r.Context()
	hist, err := s.documents.store.History(ctx, a.id)
	if err != nil {
		s.refuse(w, r, a.door, s.documentError(ctx, a.key, err))
		return
	}
	writeDocJSON(w, r, http.StatusOK, historyOf(hist))
}

// documentMethodRefusal says why a method is not offered on a document path: a
// file-backed plan is replaced and deleted in its folder or through the config, not
// through the protocol.
func documentMethodRefusal(pattern string, methods []string, method string) *Error {
	msg := method + " is not allowed on this path; use " + strings.Join(methods, " or ")
	switch {
	case pattern == documentListPattern:
		msg = "talkd does not list documents over this protocol: plans_list (MCP) and talk plans show each plan's document URL"
	case pattern == documentPattern && method == http.MethodPut:
		msg = "talkd does not replace documents with PUT: send the change as PATCH /api/v1/documents/{id}/content (line operations against a base)"
	case pattern == documentPattern && method == http.MethodDelete:
		msg = "talkd does not delete documents: a plan is deleted in its folder and removed from the config"
	}
	return &Error{Status: http.StatusMethodNotAllowed, Code: CodeMethodNotAllowed, Message: msg}
}

// documentGrant resolves id to its plan key and checks the caller's grant.
func (s *Server) documentGrant(c Caller, id string, write bool) (string, *Error) {
	if !docs.ValidDocumentID(id) {
		return "", &Error{Status: http.StatusNotFound, Code: CodeNotFound,
			Message: fmt.Sprintf("%q is not a document id (a UUID like 0b6e…-…)", truncate(id, 64))}
	}
	var key string
	ok := false
	if st := s.documents.store; st != nil {
		key, ok = st.DocumentKey(id)
	}
	if !ok || !c.CanRead(key) {
		return "", unknownDocument(id)
	}
	if write && !c.CanWrite(key) {
		return "", &Error{Status: http.StatusForbidden, Code: CodeForbidden,
			Message: fmt.Sprintf("client %q has no write grant for plan %q (document %s)", c.ID, key, id)}
	}
	return key, nil
}

func unknownDocument(id string) *Error {
	return &Error{Status: http.StatusNotFound, Code: CodeNotFound,
		Message: "no document " + id + " here; plans_list and talk plans show the documents you may use"}
}

func (s *Server) patchContent(w http.ResponseWriter, r *http.Request, a admitted) {
	d, id, key := a.door, a.id, a.key
	p, e := decodeContentPatch(a.body)
	if e != nil {
		s.refuse(w, r, d, e)
		return
	}
	res, err := s.documents.store.PatchContent(r.Context(), id, p)
	var conflict *plans.PatchConflict
	if errors.As(err, &conflict) {
		// 409 carries {currentVersion, opsSinceBase} beside the problem's members.
		e := &Error{Status: http.StatusConflict, Code: "conflict",
			Message: fmt.Sprintf("the patch overlaps changes made since its base; the document is at version %d: bring your shadow copy forward with opsSinceBase and redo your change", conflict.CurrentVersion)}
		s.logRefusal(r, d, e)
		writeProblem(w, r, e, &conflictMembers{CurrentVersion: conflict.CurrentVersion, OpsSinceBase: opsOf(conflict.OpsSinceBase)})
		return
	}
	if err != nil {
		s.refuse(w, r, d, s.documentError(r.Context(), key, err))
		return
	}
	writeDocJSON(w, r, http.StatusOK, patchResultWire{Version: res.Version, OpsSinceBase: opsOf(res.OpsSinceBase)})
}

func (s *Server) patchTitle(w http.ResponseWriter, r *http.Request, a admitted) {
	d, id, key := a.door, a.id, a.key
	t, e := decodeTitlePatch(a.body)
	if e != nil {
		s.refuse(w, r, d, e)
		return
	}
	who := plans.DocAuthor{ClientID: t.ClientID, DisplayName: t.DisplayName, Client: a.caller.ID, Agent: a.caller.Agent}
	doc, err := s.documents.store.SetTitle(r.Context(), id, t.Title, t.ExpectedVersion, who)
	if err != nil {
		s.refuse(w, r, d, s.documentError(r.Context(), key, err))
		return
	}
	writeDocJSON(w, r, http.StatusOK, documentOf(doc))
}

// changes serves the long poll: what is new since `since` at once (on a kept-alive
// connection), else the poll is parked until a version is recorded or the clamped wait
// ends (documents_poll.go).
func (s *Server) changes(w http.ResponseWriter, r *http.Request, a admitted) {
	d, id, key, caller := a.door, a.id, a.key, a.caller
	since, wait, e := parseChangesQuery(r.URL.Query())
	if e != nil {
		s.refuse(w, r, d, e)
		return
	}
	store := s.documents.store
	feed, err := store.Changes(r.Context(), id, since, 0)
	switch {
	case err != nil && r.Context().Err() != nil:
		return // the client left
	case err != nil:
		s.refuse(w, r, d, s.documentError(r.Context(), key, err))
	case feed != nil:
		writeDocJSON(w, r, http.StatusOK, feedOf(feed))
	case wait <= 0:
		w.WriteHeader(http.StatusNoContent)
	default:
		s.documents.parker.park(w, r, d, store, id, key, caller, &parkedPoll{since: since, deadline: time.Now().Add(wait)})
	}
}

// parseChangesQuery reads since (default 0) and wait (seconds, default 25, clamped to
// [0, 30]).
func parseChangesQuery(q map[string][]string) (since uint64, wait time.Duration, e *Error) {
	wait = DefaultChangesWait
	if v := lastValue(q, "since"); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return 0, 0, fieldError("since", fmt.Sprintf("query parameter since=%q must be a version: a whole number ≥ 0", truncate(v, 40)))
		}
		since = n
	}
	if v := lastValue(q, "wait"); v != "" {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f != f || f > 1e9 || f < -1e9 {
			return 0, 0, fieldError("wait", fmt.Sprintf("query parameter wait=%q must be a number of seconds", truncate(v, 40)))
		}
		wait = min(max(time.Duration(f*float64(time.Second)), 0), MaxChangesWait)
	}
	return since, wait, nil
}

func lastValue(q map[string][]string, k string) string {
	vs := q[k]
	if len(vs) == 0 {
		return ""
	}
	return vs[len(vs)-1]
}

// documentError maps a store error to the problem the client gets: malformed ops as the
// document doors' own field error, every other refusal as MCP gives it (planError).
func (s *Server) documentError(ctx context.Context, key string, err error) *Error {
	if e := descriptorsExhausted(err); e != nil {
		return e
	}
	var input *werkbaum.InputError
	if errors.As(err, &input) {
		e := &Error{Status: http.StatusBadRequest, Code: CodeInvalidField, Message: input.Message}
		if strings.HasPrefix(input.Message, "ops") {
			e.Field = "ops"
		}
		return e
	}
	e := planError(err)
	if plans.KindOf(err) == plans.KindInternal {
		s.log.Error("document door", "plan", key, "err", err)
		e.Code = CodeInternal
	}
	return e
}

// documentURL is the address of a plan's document, as plans_list shows it; "" when the
// store has no documents or failed to give the plan an id (logged).
func (s *Server) documentURL(ctx context.Context, key string) string {
	st := s.documents.store
	if st == nil {
		return ""
	}
	id, err := st.DocumentID(ctx, key)
	if rp := (*plans.RemotePlanError)(nil); errors.As(err, &rp) {
		return rp.URL // a plan on a document server: its document is there
	}
	if err != nil {
		s.log.Warn("plan has no document id", "plan", key, "err", err)
		return ""
	}
	return "http://" + s.listenAddr + documentsPrefix + "/documents/" + id
}

// RegisterDocuments serves the document doors from ds (the plan store, which keeps the
// documents of its file plans); until then every document id is unknown (404).
func (s *Server) RegisterDocuments(ds documentStore) { s.documents.store = ds }

// The plan service is the document store (checked at compile time).
var _ documentStore = (*plans.Service)(nil)
