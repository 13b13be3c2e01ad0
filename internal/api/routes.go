package api

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
)

// The route table: every door of the daemon, the document protocol's paths under /api/v1
// among them, and the one dispatch that runs a request through its route (serveRoute).
// A door differs from another only in its row; the order of the steps is written once.

// route is one row of the route table: the methods a path answers, its admission policy
// (the door), its handler and what its answers carry.
type route struct {
	methods []string
	// door is the admission policy; nil only for /healthz, which answers anyone.
	door   *door
	handle func(http.ResponseWriter, *http.Request, admitted)
	// vary sets Vary: Origin on every answer, refusals too: caches must not hand one
	// origin's CORS answer to another.
	vary bool
	// noStore sets Cache-Control: no-store on every answer (a live document).
	noStore bool
	// methodAfterAdmission checks the method after admission instead of before it (the
	// document doors): a browser's preflight is admission's to answer, and an editor page
	// can read a 405 only with the CORS headers admission sets.
	methodAfterAdmission bool
	// idGrant is the grant of a pattern with {id}: it resolves the document id to its
	// plan key and checks the caller's grant for that plan. It is asked only for a method
	// the route answers.
	idGrant func(c Caller, id string) (key string, e *Error)
	// refuseMethod says why a method is not offered; nil names the route's methods.
	refuseMethod func(method string) *Error
}

// routeTable finds a request's route: exact paths in a map, then the patterns with an
// {id} segment (the document protocol's), which match a non-empty segment there.
type routeTable struct {
	exact    map[string]*route
	patterns []patternRoute
}

type patternRoute struct {
	pattern string
	route   *route
}

// routes is the route table. Handler builds it once.
func (s *Server) routes() *routeTable {
	ctl := func(path string, grant func(Caller) *Error) *door {
		return &door{path: path, origin: originListed, limit: s.maxBody, grant: grant}
	}
	control := func(c Caller) *Error {
		if c.CanControl() {
			return nil
		}
		return &Error{Status: http.StatusForbidden, Code: CodeForbidden, Message: fmt.Sprintf("client %q has no control grant", c.ID)}
	}
	t := &routeTable{exact: map[string]*route{
		"/speak":   {methods: []string{http.MethodPost, http.MethodOptions}, door: &door{path: "/speak", origin: originCORS, limit: s.maxBody}, handle: s.handleSpeak, vary: true},
		"/mcp":     {methods: []string{http.MethodPost}, door: &door{path: "/mcp", origin: originListed, limit: s.mcpMaxBody, rpc: true}, handle: s.handleMCP},
		"/status":  {methods: []string{http.MethodGet, http.MethodHead}, door: ctl("/status", nil), handle: s.handleStatus},
		"/history": {methods: []string{http.MethodGet, http.MethodHead}, door: ctl("/history", nil), handle: s.handleHistory},
		"/healthz": {methods: []string{http.MethodGet, http.MethodHead}, handle: s.handleHealth},
		"/voices":  {methods: []string{http.MethodGet, http.MethodHead}, door: ctl("/voices", nil), handle: s.handleVoices},
		"/mute":    {methods: []string{http.MethodPost}, door: ctl("/mute", control), handle: s.handleMute},
		"/unmute":  {methods: []string{http.MethodPost}, door: ctl("/unmute", control), handle: s.handleUnmute},
		"/stop":    {methods: []string{http.MethodPost}, door: ctl("/stop", control), handle: s.handleStop},
		"/reload":  {methods: []string{http.MethodPost}, door: ctl("/reload", control), handle: s.handleReload},
		// /cancel checks its grants itself: one's own announcements need the speak grant,
		// everybody's the control grant.
		"/cancel": {methods: []string{http.MethodPost}, door: ctl("/cancel", nil), handle: s.handleCancel},
		"/wait":   {methods: []string{http.MethodGet}, door: ctl("/wait", nil), handle: s.handleWait},
	}}

	// The document protocol (documents.go). One door for all its paths; only a content
	// PATCH and a create carry a plan and get the /mcp limit, the others the small limit
	// of the control doors. Reading needs the plan's read grant, the PATCHes and a restore
	// its write grant.
	carries := s.documents.door
	small := s.documents.door
	small.limit = s.maxBody
	read := func(c Caller, id string) (string, *Error) { return s.documentGrant(c, id, false) }
	write := func(c Caller, id string) (string, *Error) { return s.documentGrant(c, id, true) }
	doc := func(pattern string, methods []string, d door, grant func(Caller, string) (string, *Error), handle func(http.ResponseWriter, *http.Request, admitted)) {
		d.path = pattern
		rt := &route{methods: methods, door: &d, handle: handle, vary: true, noStore: true,
			methodAfterAdmission: true, idGrant: grant}
		rt.refuseMethod = func(method string) *Error { return documentMethodRefusal(pattern, rt.methods, method) }
		if strings.Contains(pattern, "{id}") {
			t.patterns = append(t.patterns, patternRoute{pattern, rt})
			return
		}
		t.exact[pattern] = rt
	}
	get := []string{http.MethodGet, http.MethodHead}
	doc(documentsPrefix+"/info", get, small, nil, s.getInfo)
	doc(documentListPattern, []string{http.MethodPost}, carries, nil, s.createDocument) // documents_create.go
	doc(documentPattern, get, small, read, s.getDocument)
	doc(documentPattern+"/content", []string{http.MethodPatch}, carries, write, s.patchContent)
	doc(documentPattern+"/title", []string{http.MethodPatch}, small, write, s.patchTitle)
	// A long poll; HEAD would hold a request for nothing.
	doc(documentChangesPattern, []string{http.MethodGet}, small, read, s.changes)
	doc(documentPattern+"/history", get, small, read, s.getHistory)
	doc(documentPattern+"/restore", []string{http.MethodPost}, small, write, s.restoreDocument) // documents_restore.go
	return t
}

