package plans

// Plans kept on a Werkbaum document server ([[plans]] url = …, DOCUMENTS.md): a read is a
// GET of the document, a write runs the same verb and guards as for a file and sends the
// line diff of the result as PATCH …/content against the version it read. The journal
// works as for files, except that a pending write is settled by sending the same PATCH
// again, with the same (clientId, seq): the server's idempotency answers what it answered
// the first time, or applies it now if it never got it.

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"talkd/internal/config"
	"talkd/internal/werkbaum"
	"talkd/internal/werkbaum/plans/docs"
)

// remoteTimeout bounds one request to a document server, so that a server that hangs
// gives a tool error instead of a hung agent.
const remoteTimeout = 10 * time.Second

// remoteSummaryWait bounds the read of a document plan for its summary (/status,
// plans_list): a hanging server then costs a status one second, not ten.
const remoteSummaryWait = time.Second

// fallbackDisplayName is the display name of an agent write when neither the plan's
// display_name nor the MCP host's clientInfo.name gives one (DOCUMENTS.md).
const fallbackDisplayName = "Agent"

// remoteState is the HTTP side of document plans.
type remoteState struct {
	client  *http.Client
	timeout atomic.Int64 // per request, in nanoseconds (tests shorten it)
}

func newRemoteState() *remoteState {
	r := &remoteState{client: &http.Client{CheckRedirect: sameOriginRedirect}}
	r.timeout.Store(int64(remoteTimeout))
	return r
}

// maxRemoteRedirects bounds the same-origin redirects one document request follows.
const maxRemoteRedirects = 3

// sameOriginRedirect is the redirect policy of document requests. Go's client turns a
// PATCH answered 301/302/303 into a GET and would take the document it returns for the
// patch's result (a write reported applied that the server never got), and re-sends a
// 307/308 to any host. Only a 307 or 308 to the same origin is followed: those keep the
// method and the body, and the token goes nowhere else. Any other redirect is answered
// as it came (http.ErrUseLastResponse), which the callers turn into a RemoteError.
func sameOriginRedirect(req *http.Request, via []*http.Request) error {
	if len(via) == 0 || req.Response == nil {
		return http.ErrUseLastResponse
	}
	first := via[0]
	switch req.Response.StatusCode {
	case http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
	default:
		return http.ErrUseLastResponse
	}
	if !sameOrigin(first.URL, req.URL) || req.Method != first.Method || len(via) > maxRemoteRedirects {
		return http.ErrUseLastResponse
	}
	return nil
}

// sameOrigin reports whether a and b share scheme, host and port (RFC 6454).
func sameOrigin(a, b *url.URL) bool {
	return strings.EqualFold(a.Scheme, b.Scheme) && strings.EqualFold(originHost(a), originHost(b))
}

// originHost is host:port with the scheme's default port made explicit.
func originHost(u *url.URL) string {
	if u.Port() != "" {
		return u.Host
	}
	switch strings.ToLower(u.Scheme) {
	case "https":
		return u.Host + ":443"
	case "http":
		return u.Host + ":80"
	}
	return u.Host
}

// isRedirect reports a 3xx answer: a redirect talkd did not follow (sameOriginRedirect).
func isRedirect(status int) bool { return status >= 300 && status < 400 }

// remotePatch is the body of PATCH …/content (DOCUMENTS.md ContentPatch).
type remotePatch struct {
	BaseVersion uint64            `json:"baseVersion"`
	Checksum    string            `json:"checksum"`
	ClientID    string            `json:"clientId"`
	Seq         int64             `json:"seq"`
	DisplayName string            `json:"displayName,omitempty"`
	Milestone   bool              `json:"milestone"`
	Ops         []werkbaum.LineOp `json:"ops"`
}

// remoteDocument is a GET's answer (DOCUMENTS.md Document).
type remoteDocument struct {
	ID      string `json:"id"`
	Title   string `json:"title"`
	Content string `json:"content"`
	Version uint64 `json:"version"`
}

