package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"talkd/internal/api/mcprev"
)

// `talk mcp` is the stdio door for MCP hosts that launch a command instead of speaking
// HTTP: one JSON-RPC message per line on stdin, one per line on stdout. Each message is
// forwarded to the daemon's POST /mcp with the caller's token and the host's name, so the
// daemon stays the one place that validates, rules and attributes. Only protocol messages
// ever reach stdout; everything else goes to stderr, because a stray line would break the
// host's parser.

const (
	bridgeLatest2025 = mcprev.Latest2025
	// bridgeUnreachable is the JSON-RPC error code for "the daemon could not be asked, or
	// refused before it read the message" (401, 413, 5xx, …; data.httpStatus tells which),
	// from the implementation-defined server-error range of JSON-RPC.
	bridgeUnreachable = -32000
	bridgeParallel    = 8
)

var bridgeRevisions2025 = mcprev.Revisions2025()

// runMCP serves MCP over stdio, forwarding to daemonURL until stdin ends or ctx is done.
// It returns the process exit code.
func runMCP(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, daemonURL, token string) int {
	fs := flag.NewFlagSet("talk mcp", flag.ContinueOnError)
	fs.SetOutput(stderr)
	timeout := fs.Duration("timeout", 30*time.Second, "longest wait for the daemon's answer to one message")
	fs.Usage = func() {
		_, _ = fmt.Fprintf(stderr, "usage: talk mcp [--timeout 30s]\n\n"+
			"Serve MCP on stdin/stdout for hosts that launch a command, forwarding every message to\n"+
			"%s/mcp. Configure the host with the command \"talk\" and the argument \"mcp\".\n\nflags:\n", daemonURL)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		_, _ = fmt.Fprintf(stderr, "talk mcp: unexpected argument %q\n", fs.Arg(0))
		fs.Usage()
		return 2
	}
	b := newBridge(daemonURL, token, *timeout, stdout, stderr)
	return b.run(ctx, stdin)
}

// bridge forwards stdio messages to the daemon.
type bridge struct {
	endpoint string
	token    string
	client   *http.Client
	log      *slog.Logger

	outMu sync.Mutex
	out   io.Writer

	mu      sync.Mutex
	agent   string // the host's clientInfo.name, from initialize
	version string // the negotiated 2025-era revision, "" before initialize
}

func newBridge(daemonURL, token string, timeout time.Duration, stdout, stderr io.Writer) *bridge {
	transport := &http.Transport{
		Proxy:               nil, // the daemon is local; a proxy must not see the token
		DialContext:         (&net.Dialer{Timeout: 3 * time.Second}).DialContext,
		MaxIdleConnsPerHost: bridgeParallel,
		IdleConnTimeout:     90 * time.Second,
	}
	return &bridge{
		endpoint: strings.TrimRight(daemonURL, "/") + "/mcp",
		token:    token,
		client:   &http.Client{Timeout: timeout, Transport: transport},
		log:      slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelInfo})),
		out:      stdout,
	}
}

// run reads messages until EOF. initialize is handled before the next line is read (the
// host waits for it anyway, and later messages need its outcome); other messages run in
// parallel so one slow call does not hold up the rest.
func (b *bridge) run(ctx context.Context, stdin io.Reader) int {
	b.log.Info("talk mcp: forwarding MCP messages", "endpoint", b.endpoint)
	lines := make(chan []byte)
	readErr := make(chan error, 1)
	go func() {
		r := bufio.NewReaderSize(stdin, 64<<10)
		for {
			line, err := r.ReadBytes('\n')
			if len(bytes.TrimSpace(line)) > 0 {
				select {
				case lines <- line:
				case <-ctx.Done():
					return
				}
			}
			if err != nil {
				if !errors.Is(err, io.EOF) {
					readErr <- err
				}
				close(lines)
				return
			}
		}
	}()
	var wg sync.WaitGroup
	sem := make(chan struct{}, bridgeParallel)
	defer wg.Wait()
	for {
		select {
		case <-ctx.Done():
			return 0
		case line, ok := <-lines:
			if !ok {
				wg.Wait()
				select {
				case err := <-readErr:
					b.log.Error("talk mcp: reading stdin failed", "err", err)
					return 1
				default:
					return 0
				}
			}
			msg := bridgePeek(line)
			if msg.Method == "initialize" {
				b.handle(ctx, line, msg)
				continue
			}
			sem <- struct{}{}
			wg.Add(1)
			go func() {
				defer func() { <-sem; wg.Done() }()
				b.handle(ctx, line, msg)
			}()
		}
	}
}