// lookup finds the route of path and, for a pattern with {id}, the id (lower case).
func (t *routeTable) lookup(path string) (rt *route, id string, ok bool) {
	if rt, ok := t.exact[path]; ok {
		return rt, "", true
	}
	for _, p := range t.patterns {
		if id, ok := matchPattern(p.pattern, path); ok {
			return p.route, strings.ToLower(id), true
		}
	}
	return nil, "", false
}

// matchPattern matches path against a pattern whose {id} segment stands for one
// non-empty segment; every other segment must be equal.
func matchPattern(pattern, path string) (id string, ok bool) {
	for {
		var ps, qs string
		var pmore, qmore bool
		ps, pattern, pmore = strings.Cut(pattern, "/")
		qs, path, qmore = strings.Cut(path, "/")
		switch {
		case ps == "{id}" && qs != "":
			id = qs
		case ps != qs:
			return "", false
		}
		if pmore != qmore {
			return "", false
		}
		if !pmore {
			return id, true
		}
	}
}

// Handler returns the daemon's HTTP handler.
func (s *Server) Handler() http.Handler {
	table := s.routes()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rt, id, ok := table.lookup(r.URL.Path)
		if !ok {
			s.notFound(w, r)
			return
		}
		s.serveRoute(w, r, rt, id)
	})
}

// serveRoute runs a request through its route, in the one order of every door: the
// route's headers; the method (before admission, or after it for the document doors);
// admission (Host → Origin/CORS → caller → grant → body, admit); the handler.
func (s *Server) serveRoute(w http.ResponseWriter, r *http.Request, rt *route, id string) {
	if rt.vary {
		w.Header().Set("Vary", "Origin")
	}
	if rt.noStore {
		w.Header().Set("Cache-Control", "no-store")
	}
	allowed := slices.Contains(rt.methods, r.Method)
	if !allowed && !rt.methodAfterAdmission {
		w.Header().Set("Allow", strings.Join(rt.methods, ", "))
		s.refuseHTTP(w, r, rt.methodRefusal(r))
		return
	}
	if rt.door == nil {
		rt.handle(w, r, admitted{})
		return
	}
	d := rt.door
	var call *documentCall
	if id != "" {
		// A door of its own for this request: its name in log lines is the path with the
		// id, and its grant is the plan's of this document.
		call = &documentCall{door: *rt.door}
		call.door.path = clipHeader(r.URL.Path)
		if allowed && rt.idGrant != nil {
			call.door.grant = func(c Caller) *Error {
				k, e := rt.idGrant(c, id)
				call.key = k
				return e
			}
		}
		d = &call.door
	}
	a, ok := s.admit(w, r, d)
	if !ok {
		return
	}
	if !allowed {
		w.Header().Set("Allow", strings.Join(rt.methods, ", "))
		s.refuse(w, r, d, rt.methodRefusal(r))
		return
	}
	a.door, a.id = d, id
	if call != nil {
		a.key = call.key
	}
	rt.handle(w, r, a)
}

// documentCall is the door of one request on a path with {id}, and the plan key its
// grant resolved (one allocation for both).
type documentCall struct {
	door door
	key  string
}

// methodRefusal is the 405 of a method rt does not answer.
func (rt *route) methodRefusal(r *http.Request) *Error {
	if rt.refuseMethod != nil {
		return rt.refuseMethod(r.Method)
	}
	return &Error{Status: http.StatusMethodNotAllowed, Code: CodeMethodNotAllowed,
		Message: r.Method + " is not allowed on " + r.URL.Path + "; use " + strings.Join(rt.methods, " or ")}
}

// notFound answers a path without a route. An OAuth probe gets OAuth's answer
// (oauth_probe.go); under /api/v1 the answer is the document protocol's (problem details
// naming its paths, not cached); elsewhere {"error":{…}}.
func (s *Server) notFound(w http.ResponseWriter, r *http.Request) {
	if isOAuthProbe(r.URL.Path) {
		s.answerOAuthProbe(w, r)
		return
	}
	if !strings.HasPrefix(r.URL.Path, documentsPrefix+"/") {
		s.refuseHTTP(w, r, &Error{Status: http.StatusNotFound, Code: CodeNotFound, Message: "no such endpoint: " + r.URL.Path})
		return
	}
	w.Header().Set("Vary", "Origin")
	w.Header().Set("Cache-Control", "no-store")
	s.refuse(w, r, &s.documents.door, &Error{Status: http.StatusNotFound, Code: CodeNotFound,
		Message: "no such endpoint: " + r.URL.Path + "; the document protocol has /api/v1/info and /api/v1/documents/{id}[/content|/title|/changes|/history|/restore]"})
}
