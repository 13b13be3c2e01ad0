// Package remote is the client of Werkbaum document servers (shared/werkbaum/DOCUMENTS.md)
// for plans kept on one ([[plans]] url = …): one HTTP exchange at a time, its wire types
// and its errors. The plan store (package plans) runs the journal and the verbs around
// it; this package knows nothing of them.
package remote

import (
	"bytes"
	"context"
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
)

// DefaultTimeout bounds one request to a document server, so that a server that hangs
// gives a tool error instead of a hung agent.
const DefaultTimeout = 10 * time.Second

// Client sends the requests of document plans; safe for concurrent use.
type Client struct {
	http    *http.Client
	timeout atomic.Int64 // per request, in nanoseconds (tests shorten it)
}

// NewClient returns a client with the default timeout and the redirect policy below.
func NewClient() *Client {
	c := &Client{http: &http.Client{CheckRedirect: sameOriginRedirect}}
	c.timeout.Store(int64(DefaultTimeout))
	return c
}

// Timeout is the bound of one request.
func (c *Client) Timeout() time.Duration { return time.Duration(c.timeout.Load()) }

// SetTimeout changes the bound of the requests that start from now on.
func (c *Client) SetTimeout(d time.Duration) { c.timeout.Store(int64(d)) }

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
func IsRedirect(status int) bool { return status >= 300 && status < 400 }

// Call is one HTTP exchange with a document server.
type Call struct {
	Plan    string // the plan's key, for messages
	Token   string // the bearer token ("" = none)
	Method  string
	URL     string
	Request string // for messages: "GET <doc>", "PATCH …/content"
	Body    any    // marshalled as JSON; nil = no body
}

// Do sends the call and returns the status, the Location of a redirect it did not follow,
// and the body (limited to limit bytes). A transport error, a timeout or a body over the
// limit comes back as an *Error.
func (cl *Client) Do(ctx context.Context, c Call, limit int64) (int, string, []byte, error) {
	ctx, cancel := context.WithTimeout(ctx, cl.Timeout())
	defer cancel()
	server := HostOf(c.URL)
	fail := func(status int, detail string, timeout bool) *Error {
		return &Error{Plan: c.Plan, Server: server, Request: c.Request, Status: status, Detail: detail, Timeout: timeout}
	}
	var body io.Reader
	if c.Body != nil {
		raw, err := json.Marshal(c.Body)
		if err != nil {
			return 0, "", nil, fmt.Errorf("plan %q: encode %s: %w", c.Plan, c.Request, err)
		}
		body = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(ctx, c.Method, c.URL, body)
	if err != nil {
		return 0, "", nil, fmt.Errorf("plan %q: build %s: %w", c.Plan, c.Request, err)
	}
	req.Header.Set("Accept", "application/json, application/problem+json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("User-Agent", "talkd")
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	resp, err := cl.http.Do(req)
	if err != nil {
		if ctx.Err() != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return 0, "", nil, fail(0, "", true)
		}
		if errors.Is(err, context.Canceled) {
			return 0, "", nil, fmt.Errorf("plan %q: %s: %w", c.Plan, c.Request, err)
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
	if IsRedirect(resp.StatusCode) {
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

// ProblemDetail is what a non-success answer says about itself: the problem's detail or
// title, else the first bytes of the body.
func ProblemDetail(body []byte) string {
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

// StatusHint says what a user can do about a failure status of a plan whose token comes
// from the environment variable tokenEnv ("" = none configured).
func StatusHint(tokenEnv string, status int) string {
	switch status {
	case http.StatusUnauthorized, http.StatusForbidden:
		if tokenEnv == "" {
			return "the server wants a token: set token_env for this plan"
		}
		return "check the token in $" + tokenEnv
	case http.StatusNotFound:
		return "the document does not exist (deleted?); check the plan's url"
	}
	return ""
}

// HostOf is the host[:port] of a URL, for messages.
func HostOf(raw string) string {
	if u, err := url.Parse(raw); err == nil && u.Host != "" {
		return u.Host
	}
	return raw
}