// bridgeMessage is what the bridge needs to know of a message to forward it.
type bridgeMessage struct {
	valid  bool
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		Meta            map[string]json.RawMessage `json:"_meta"`
		Name            json.RawMessage            `json:"name"`
		URI             json.RawMessage            `json:"uri"`
		ProtocolVersion string                     `json:"protocolVersion"`
		ClientInfo      struct {
			Name string `json:"name"`
		} `json:"clientInfo"`
	} `json:"params"`
}

// isRequest reports whether the message expects an answer.
func (p *bridgeMessage) isRequest() bool {
	return p.valid && p.Method != "" && p.ID != nil && !bytes.Equal(p.ID, []byte("null"))
}

func bridgePeek(line []byte) bridgeMessage {
	var p bridgeMessage
	trimmed := bytes.TrimSpace(line)
	if !json.Valid(trimmed) {
		return p
	}
	p.valid = true
	if trimmed[0] == '{' {
		// Type mismatches deep inside params are the daemon's to report; keep what decoded.
		_ = json.Unmarshal(trimmed, &p)
	}
	return p
}

func (b *bridge) handle(ctx context.Context, line []byte, msg bridgeMessage) {
	if !msg.valid {
		b.writeError(nil, -32700, "parse error: the line is not valid JSON", nil)
		return
	}
	if msg.Method == "initialize" {
		b.mu.Lock()
		b.agent = msg.Params.ClientInfo.Name
		b.mu.Unlock()
	}
	status, body, err := b.forward(ctx, line, msg)
	if err != nil {
		b.unreachable(msg, err)
		return
	}
	if msg.Method == "" {
		b.answerOther(line, status, body)
		return
	}
	if !msg.isRequest() {
		if status >= 300 {
			b.log.Warn("talk mcp: the daemon refused a notification", "method", msg.Method, "status", status,
				"cause", bridgeRefusal(status, body, b.endpoint))
		}
		return
	}
	reply := bridgeParseReply(body)
	if reply.ok && reply.hasID && status != http.StatusUnauthorized {
		// The daemon's own answer to this request (a result, or a protocol error it
		// matched to the id, whatever the HTTP status): pass it on unchanged. A 401
		// carries the id too, but the bridge's own answer names what to set here
		// (TALK_TOKEN), which the daemon cannot know.
		if msg.Method == "initialize" && !reply.isError {
			b.mu.Lock()
			b.version = reply.protocolVersion
			b.mu.Unlock()
		}
		b.writeLine(body)
		return
	}
	// Anything else would leave the host waiting for an id that never comes: an HTTP
	// refusal before the daemon read the message (401, 403, 413, 429, 5xx), a JSON-RPC
	// error without an id, or no answer at all. Answer with the host's id, now.
	code, text := bridgeUnreachable, bridgeRefusal(status, body, b.endpoint)
	if (status < 300 || status == http.StatusBadRequest) && reply.ok && reply.isError && reply.code != 0 {
		code = reply.code // the daemon's verdict on the message itself (-32600, -32700, …)
	}
	b.log.Warn("talk mcp: the daemon did not answer the request itself; answering it with its id",
		"method", msg.Method, "status", status, "cause", text)
	b.writeError(msg.ID, code, text, map[string]any{"httpStatus": status})
}