// patchAnswer is the body of a PATCH's 200 (version) or 409 (currentVersion).
type patchAnswer struct {
	Version        uint64            `json:"version"`
	CurrentVersion uint64            `json:"currentVersion"`
	OpsSinceBase   []werkbaum.LineOp `json:"opsSinceBase"`
}

// remoteCall is one HTTP exchange with a document server.
type remoteCall struct {
	plan    string
	p       config.Plan
	method  string
	url     string
	request string // for messages: "GET <doc>", "PATCH …/content"
	body    any
}

// remoteDo sends the call and returns the status, the Location of a redirect it did not
// follow, and the body (limited to limit bytes). A transport error, a timeout or a body
// over the limit comes back as a *RemoteError.
func (s *Service) remoteDo(ctx context.Context, c remoteCall, limit int64) (int, string, []byte, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Duration(s.remote.timeout.Load()))
	defer cancel()
	server := hostOf(c.url)
	fail := func(status int, detail string, timeout bool) *RemoteError {
		return &RemoteError{Plan: c.plan, Server: server, Request: c.request, Status: status, Detail: detail, Timeout: timeout}
	}
	var body io.Reader
	if c.body != nil {
		raw, err := json.Marshal(c.body)
		if err != nil {
			return 0, "", nil, fmt.Errorf("plan %q: encode %s: %w", c.plan, c.request, err)
		}
		body = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(ctx, c.method, c.url, body)
	if err != nil {
		return 0, "", nil, fmt.Errorf("plan %q: build %s: %w", c.plan, c.request, err)
	}
	req.Header.Set("Accept", "application/json, application/problem+json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("User-Agent", "talkd")
	if tok := c.p.BearerToken(); tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	resp, err := s.remote.client.Do(req)
	if err != nil {
		if ctx.Err() != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return 0, "", nil, fail(0, "", true)
		}
		if errors.Is(err, context.Canceled) {
			return 0, "", nil, fmt.Errorf("plan %q: %s: %w", c.plan, c.request, err)
		}
		return 0, "", nil, fail(0, transportDetail(err), false)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		if ctx.Err() != nil {
			return 0, "", nil, fail(0, "", true)
		}
		return 0, "", nil, fail(0, "reading the answer failed: "+transportDetail(err), false)
	}
	if int64(len(data)) > limit {
		return resp.StatusCode, "", nil, fail(resp.StatusCode, fmt.Sprintf("the answer is larger than %d bytes", limit), false)
	}
	var location string
	if isRedirect(resp.StatusCode) {
		location = resp.Header.Get("Location")
	}
	return resp.StatusCode, location, data, nil
}

// transportDetail is a transport error without the request's method and URL, which the
// message states already.
func transportDetail(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err.Error()
	}
	return err.Error()
}

// problemDetail is what a non-success answer says about itself: the problem's detail or
// title, else the first bytes of the body.
func problemDetail(body []byte) string {
	var p struct{ Title, Detail string }
	if json.Unmarshal(body, &p) == nil {
		if p.Detail != "" {
			return p.Detail
		}
		if p.Title != "" {
			return p.Title
		}
	}
	t := strings.TrimSpace(string(body))
	if len(t) > 200 {
		t = t[:200]
		for !utf8.ValidString(t) {
			t = t[:len(t)-1]
		}
		t += "…"
	}
	return t
}

// statusHint says what a user can do about a failure status.
func statusHint(p config.Plan, status int) string {
	switch status {
	case http.StatusUnauthorized, http.StatusForbidden:
		if p.TokenEnv == "" {
			return "the server wants a token: set token_env for this plan"
		}
		return "check the token in $" + p.TokenEnv
	case http.StatusNotFound:
		return "the document does not exist (deleted?); check the plan's url"
	}
	return ""
}

func hostOf(raw string) string {
	if u, err := url.Parse(raw); err == nil && u.Host != "" {
		return u.Host
	}
	return raw
}

