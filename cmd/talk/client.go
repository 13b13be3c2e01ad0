package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"talkd/internal/config"
)

// fallbackURL is used when the config cannot be read: the daemon's default listen address.
const fallbackURL = "http://" + config.DefaultListen

// maxAnswerBytes bounds what talk reads of one answer; history and plan texts fit easily.
const maxAnswerBytes = 32 << 20

// client speaks HTTP to one daemon.
type client struct {
	base   string // e.g. http://127.0.0.1:7077, no trailing slash
	source string // where base came from, for the unreachable hint
	token  string
	agent  string // TALK_AGENT: the name talk claims for the caller (history, plan authors)
	http   *http.Client
}

// client resolves the daemon URL (--url, TALK_URL, the config's listen address, the
// default) and builds the HTTP client with the request time limit, once per invocation.
func (a *app) client() *client {
	if a.cl != nil {
		return a.cl
	}
	c := &client{token: strings.TrimSpace(a.getenv("TALK_TOKEN")), agent: strings.TrimSpace(a.getenv("TALK_AGENT"))}
	switch {
	case a.opts.url != "":
		c.base, c.source = normalizeURL(a.opts.url), "--url"
	case strings.TrimSpace(a.getenv("TALK_URL")) != "":
		c.base, c.source = normalizeURL(a.getenv("TALK_URL")), "TALK_URL"
	default:
		c.base, c.source = a.configURL()
	}
	timeout := a.opts.timeout
	if timeout <= 0 {
		timeout = defaultTimeout
	}
	transport := http.DefaultTransport.(*http.Transport).Clone()
	c.http = &http.Client{Timeout: timeout, Transport: transport}
	a.cl = c
	return c
}

// configURL derives the URL from the daemon's own configuration, so `talk` finds a daemon
// started with the same config and environment without flags. Peek skips the checks that
// need the daemon's secrets (client tokens), which a user's shell usually does not hold.
func (a *app) configURL() (base, source string) {
	cfg, err := a.config()
	if err != nil {
		a.warnf("the talkd config cannot be read, using %s (set TALK_URL or --url to choose):\n  %s",
			fallbackURL, strings.ReplaceAll(err.Error(), "\n", "\n  "))
		return fallbackURL, "default"
	}
	host, port, err := net.SplitHostPort(cfg.Server.Listen)
	if err != nil {
		a.warnf("config listen address %q is not host:port, using %s", cfg.Server.Listen, fallbackURL)
		return fallbackURL, "default"
	}
	// A daemon listening on all interfaces is reached over loopback.
	switch host {
	case "", "0.0.0.0":
		host = "127.0.0.1"
	case "::":
		host = "::1"
	}
	src := "config " + cfg.Source
	if port == "0" {
		src += " (it listens on port 0, a free port chosen at start: pass --url)"
	}
	return "http://" + net.JoinHostPort(host, port), src
}

// normalizeURL accepts "host:port" as well as a full URL and drops a trailing slash.
func normalizeURL(raw string) string {
	u := strings.TrimRight(strings.TrimSpace(raw), "/")
	if !strings.Contains(u, "://") {
		u = "http://" + u
	}
	return u
}

// answer is one HTTP answer of the daemon.
type answer struct {
	status int
	header http.Header
	body   []byte
}

// unreachableError means no answer came: nothing listens, the name does not resolve, or
// the daemon did not answer in time. Exit code 3.
type unreachableError struct {
	url     string
	source  string
	timeout time.Duration // > 0 when the time limit passed
	err     error
}

func (e *unreachableError) Error() string {
	if e.timeout > 0 {
		return fmt.Sprintf("talkd at %s (from %s) did not answer within %s", e.url, e.source, e.timeout)
	}
	return fmt.Sprintf("talkd is not reachable at %s (from %s): %v", e.url, e.source, rootCause(e.err))
}

func (e *unreachableError) Unwrap() error { return e.err }

// refusedError is an error answer of the daemon (4xx/5xx). Exit code 4.
type refusedError struct {
	status     int
	code       string
	message    string
	field      string
	retryAfter string
	body       []byte
}

func (e *refusedError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "refused by talkd (HTTP %d", e.status)
	if e.code != "" {
		b.WriteString(", " + e.code)
	}
	if e.field != "" {
		b.WriteString(", field " + e.field)
	}
	b.WriteString("): " + e.message)
	if e.retryAfter != "" {
		b.WriteString(" (retry after " + e.retryAfter + "s)")
	}
	switch e.status {
	case http.StatusUnauthorized:
		b.WriteString("\n  hint: this daemon runs in shared mode; set TALK_TOKEN to your client's token")
	case http.StatusForbidden:
		if e.code == "host_not_allowed" {
			b.WriteString("\n  hint: reach the daemon by a loopback address or add the host to server.allowed_hosts")
		}
	}
	return b.String()
}