// answerOther handles a message that is no single request or notification: a batch or
// a message without a method. The daemon's answer is passed on; if the daemon refused
// it at the HTTP level, each request inside a batch gets its own error with its own id,
// so that none of them is left waiting.
func (b *bridge) answerOther(line []byte, status int, body []byte) {
	trimmed := bytes.TrimSpace(line)
	if status < 300 || trimmed[0] != '[' {
		if len(bytes.TrimSpace(body)) > 0 {
			b.writeLine(body)
		}
		return
	}
	var elems []json.RawMessage
	if json.Unmarshal(trimmed, &elems) != nil {
		b.writeLine(body)
		return
	}
	text := bridgeRefusal(status, body, b.endpoint)
	b.log.Warn("talk mcp: the daemon refused a batch", "status", status, "cause", text)
	var out []json.RawMessage
	for _, e := range elems {
		m := bridgePeek(e)
		if !m.isRequest() {
			continue
		}
		enc, _ := json.Marshal(map[string]any{"code": bridgeUnreachable, "message": text, "data": map[string]any{"httpStatus": status}})
		out = append(out, json.RawMessage(`{"jsonrpc":"2.0","id":`+string(m.ID)+`,"error":`+string(enc)+`}`))
	}
	if len(out) == 0 {
		return
	}
	enc, _ := json.Marshal(out)
	b.writeLine(enc)
}

// bridgeReply is what the bridge reads of the daemon's answer.
type bridgeReply struct {
	ok              bool // a JSON-RPC 2.0 response object
	hasID           bool // its id is present and not null
	isError         bool
	code            int
	protocolVersion string
}

