package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// poster sends one POST to the target and reads the whole answer into buf. Each worker
// goroutine has its own poster (one keep-alive connection), so a poster needs no locking.
type poster interface {
	post(ctx context.Context, path string, body []byte, headers map[string]string, buf *bytes.Buffer) (status int, err error)
	close()
}

// Client kinds (-client).
const (
	clientRaw     = "raw"     // rawPoster: HTTP/1.1 written and parsed by hand, no allocation per request
	clientNetHTTP = "nethttp" // netPoster: Go's net/http client
)

// newPoster returns a poster of the given kind for base (http://HOST:PORT).
func newPoster(kind, base string) (poster, error) {
	switch kind {
	case clientNetHTTP:
		tr := &http.Transport{MaxIdleConnsPerHost: 1, MaxConnsPerHost: 1, IdleConnTimeout: 30 * time.Second}
		return &netPoster{c: &http.Client{Transport: tr, Timeout: 30 * time.Second}, base: base}, nil
	case clientRaw, "":
		u, err := url.Parse(base)
		if err != nil || u.Scheme != "http" || u.Host == "" {
			return nil, fmt.Errorf("raw client: want http://HOST:PORT, got %q", base)
		}
		return &rawPoster{addr: u.Host}, nil
	}
	return nil, fmt.Errorf("unknown client %q (raw, nethttp)", kind)
}

// netPoster is the net/http client: a faithful HTTP client, but it costs the generator
// 50–80 µs of CPU per request (request and header maps, transport bookkeeping, a
// goroutine per connection), which on a 2-core machine caps the rate it can measure.
type netPoster struct {
	c    *http.Client
	base string
}