// remoteBodyLimit bounds a document server's answer: the largest plan the store takes,
// JSON-escaped (up to six bytes a byte), and room for the rest of the document.
func (s *Service) remoteBodyLimit() int64 { return werkbaum.JSONBodyLimit(s.maxBytes) }

// readRemote is Read for a document plan: GET the document; its version is the base's
// revision. The base's checksum is the same as a file plan's (the hex SHA-256 of the
// text), what the tools take; the patch's checksum is the protocol's ("sha256:" + hex of
// the LF-normalised text), computed when the patch is made.
func (s *Service) readRemote(ctx context.Context, key string, p config.Plan) (*Snapshot, error) {
	status, location, body, err := s.remoteDo(ctx, remoteCall{plan: key, p: p, method: http.MethodGet, url: p.URL, request: "GET " + p.URL}, s.remoteBodyLimit())
	if err != nil {
		s.log.Warn("document plan unreadable", "plan", key, "url", p.URL, "err", err)
		return nil, err
	}
	if status != http.StatusOK {
		err := &RemoteError{Plan: key, Server: hostOf(p.URL), Request: "GET " + p.URL, Status: status, Detail: problemDetail(body), Hint: statusHint(p, status), Location: location}
		s.log.Warn("document plan unreadable", "plan", key, "url", p.URL, "status", status, "err", err)
		return nil, err
	}
	var doc remoteDocument
	if err := json.Unmarshal(body, &doc); err != nil {
		err := &RemoteError{Plan: key, Server: hostOf(p.URL), Request: "GET " + p.URL, Status: status, Detail: "the answer is not a document: " + err.Error()}
		s.log.Warn("document plan unreadable", "plan", key, "url", p.URL, "err", err)
		return nil, err
	}
	if int64(len(doc.Content)) > s.maxBytes {
		return nil, fmt.Errorf("plan %q: the document has %d bytes, more than the %d the engine takes: %w", key, len(doc.Content), s.maxBytes, werkbaum.ErrTooLarge)
	}
	text := doc.Content
	return &Snapshot{Text: text, Base: Base{Revision: doc.Version, Checksum: werkbaum.Checksum([]byte(text))}, Lines: countLines(text)}, nil
}