func bridgeParseReply(body []byte) bridgeReply {
	var raw struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Result  *struct {
			ProtocolVersion string `json:"protocolVersion"`
		} `json:"result"`
		Error *struct {
			Code int `json:"code"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &raw) != nil || raw.JSONRPC != "2.0" || (raw.Result == nil && raw.Error == nil) {
		return bridgeReply{}
	}
	r := bridgeReply{ok: true, hasID: len(raw.ID) > 0 && !bytes.Equal(raw.ID, []byte("null")), isError: raw.Error != nil}
	if raw.Error != nil {
		r.code = raw.Error.Code
	}
	if raw.Result != nil {
		r.protocolVersion = raw.Result.ProtocolVersion
	}
	return r
}

// bridgeRefusal names why the daemon's answer is no answer to the host's request, in
// words a user can act on, with the status and the daemon's own message.
func bridgeRefusal(status int, body []byte, endpoint string) string {
	detail := bridgeDetail(body)
	withDetail := func(s string) string {
		if detail == "" {
			return s
		}
		return s + ": " + detail
	}
	code := fmt.Sprintf("%d %s", status, http.StatusText(status))
	switch {
	case status == http.StatusUnauthorized:
		return withDetail("talkd refused the token: "+code) +
			" (set TALK_TOKEN to the token of one of the daemon's [[clients]])"
	case status == http.StatusForbidden:
		return withDetail("talkd refused the request: " + code)
	case status == http.StatusRequestEntityTooLarge:
		return withDetail("talkd refused the message as too large: " + code)
	case status == http.StatusTooManyRequests:
		return withDetail("talkd is rate limiting: " + code + "; try again later")
	case status == http.StatusNotFound:
		return withDetail("no MCP endpoint at "+endpoint+": "+code) + " (do --url and TALK_URL name a talkd?)"
	case status >= 500:
		return withDetail("talkd failed: " + code)
	case status >= 300:
		return withDetail("talkd refused the request: " + code)
	case len(bytes.TrimSpace(body)) == 0:
		return fmt.Sprintf("talkd sent no answer to the request (HTTP %d)", status)
	case detail != "":
		return "talkd answered without the request's id: " + detail
	}
	return fmt.Sprintf("talkd's answer is not a JSON-RPC response (HTTP %d)", status)
}

// bridgeDetail is the daemon's own message in an error body: a JSON-RPC error's message,
// the HTTP doors' {"error":{"message"}}, or the first line of a plain-text body.
func bridgeDetail(body []byte) string {
	var e struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(body, &e) == nil && len(e.Error) > 0 {
		var detail struct {
			Message string `json:"message"`
		}
		if json.Unmarshal(e.Error, &detail) == nil && detail.Message != "" {
			return detail.Message
		}
		var s string
		if json.Unmarshal(e.Error, &s) == nil {
			return s
		}
	}
	text := strings.TrimSpace(string(body))
	if json.Valid(body) {
		return "" // some other JSON: nothing a user could read from it
	}
	if i := strings.IndexByte(text, '\n'); i >= 0 {
		text = text[:i]
	}
	if len(text) > 200 {
		text = text[:200] + "…"
	}
	return strings.ToValidUTF8(text, "")
}

// forward posts one message to the daemon and returns its HTTP status and body.
func (b *bridge) forward(ctx context.Context, line []byte, msg bridgeMessage) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, b.endpoint, bytes.NewReader(bytes.TrimSpace(line)))
	if err != nil {
		return 0, nil, fmt.Errorf("building the request: %w", err)
	}
	h := req.Header
	h.Set("Content-Type", "application/json")
	h.Set("Accept", "application/json, text/event-stream")
	if b.token != "" {
		h.Set("Authorization", "Bearer "+b.token)
	}
	b.mu.Lock()
	agent, version := b.agent, b.version
	b.mu.Unlock()
	if msg.Method == "initialize" {
		agent = msg.Params.ClientInfo.Name
	}
	if agent = bridgeAgentValue(agent); agent != "" {
		h.Set("X-Talk-Agent", agent)
	}
	var metaVersion string
	if raw, ok := msg.Params.Meta["io.modelcontextprotocol/protocolVersion"]; ok {
		_ = json.Unmarshal(raw, &metaVersion)
	}
	switch {
	case metaVersion != "":
		// A 2026-era host: over stdio it sends no headers, so the bridge derives them
		// from the message, exactly as an HTTP client of that era would.
		h.Set("MCP-Protocol-Version", metaVersion)
		h.Set("Mcp-Method", bridgeHeaderValue(msg.Method))
		var name string
		switch msg.Method {
		case "tools/call", "prompts/get":
			_ = json.Unmarshal(msg.Params.Name, &name)
		case "resources/read":
			_ = json.Unmarshal(msg.Params.URI, &name)
		}
		if name != "" {
			h.Set("Mcp-Name", bridgeHeaderValue(name))
		}
	case msg.Method != "initialize" && version != "":
		h.Set("MCP-Protocol-Version", version)
	}
	resp, err := b.client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return 0, nil, fmt.Errorf("reading the daemon's answer: %w", err)
	}
	return resp.StatusCode, body, nil
}

// bridgeAgentValue makes a host's name fit a header: control characters dropped, UTF-8
// kept as is (the daemon reads the header verbatim as a label).
func bridgeAgentValue(name string) string {
	return strings.TrimSpace(strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return -1
		}
		return r
	}, name))
}

// bridgeHeaderValue encodes values a header cannot carry verbatim (non-ASCII, control
// characters, surrounding spaces) as =?base64?…?=, which the daemon decodes in the
// 2026-era Mcp-Method and Mcp-Name headers.
func bridgeHeaderValue(v string) string {
	for i := 0; i < len(v); i++ {
		if c := v[i]; c < 0x20 || c >= 0x7f {
			return "=?base64?" + base64.StdEncoding.EncodeToString([]byte(v)) + "?="
		}
	}
	if strings.TrimSpace(v) != v {
		return "=?base64?" + base64.StdEncoding.EncodeToString([]byte(v)) + "?="
	}
	return v
}

// unreachable answers when the daemon could not be asked: initialize (and ping) locally,
// so the host starts and shows the server; every other request a clear error.
func (b *bridge) unreachable(msg bridgeMessage, err error) {
	b.log.Error("talk mcp: talkd is not reachable", "endpoint", b.endpoint, "method", msg.Method, "err", err)
	if !msg.isRequest() {
		return
	}
	switch msg.Method {
	case "initialize":
		version := bridgeLatest2025
		if slices.Contains(bridgeRevisions2025, msg.Params.ProtocolVersion) {
			version = msg.Params.ProtocolVersion
		}
		b.mu.Lock()
		b.version = version
		b.mu.Unlock()
		result, _ := json.Marshal(map[string]any{
			"protocolVersion": version,
			"capabilities":    map[string]any{"tools": map[string]any{}},
			"serverInfo":      map[string]string{"name": "talkd", "version": "unreachable"},
			"instructions": "talkd is not reachable at " + b.endpoint + "; tool calls fail until the daemon runs " +
				"(start it with: talkd).",
		})
		b.writeResult(msg.ID, result)
	case "ping":
		b.writeResult(msg.ID, []byte("{}"))
	default:
		text := fmt.Sprintf("talkd is not reachable at %s (%v); start it with: talkd", b.endpoint, bridgeErrText(err))
		var ne net.Error
		var oe *net.OpError
		dialFailed := errors.As(err, &oe) && oe.Op == "dial"
		if !dialFailed && errors.As(err, &ne) && ne.Timeout() {
			text = fmt.Sprintf("talkd at %s gave no answer in time (%s); it may be overloaded or stuck", b.endpoint, b.client.Timeout)
		}
		b.writeError(msg.ID, bridgeUnreachable, text, nil)
	}
}

// bridgeErrText keeps the useful tail of a transport error.
func bridgeErrText(err error) string {
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return "no answer in time"
	}
	var oe *net.OpError
	if errors.As(err, &oe) {
		return oe.Err.Error()
	}
	return err.Error()
}

func (b *bridge) writeResult(id json.RawMessage, result []byte) {
	b.writeLine([]byte(`{"jsonrpc":"2.0","id":` + bridgeID(id) + `,"result":` + string(result) + `}`))
}

func (b *bridge) writeError(id json.RawMessage, code int, message string, data any) {
	e := map[string]any{"code": code, "message": message}
	if data != nil {
		e["data"] = data
	}
	enc, _ := json.Marshal(e)
	b.writeLine([]byte(`{"jsonrpc":"2.0","id":` + bridgeID(id) + `,"error":` + string(enc) + `}`))
}

func bridgeID(id json.RawMessage) string {
	if id == nil {
		return "null"
	}
	return string(id)
}

// writeLine writes one message as one line: compacted, so no newline inside can split it.
func (b *bridge) writeLine(msg []byte) {
	var buf bytes.Buffer
	if err := json.Compact(&buf, msg); err != nil {
		b.log.Error("talk mcp: dropping an answer that is not JSON", "err", err)
		return
	}
	buf.WriteByte('\n')
	b.outMu.Lock()
	defer b.outMu.Unlock()
	if _, err := b.out.Write(buf.Bytes()); err != nil {
		b.log.Error("talk mcp: writing stdout failed", "err", err)
	}
}

func mcpCommand() command {
	return command{
		name: "mcp", usage: "mcp [flags]", passthrough: true, summary: "serve MCP over stdio for hosts that launch a command (bridge to the daemon's /mcp)",
		detail: "An MCP host (coding assistant, desktop client) starts `talk mcp` and speaks JSON-RPC on\n" +
			"its stdin/stdout; talk forwards every message to the daemon's POST /mcp. The bridge's own\n" +
			"flags (e.g. --timeout, the longest wait for one answer, default 30s): talk mcp -h.",
		define: func(fs *flag.FlagSet, a *app) func(context.Context, []string) int {
			return func(ctx context.Context, args []string) int {
				c := a.client()
				return runMCP(ctx, args, a.stdin, a.stdout, a.stderr, c.base, c.token)
			}
		},
	}
}
