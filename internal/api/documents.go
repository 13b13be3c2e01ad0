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
// agents. This file holds the routing and the handlers; documents_wire.go the request
// decoding and the answer shapes; the store behind them (versions, rebase, feed, history)
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
	rt, _, ok := parseDocumentPath(r.URL.Path)
	return ok && rt == routeChanges
}

// documentRoute is what a document path names.
type documentRoute int

const (
	routeInfo documentRoute = iota
	routeList
	routeDocument
	routeContent
	routeTitle
	routeChanges
	routeHistory
	routeRestore
)

// methods lists what each route answers; the rest get 405 naming why.
func (rt documentRoute) methods() []string {
	switch rt {
	case routeInfo, routeDocument, routeHistory:
		return []string{http.MethodGet, http.MethodHead}
	case routeChanges:
		return []string{http.MethodGet} // a long poll; HEAD would hold a request for nothing
	case routeContent, routeTitle:
		return []string{http.MethodPatch}
	case routeRestore:
		return []string{http.MethodPost} // documents_restore.go
	case routeList:
		return []string{http.MethodPost} // create (documents_create.go)
	}
	return nil
}

// parseDocumentPath splits /api/v1/… into the route and the document id (lower case).
func parseDocumentPath(path string) (documentRoute, string, bool) {
	rest, ok := strings.CutPrefix(path, documentsPrefix+"/")
	if !ok {
		return 0, "", false
	}
	if rest == "info" {
		return routeInfo, "", true
	}
	parts := strings.Split(rest, "/")
	if parts[0] != "documents" || len(parts) > 3 {
		return 0, "", false
	}
	if len(parts) == 1 {
		return routeList, "", true
	}
	id := strings.ToLower(parts[1])
	if id == "" {
		return 0, "", false
	}
	if len(parts) == 2 {
		return routeDocument, id, true
	}
	switch parts[2] {
	case "content":
		return routeContent, id, true
	case "title":
		return routeTitle, id, true
	case "changes":
		return routeChanges, id, true
	case "history":
		return routeHistory, id, true
	case "restore":
		return routeRestore, id, true
	}
	return 0, "", false
}

// serveDocuments serves every path under /api/v1.
func (s *Server) serveDocuments(w http.ResponseWriter, r *http.Request) {
	dd := s.documents
	// Caches must not hand one origin's CORS answer to another, nor keep a live document.
	w.Header().Set("Vary", "Origin")
	w.Header().Set("Cache-Control", "no-store")
	rt, id, ok := parseDocumentPath(r.URL.Path)
	if !ok {
		s.refuse(w, r, &dd.door, &Error{Status: http.StatusNotFound, Code: CodeNotFound,
			Message: "no such endpoint: " + r.URL.Path + "; the document protocol has /api/v1/info and /api/v1/documents/{id}[/content|/title|/changes|/history|/restore]"})
		return
	}
	methods := rt.methods()
	allowed := false
	for _, m := range methods {
		allowed = allowed || m == r.Method
	}
	d := dd.door
	d.path = clipHeader(r.URL.Path)
	if rt != routeContent && rt != routeList {
		d.limit = s.maxBody // only a content PATCH and a create carry a plan
	}
	var key string
	if allowed && id != "" {
		// The plan's grant: reading needs read, the PATCHes and a restore write. A document
		// the caller may not read is indistinguishable from one that does not exist.
		write := r.Method == http.MethodPatch || rt == routeRestore
		d.grant = func(c Caller) *Error {
			k, e := s.documentGrant(c, id, write)
			key = k
			return e
		}
	}
	a, ok := s.admit(w, r, &d)
	if !ok {
		return
	}
	if !allowed {
		w.Header().Set("Allow", strings.Join(methods, ", "))
		s.refuse(w, r, &d, methodRefusal(rt, r.Method))
		return
	}
	ctx := r.Context()
	switch rt {
	case routeInfo:
		writeDocJSON(w, r, http.StatusOK, s.documentInfo(s.config()))
	case routeDocument:
		doc, err := dd.store.Document(ctx, id)
		if err != nil {
			s.refuse(w, r, &d, s.documentError(ctx, key, err))
			return
		}
		writeDocJSON(w, r, http.StatusOK, documentOf(doc))
	case routeList:
		s.createDocument(w, r, &d, a)
	case routeContent:
		s.patchContent(w, r, &d, id, key, a)
	case routeTitle:
		s.patchTitle(w, r, &d, id, key, a)
	case routeRestore:
		s.restoreDocument(w, r, &d, id, key, a)
	case routeChanges:
		s.changes(w, r, &d, id, key, a.caller)
	case routeHistory:
		hist, err := dd.store.History(ctx, id)
		if err != nil {
			s.refuse(w, r, &d, s.documentError(ctx, key, err))
			return
		}
		writeDocJSON(w, r, http.StatusOK, historyOf(hist))
	}
}

// methodRefusal says why a method is not offered: a file-backed plan is replaced and
// deleted in its folder or through the config, not through the protocol.
func methodRefusal(rt documentRoute, method string) *Error {
	msg := method + " is not allowed on this path; use " + strings.Join(rt.methods(), " or ")
	switch {
	case rt == routeList:
		msg = "talkd does not list documents over this protocol: plans_list (MCP) and talk plans show each plan's document URL"
	case rt == routeDocument && method == http.MethodPut:
		msg = "talkd does not replace documents with PUT: send the change as PATCH /api/v1/documents/{id}/content (line operations against a base)"
	case rt == routeDocument && method == http.MethodDelete:
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

func (s *Server) patchContent(w http.ResponseWriter, r *http.Request, d *door, id, key string, a admitted) {
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

func (s *Server) patchTitle(w http.ResponseWriter, r *http.Request, d *door, id, key string, a admitted) {
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
func (s *Server) changes(w http.ResponseWriter, r *http.Request, d *door, id, key string, caller Caller) {
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