func (p *netPoster) post(ctx context.Context, path string, body []byte, headers map[string]string, buf *bytes.Buffer) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.base+path, bytes.NewReader(body))
	if err != nil {
		return 0, fmt.Errorf("new request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := p.c.Do(req)
	if err != nil {
		return 0, fmt.Errorf("post %s: %w", path, err)
	}
	defer resp.Body.Close()
	buf.Reset()
	if _, err := io.Copy(buf, resp.Body); err != nil {
		return resp.StatusCode, fmt.Errorf("read answer: %w", err)
	}
	return resp.StatusCode, nil
}

func (p *netPoster) close() { p.c.CloseIdleConnections() }

// rawPoster speaks HTTP/1.1 over one keep-alive TCP connection with pre-built request
// bytes: it writes the request line, the same headers net/http's client sends (minus
// Accept-Encoding, so no server compresses) and the body, then reads the status line,
// Content-Length or chunked framing, and the body into the caller's buffer. A request
// whose head and body are the same as the previous one reuses its bytes, so a fixed
// scenario costs the generator a write and a read per request and almost nothing else.
type rawPoster struct {
	addr string
	conn net.Conn
	br   *bufio.Reader
	req  []byte // the last request sent

	lastPath    string
	lastBody    []byte
	lastHeaders map[string]string
}

// errProtocol marks an answer the raw client cannot parse (the connection is dropped).
var errProtocol = errors.New("malformed HTTP answer")

func (p *rawPoster) post(ctx context.Context, path string, body []byte, headers map[string]string, buf *bytes.Buffer) (int, error) {
	if p.conn == nil {
		var d net.Dialer
		c, err := d.DialContext(ctx, "tcp", p.addr)
		if err != nil {
			return 0, fmt.Errorf("dial %s: %w", p.addr, err)
		}
		p.conn = c
		if p.br == nil {
			p.br = bufio.NewReaderSize(c, 16<<10)
		} else {
			p.br.Reset(c)
		}
	}
	p.build(path, body, headers)
	deadline := time.Now().Add(30 * time.Second)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	_ = p.conn.SetDeadline(deadline)
	if _, err := p.conn.Write(p.req); err != nil {
		p.close()
		return 0, fmt.Errorf("write request: %w", err)
	}
	status, keep, err := readResponse(p.br, buf)
	if err != nil {
		p.close()
		return status, err
	}
	if !keep {
		p.close()
	}
	return status, nil
}

// build prepares p.req for this request, reusing it when nothing changed.
func (p *rawPoster) build(path string, body []byte, headers map[string]string) {
	if p.req != nil && path == p.lastPath && sameBytes(body, p.lastBody) && sameHeaders(headers, p.lastHeaders) {
		return
	}
	r := p.req[:0]
	r = append(r, "POST "...)
	r = append(r, path...)
	r = append(r, " HTTP/1.1\r\nHost: "...)
	r = append(r, p.addr...)
	r = append(r, "\r\nUser-Agent: Go-http-client/1.1\r\nContent-Type: application/json\r\n"...)
	for k, v := range headers {
		r = append(r, http.CanonicalHeaderKey(k)...)
		r = append(r, ": "...)
		r = append(r, v...)
		r = append(r, "\r\n"...)
	}
	r = append(r, "Content-Length: "...)
	r = strconv.AppendInt(r, int64(len(body)), 10)
	r = append(r, "\r\n\r\n"...)
	r = append(r, body...)
	p.req = r
	p.lastPath, p.lastBody, p.lastHeaders = path, body, headers
}

// sameBytes reports whether a and b are the same slice (same array, same length): fixed
// scenarios pass one body for every request, so identity is the cheap and exact test.
func sameBytes(a, b []byte) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

func sameHeaders(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func (p *rawPoster) close() {
	if p.conn != nil {
		p.conn.Close()
		p.conn = nil
	}
}

// readResponse reads one HTTP/1.1 answer into buf and reports its status and whether the
// connection may be reused.
func readResponse(br *bufio.Reader, buf *bytes.Buffer) (status int, keepAlive bool, err error) {
	line, err := readLine(br)
	if err != nil {
		return 0, false, fmt.Errorf("read status line: %w", err)
	}
	// "HTTP/1.1 200 OK"
	if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.")) || line[8] != ' ' {
		return 0, false, fmt.Errorf("%w: status line %q", errProtocol, line)
	}
	for _, c := range line[9:12] {
		if c < '0' || c > '9' {
			return 0, false, fmt.Errorf("%w: status line %q", errProtocol, line)
		}
		status = status*10 + int(c-'0')
	}
	keepAlive = line[7] == '1'
	length, chunked := int64(-1), false
	for {
		h, err := readLine(br)
		if err != nil {
			return status, false, fmt.Errorf("read header: %w", err)
		}
		if len(h) == 0 {
			break
		}
		k, v, ok := bytes.Cut(h, []byte(":"))
		if !ok {
			return status, false, fmt.Errorf("%w: header %q", errProtocol, h)
		}
		v = bytes.TrimSpace(v)
		switch {
		case bytes.EqualFold(k, []byte("Content-Length")):
			if length = parseDecimal(v); length < 0 {
				return status, false, fmt.Errorf("%w: Content-Length %q", errProtocol, v)
			}
		case bytes.EqualFold(k, []byte("Transfer-Encoding")):
			chunked = bytes.EqualFold(v, []byte("chunked"))
		case bytes.EqualFold(k, []byte("Connection")):
			if bytes.EqualFold(v, []byte("close")) {
				keepAlive = false
			}
		}
	}
	buf.Reset()
	switch {
	case chunked:
		err = readChunked(br, buf)
	case length >= 0:
		_, err = io.CopyN(buf, br, length)
	case status == http.StatusNoContent || status == http.StatusNotModified || (status >= 100 && status < 200):
	default: // the body runs to the end of the connection
		_, err = io.Copy(buf, br)
		keepAlive = false
	}
	if err != nil {
		return status, false, fmt.Errorf("read body: %w", err)
	}
	return status, keepAlive, nil
}

// readChunked reads a chunked body (and its empty trailer) into buf.
func readChunked(br *bufio.Reader, buf *bytes.Buffer) error {
	for {
		line, err := readLine(br)
		if err != nil {
			return err
		}
		if i := bytes.IndexByte(line, ';'); i >= 0 {
			line = line[:i]
		}
		n, err := strconv.ParseInt(string(bytes.TrimSpace(line)), 16, 64)
		if err != nil || n < 0 {
			return fmt.Errorf("%w: chunk size %q", errProtocol, line)
		}
		if n == 0 {
			for { // trailer lines up to the empty one
				t, err := readLine(br)
				if err != nil {
					return err
				}
				if len(t) == 0 {
					return nil
				}
			}
		}
		if _, err := io.CopyN(buf, br, n); err != nil {
			return err
		}
		if crlf, err := readLine(br); err != nil || len(crlf) != 0 {
			return fmt.Errorf("%w: no CRLF after a chunk", errProtocol)
		}
	}
}

// readLine returns one line without its CRLF; the slice is valid until the next read.
func readLine(br *bufio.Reader) ([]byte, error) {
	line, err := br.ReadSlice('\n')
	if err != nil {
		return nil, err
	}
	line = bytes.TrimSuffix(line[:len(line)-1], []byte("\r"))
	return line, nil
}

// parseDecimal parses a non-negative decimal of up to 18 digits; -1 when it is not one.
func parseDecimal(b []byte) int64 {
	if len(b) == 0 || len(b) > 18 {
		return -1
	}
	var n int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return -1
		}
		n = n*10 + int64(c-'0')
	}
	return n
}