// remoteDisplayName is the name the document server shows for a write: the plan's
// display_name, else the agent's name (the MCP host's clientInfo.name), else "Agent";
// at most the protocol's 64 characters.
func remoteDisplayName(p config.Plan, who Author) string {
	name := p.DisplayName
	if name == "" {
		name = strings.TrimSpace(who.Agent)
	}
	if name == "" {
		return fallbackDisplayName
	}
	if utf8.RuneCountInString(name) > docs.MaxDisplayName {
		name = string([]rune(name)[:docs.MaxDisplayName])
	}
	return name
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
	kept := s.mem.keptOf(key)
	err := s.commit.Do(func(tx Tx) error {
		if err := s.putKept(tx, kept); err != nil {
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
		e.Remote.Seq = int64(seq)
		return s.putEntry(tx.Bucket(bucketName(key)), e)
	})
	if err != nil {
		return fmt.Errorf("write journal: %w", err)
	}
	s.mem.forgetKept(kept)
	return nil
}

// settle settles a pending entry whose writer is gone: by the file for a file plan, by
// sending the same PATCH again for a document plan. nil means "not applied" (the entry is
// gone and the request id unknown again).
func (s *Service) settle(ctx context.Context, p planRef, e *journalEntry) (*journalEntry, error) {
	if p.Remote() {
		return s.settleRemote(ctx, p.Key, p.Plan, e)
	}
	return s.settleByFile(p, e)
}

// settleRemote sends a pending entry's PATCH (again: the same body, the same (clientId,
// seq)) and settles the entry by the answer: 200 applied, 409 and 422 a conflict (the
// text is read again), another 4xx not applied (forgotten, nil). No answer, a timeout or a
// 5xx leave the entry pending and come back as a *RemoteError that says so.
func (s *Service) settleRemote(ctx context.Context, key string, p config.Plan, e *journalEntry) (*journalEntry, error) {
	if e.Remote == nil {
		return nil, fmt.Errorf("plan %q: pending journal entry %q has no document patch to send", key, e.RequestID)
	}
	request := "PATCH " + p.URL + "/content"
	// Once sent, the PATCH is seen through even if the caller hangs up (bounded by the
	// request timeout): its answer settles the entry instead of leaving it pending.
	ctx = context.WithoutCancel(ctx)
	status, location, body, err := s.remoteDo(ctx, remoteCall{plan: key, p: p, method: http.MethodPatch, url: p.URL + "/content", request: request, body: e.Remote}, 1<<20+s.remoteBodyLimit())
	if err != nil {
		var re *RemoteError
		if errors.As(err, &re) {
			re.MaybeApplied = true
		}
		s.log.Warn("document write unsettled: no answer from the server", "plan", key, "url", p.URL, "request_id", e.RequestID,
			"client_id", e.Remote.ClientID, "seq", e.Remote.Seq, "err", err)
		return nil, err
	}
	settled := *e
	settled.Remote = nil // kept only while pending: a settled entry needs no patch (and a whole text's ops are large)
	switch {
	case status == http.StatusOK:
		var ans patchAnswer
		if err := json.Unmarshal(body, &ans); err != nil || ans.Version == 0 {
			err := &RemoteError{Plan: key, Server: hostOf(p.URL), Request: request, Status: status, MaybeApplied: true,
				Detail: fmt.Sprintf("the answer is not a patch result (%s)", problemDetail(body))}
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
			s.keepApplied(key, &settled, planMeta{})
		}
		s.log.Info("document write applied", "plan", key, "request_id", e.RequestID, "version", ans.Version,
			"client_id", e.Remote.ClientID, "seq", e.Remote.Seq, "rebased", len(ans.OpsSinceBase) > 0)
		return &settled, nil
	case status == http.StatusConflict || status == http.StatusUnprocessableEntity:
		reason := "the document changed since the base and the changes overlap (the server answered 409)"
		if status == http.StatusUnprocessableEntity {
			reason = "the document server could not apply the diff (422: " + problemDetail(body) + ")"
		}
		settled.State, settled.Error, settled.Revision, settled.Result = StateConflict, reason, 0, nil
		if err := s.record(key, &settled); err != nil {
			return nil, err
		}
		s.log.Info("document write conflict", "plan", key, "request_id", e.RequestID, "status", status, "reason", reason)
		return &settled, nil
	case status >= 500:
		err := &RemoteError{Plan: key, Server: hostOf(p.URL), Request: request, Status: status, Detail: problemDetail(body), MaybeApplied: true}
		s.log.Warn("document write unsettled: the server failed", "plan", key, "request_id", e.RequestID, "status", status, "err", err)
		return nil, err
	case isRedirect(status):
		// A redirect talkd did not follow: the change went nowhere (the answering server
		// sent it elsewhere instead of taking it). The entry is forgotten, so the request
		// id is unknown again and its retry runs anew from a fresh read of the document.
		if err := s.forget(key, e); err != nil {
			s.log.Error("journal: forget redirected document write", "plan", key, "err", err)
		}
		err := &RemoteError{Plan: key, Server: hostOf(p.URL), Request: request, Status: status, Location: location}
		s.log.Warn("document write refused: the server answered a redirect", "plan", key, "request_id", e.RequestID, "status", status, "location", location, "err", err)
		return nil, err
	default:
		// A definite refusal (400, 401, 403, 404, …): the server did not apply it.
		if err := s.forget(key, e); err != nil {
			s.log.Error("journal: forget refused document write", "plan", key, "err", err)
		}
		err := &RemoteError{Plan: key, Server: hostOf(p.URL), Request: request, Status: status, Detail: problemDetail(body), Hint: statusHint(p, status)}
		s.log.Warn("document write refused by the server", "plan", key, "request_id", e.RequestID, "status", status, "err", err)
		return nil, err
	}
}