// rootCause strips the url.Error and net.OpError wrapping down to the readable reason
// ("connection refused").
func rootCause(err error) error {
	for {
		var ue *url.Error
		var oe *net.OpError
		switch {
		case errors.As(err, &ue) && ue.Err != nil && ue.Err != err:
			err = ue.Err
		case errors.As(err, &oe) && oe.Err != nil && oe.Err != err:
			err = oe.Err
		default:
			return err
		}
	}
}

// do sends one request. body, when not nil, is marshalled as JSON. The answer is returned
// for 2xx; an error answer becomes *refusedError, a transport failure *unreachableError.
func (c *client) do(ctx context.Context, method, path string, body any, header http.Header) (*answer, error) {
	var rd io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			return nil, fmt.Errorf("encode the request: %w", err)
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return nil, fmt.Errorf("build the request to %s: %w", c.base+path, err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "talk/"+version)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	if c.agent != "" {
		req.Header.Set("X-Talk-Agent", c.agent)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("request to %s cancelled: %w", c.base, ctx.Err())
		}
		ue := &unreachableError{url: c.base, source: c.source, err: err}
		var netErr net.Error
		if errors.As(err, &netErr) && netErr.Timeout() {
			ue.timeout = c.http.Timeout
		}
		return nil, ue
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswerBytes))
	if err != nil {
		var netErr net.Error
		if errors.As(err, &netErr) && netErr.Timeout() {
			return nil, &unreachableError{url: c.base, source: c.source, err: err, timeout: c.http.Timeout}
		}
		return nil, fmt.Errorf("read the answer of %s %s: %w", method, c.base+path, err)
	}
	ans := &answer{status: resp.StatusCode, header: resp.Header, body: raw}
	if resp.StatusCode >= 400 {
		return ans, refusal(ans)
	}
	return ans, nil
}

// refusal turns an error answer into a refusedError, reading the daemon's error body
// {"error":{"code","message","field"}} when there is one.
func refusal(ans *answer) *refusedError {
	e := &refusedError{status: ans.status, body: ans.body, retryAfter: ans.header.Get("Retry-After")}
	var eb struct {
		Error struct {
			// Code is a string in the HTTP doors' bodies and a number in JSON-RPC errors.
			Code    json.RawMessage `json:"code"`
			Message string          `json:"message"`
			Field   string          `json:"field"`
		} `json:"error"`
	}
	if json.Unmarshal(ans.body, &eb) == nil && eb.Error.Message != "" {
		e.code, e.message, e.field = strings.Trim(string(eb.Error.Code), `"`), eb.Error.Message, eb.Error.Field
		return e
	}
	snippet := strings.TrimSpace(string(ans.body))
	if len(snippet) > 200 {
		snippet = snippet[:200] + "…"
	}
	if snippet == "" {
		snippet = http.StatusText(ans.status)
	}
	e.message = "unexpected answer (is this talkd?): " + snippet
	return e
}

// fail reports err and returns the matching exit code. With --json an error answer of the
// daemon is also printed on stdout, unchanged, so scripts can read the code.
func (a *app) fail(err error) int {
	var ue *unreachableError
	var re *refusedError
	switch {
	case errors.As(err, &ue):
		var dnsErr *net.DNSError
		if errors.As(ue.err, &dnsErr) {
			// Starting talkd would not help: the address itself is wrong.
			a.warnf("%v\n  hint: the host %q does not resolve; check the address in %s (a URL like %s)", ue, dnsErr.Name, ue.source, fallbackURL)
			return exitUnreachable
		}
		if ue.timeout > 0 {
			// It listens but is slow: telling the user to start it would mislead.
			a.warnf("%v\n  hint: talkd is running but did not answer in time; give it longer with --timeout, and see talk doctor", ue)
			return exitUnreachable
		}
		a.warnf("%v\n  hint: start it with: talkd   (or point talk elsewhere with --url or TALK_URL)", ue)
		return exitUnreachable
	case errors.As(err, &re):
		if a.opts.json && len(re.body) > 0 && json.Valid(re.body) {
			a.printJSON(re.body)
		}
		a.warnf("%v", re)
		return exitRefused
	}
	a.warnf("%v", err)
	return exitFailure
}

// printJSON prints a JSON answer as the daemon sent it, on one line.
func (a *app) printJSON(raw []byte) {
	raw = bytes.TrimSpace(raw)
	var compact bytes.Buffer
	if json.Compact(&compact, raw) == nil {
		raw = compact.Bytes()
	}
	a.stdout.Write(raw)
	io.WriteString(a.stdout, "\n")
}

// decode parses a JSON answer into v, naming the endpoint when the daemon's answer does
// not have the expected shape.
func decode(ans *answer, what string, v any) error {
	if err := json.Unmarshal(ans.body, v); err != nil {
		return fmt.Errorf("the answer of %s is not the expected JSON: %w", what, err)
	}
	return nil
}
