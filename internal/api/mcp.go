package api

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"talkd/internal/api/mcprev"
)

// The MCP door: POST /mcp, one JSON-RPC message per request (or a batch, in the revisions
// that have them), no sessions, serving the 2025 era (initialize handshake, then
// independent requests) and the stateless 2026 era (per-request _meta and header checks)
// side by side. Which era a request belongs to is decided per request, from the
// MCP-Protocol-Version header and _meta, as shared/mcp/PROTOCOL.md describes (mcp_era.go).
// This file holds the door and the dispatch; mcp_methods.go the methods, mcp_tools.go the
// typed tool registration and result encoding, jsonrpc.go the JSON-RPC framing. The
// protocol revisions come from mcprev (shared with the bridge).

// headerProtocolVersion is the MCP-Protocol-Version header in the canonical form net/http
// keeps request headers under: looked up in any other spelling, every lookup would first
// allocate the canonical key.
const headerProtocolVersion = "Mcp-Protocol-Version"

// The _meta keys of the 2026 era.
const (
	metaVersion   = "io.modelcontextprotocol/protocolVersion"
	metaCaps      = "io.modelcontextprotocol/clientCapabilities"
	metaClient    = "io.modelcontextprotocol/clientInfo"
	metaServer    = "io.modelcontextprotocol/serverInfo"
	listTTLMillis = 60_000 // lists change only when the daemon is rewired, i.e. restarted
)

var (
	// removedIn2026 are methods the stateless era dropped; they answer 404 there.
	removedIn2026 = []string{"initialize", "ping", "logging/setLevel", "resources/subscribe", "resources/unsubscribe"}
	logLevels     = []string{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}
)

const instructions = "talkd speaks short announcements aloud for the user. Call the speak tool with one or two " +
	"plain sentences when a long task finishes, fails or needs the user's attention; keep it short, it is " +
	"spoken. The outcome says whether it was queued, muted, or discarded by quiet hours or the rate limit " +
	"(use now: true only for what must pass quiet hours)."

// mcpServer serves POST /mcp.
type mcpServer struct {
	s   *Server
	reg registry

	// Pre-encoded pieces of 2026-era results: the fields every result carries, and the
	// same with caching hints for list results (public) and resource reads (private).
	deco2026, decoList2026, decoRead2026 []byte
	discover                             []byte // the server/discover result (decorated at write time)
	capabilities2025                     json.RawMessage
	caps2026                             json.RawMessage
	instructions                         string
	serverInfo                           json.RawMessage

	// listedResources, when set (RegisterPlans), adds the resources a caller may read
	// beyond the fixed ones to resources/list: each plan, so that a host that lists
	// resources (Claude Code's @-mentions and its model's resource tools) finds them.
	listedResources func(ctx context.Context, caller Caller) []resourceEntry
}

func newMCPServer(s *Server) *mcpServer {
	m := &mcpServer{s: s}
	m.serverInfo, _ = json.Marshal(map[string]string{"name": "talkd", "version": s.version})
	meta := `"_meta":{"` + metaServer + `":` + string(m.serverInfo) + `}`
	m.deco2026 = []byte(`"resultType":"complete",` + meta)
	m.decoList2026 = []byte(`"resultType":"complete","ttlMs":` + strconv.Itoa(listTTLMillis) + `,"cacheScope":"public",` + meta)
	m.decoRead2026 = []byte(`"resultType":"complete","ttlMs":0,"cacheScope":"private",` + meta)
	m.capabilities2025 = json.RawMessage(`{"tools":{"listChanged":false},"resources":{"subscribe":false,"listChanged":false},` +
		`"prompts":{"listChanged":false},"completions":{},"logging":{}}`)
	caps2026 := json.RawMessage(`{"tools":{"listChanged":false},"resources":{"subscribe":false,"listChanged":false},` +
		`"prompts":{"listChanged":false},"completions":{}}`)
	m.caps2026 = caps2026
	m.setInstructions(instructions)
	s.mcp = m // the speak tool registers itself through the server
	m.registerSpeak()
	s.registerGuide()
	return m
}

// setInstructions sets the instructions of initialize and server/discover; the discover
// result is encoded here once, not per request.
func (m *mcpServer) setInstructions(text string) {
	m.instructions = text
	m.discover, _ = json.Marshal(map[string]any{
		"supportedVersions": mcprev.Supported(), "capabilities": m.caps2026, "instructions": text,
	})
}

// mcpCall is one request on its way through the door. It comes from callPool with the
// storage its answer is built in, and goes back there once the answer has been written
// or copied (release): a tools/call speak made three allocations less per request so.
type mcpCall struct {
	msg    rpcMessage
	env    mcpEnvelope
	caller Caller
	is2026 bool

	// head and scratch are this call's storage for its answer's head and for a result
	// built per call (a tool's result object). Nothing may keep them past release: a
	// result that outlives the call (a cached one) is never built in scratch.
	head, scratch []byte
}

var callPool = sync.Pool{New: func() any { return new(mcpCall) }}

// maxPooledAnswer bounds the storage a released call keeps: an inspect answer of MBs
// should not stay in the pool.
const maxPooledAnswer = 16 << 10

func newCall() *mcpCall { return callPool.Get().(*mcpCall) }

// release returns c to the pool; its answer must have been written or copied.
func (c *mcpCall) release() {
	head, scratch := c.head[:0], c.scratch[:0]
	if cap(head) > maxPooledAnswer {
		head = nil
	}
	if cap(scratch) > maxPooledAnswer {
		scratch = nil
	}
	*c = mcpCall{head: head, scratch: scratch}
	callPool.Put(c)
}

// mcpEnvelope is the part of params every request may carry, plus the arguments of
// tools/call, so the params object is split once for every method.
type mcpEnvelope struct {
	Meta      map[string]json.RawMessage `json:"_meta"`
	Name      json.RawMessage            `json:"name"`
	URI       json.RawMessage            `json:"uri"`
	Cursor    json.RawMessage            `json:"cursor"`
	Arguments json.RawMessage            `json:"arguments"`
}

// envelopeFields are the JSON names of mcpEnvelope's fields.
var envelopeFields = []string{"_meta", "name", "uri", "cursor", "arguments"}

// decode fills e from a params object (valid JSON: it is part of a validated body) the
// way json.Unmarshal would, without reflection for the usual plain keys. Keys encoding/json
// would match only case-insensitively, and a _meta that is not an object or null, take
// json.Unmarshal itself, so errors and matches stay the same.
func (e *mcpEnvelope) decode(params json.RawMessage) error {
	members := newObjectMembers(params)
	for {
		key, val, ok := members.next()
		if !ok {
			return nil
		}
		if !exactKey(key) || foldsToAny(key[1:len(key)-1], envelopeFields...) {
			*e = mcpEnvelope{}
			return json.Unmarshal(params, e)
		}
		switch string(key[1 : len(key)-1]) {
		case "_meta":
			if val[0] != '{' && val[0] != 'n' {
				*e = mcpEnvelope{}
				return json.Unmarshal(params, e)
			}
			// Into the same map, as encoding/json does with a repeated key.
			if err := json.Unmarshal(val, &e.Meta); err != nil {
				return err
			}
		case "name":
			e.Name = val
		case "uri":
			e.URI = val
		case "cursor":
			e.Cursor = val
		case "arguments":
			e.Arguments = val
		}
	}
}

// decoration says which 2026-era fields a method's result carries.
type decoration int

const (
	decoPlain decoration = iota
	decoList
	decoRead
)

type mcpMethod struct {
	handle     func(m *mcpServer, ctx context.Context, c *mcpCall) ([]byte, *rpcError)
	era2025    bool
	era2026    bool
	decoration decoration
}

var mcpMethods = map[string]mcpMethod{
	"initialize":               {handle: (*mcpServer).initialize, era2025: true},
	"ping":                     {handle: (*mcpServer).empty, era2025: true},
	"logging/setLevel":         {handle: (*mcpServer).setLevel, era2025: true},
	"server/discover":          {handle: (*mcpServer).serverDiscover, era2026: true, decoration: decoList},
	"tools/list":               {handle: (*mcpServer).toolsList, era2025: true, era2026: true, decoration: decoList},
	"tools/call":               {handle: (*mcpServer).toolsCall, era2025: true, era2026: true},
	"resources/list":           {handle: (*mcpServer).resourcesList, era2025: true, era2026: true, decoration: decoRead},
	"resources/templates/list": {handle: (*mcpServer).templatesList, era2025: true, era2026: true, decoration: decoList},
	"resources/read":           {handle: (*mcpServer).resourcesRead, era2025: true, era2026: true, decoration: decoRead},
	"prompts/list":             {handle: (*mcpServer).promptsList, era2025: true, era2026: true, decoration: decoList},
	"prompts/get":              {handle: (*mcpServer).promptsGet, era2025: true, era2026: true},
	"completion/complete":      {handle: (*mcpServer).complete, era2025: true, era2026: true},
}

// methodNames holds the name of every method talkd serves, so that decoding a message
// takes the name from here instead of allocating a copy of it per request.
var methodNames = func() map[string]string {
	names := make(map[string]string, len(mcpMethods))
	for name := range mcpMethods {
		names[name] = name
	}
	return names
}()

// methodName is the method named by raw (the bytes of a JSON string without escapes).
func methodName(raw []byte) string {
	if name, ok := methodNames[string(raw)]; ok {
		return name
	}
	return string(raw)
}

// handleMCP is POST /mcp, after admission: one JSON-RPC message, or (in the revisions
// that define them) a batch of them.
func (s *Server) handleMCP(w http.ResponseWriter, r *http.Request, a admitted) {
	m := s.mcp
	body := bytes.TrimSpace(a.body)
	if len(body) > 0 && body[0] == '[' {
		m.serveBatch(w, r, a.caller, body)
		return
	}
	c := newCall()
	defer c.release() // after the answer is written
	status, resp := m.serveMessage(r, a.caller, body, c)
	if resp.none() {
		w.WriteHeader(status)
		return
	}
	writeRPCParts(w, status, resp)
}

// serveBatch answers a JSON array of messages with the array of their answers (none for
// notifications; 202 and no body when nothing needs one). Batches exist in 2024-11-05 and
// 2025-03-26 (and in a request that names no revision, which counts as 2025-03-26);
// 2025-06-18 removed them, and the 2026 era has none.
func (m *mcpServer) serveBatch(w http.ResponseWriter, r *http.Request, caller Caller, body []byte) {
	version := strings.TrimSpace(r.Header.Get(headerProtocolVersion))
	if !mcprev.HasBatches(version) {
		m.refuseRPC(w, r, nil, newRPCError(rpcInvalidRequest, fmt.Sprintf(
			"batches are not part of protocol revision %s (only 2025-03-26 and 2024-11-05 have them): send one JSON-RPC message per request", version)).
			withStatus(http.StatusBadRequest))
		return
	}
	if !json.Valid(body) {
		m.refuseRPC(w, r, nil, newRPCError(rpcParseError, "parse error: the body is not valid JSON").withStatus(http.StatusBadRequest))
		return
	}
	elems := newObjectMembers(body) // the same scanner walks an array's elements
	out := []byte{'['}
	n := 0
	for {
		elem, ok := elems.nextElement()
		if !ok {
			break
		}
		n++
		c := newCall()
		if _, resp := m.serveMessage(r, caller, elem, c); !resp.none() {
			if len(out) > 1 {
				out = append(out, ',')
			}
			out = bytes.TrimSuffix(resp.appendTo(out), []byte("\n"))
		}
		c.release() // its answer is copied into out
	}
	switch {
	case n == 0:
		m.refuseRPC(w, r, nil, newRPCError(rpcInvalidRequest, "invalid request: the batch is empty").withStatus(http.StatusBadRequest))
	case len(out) == 1:
		w.WriteHeader(http.StatusAccepted) // only notifications and responses
	default:
		writeRPC(w, http.StatusOK, append(out, ']', '\n'))
	}
}

// refuseRPC sends a JSON-RPC error and logs it.
func (m *mcpServer) refuseRPC(w http.ResponseWriter, r *http.Request, id json.RawMessage, e *rpcError) {
	m.logRefusal(r, e)
	writeRPCError(w, id, e)
}

// logRefusal logs one line per JSON-RPC error answered (the HTTP status it travels with,
// 200 for a method's own refusal such as an unknown tool).
func (m *mcpServer) logRefusal(r *http.Request, e *rpcError) {
	status := e.status
	if status == 0 {
		status = http.StatusOK
	}
	m.s.log.Info("request refused", "door", "/mcp", "status", status, "code", e.Code,
		"origin", r.Header.Get("Origin"), "host", r.Host, "message", truncate(e.Message, 200))
}

// serveMessage answers one JSON-RPC message: the HTTP status and the encoded answer, or
// no answer for a notification or a client's response (202, no body). c is the call's
// state, fresh from newCall; the answer may live in its storage until c.release.
func (m *mcpServer) serveMessage(r *http.Request, caller Caller, body []byte, c *mcpCall) (int, rpcAnswer) {
	fail := func(id json.RawMessage, e *rpcError) (int, rpcAnswer) {
		m.logRefusal(r, e)
		status := e.status
		if status == 0 {
			status = http.StatusOK
		}
		return status, rpcAnswer{head: appendErrorResponse(nil, id, e)}
	}
	msg, derr := decodeRPC(body)
	if derr != nil {
		if derr.Code == rpcParseError || derr.Code == rpcInvalidRequest {
			derr.status = http.StatusBadRequest
		}
		return fail(msg.ID, derr)
	}
	if msg.Method == "" || msg.isNotification() {
		// Notifications and client responses need no answer; talkd keeps no state they
		// could change.
		return http.StatusAccepted, rpcAnswer{}
	}
	if !utf8.Valid(body) {
		// JSON text is UTF-8 (RFC 8259 §8.1); encoding/json would silently turn the bytes
		// into U+FFFD. Invalid bytes in a tool's arguments are the tool's to refuse, naming
		// the field; anywhere else the message cannot be read as sent.
		if path := invalidUTF8Path(body); msg.Method != "tools/call" || !strings.HasPrefix(path, "params.arguments.") {
			return fail(msg.ID, newRPCError(rpcParseError, fmt.Sprintf("parse error: %s holds bytes that are not valid UTF-8", orBody(path))).
				withStatus(http.StatusBadRequest))
		}
	}
	header := strings.TrimSpace(r.Header.Get(headerProtocolVersion))
	c.msg, c.caller = msg, caller
	if msg.Params != nil {
		if err := c.env.decode(msg.Params); err != nil {
			e := invalidParams("params: %v", err)
			if detectEra(header, nil) {
				e.status = http.StatusBadRequest // a 2026-era _meta that cannot be read fails check 1
			}
			return fail(msg.ID, e)
		}
	}
	if _, hasMetaVersion := c.env.Meta[metaVersion]; header != "" && !mcprev.Known(header) && !hasMetaVersion {
		// A revision talkd does not serve, on a request that is not a 2026-era one (which
		// check2026 answers in its documented order): say which revisions there are.
		return fail(msg.ID, unsupportedVersion(header).withStatus(http.StatusBadRequest))
	}
	c.is2026 = detectEra(header, c.env.Meta)
	if c.is2026 {
		if e := check2026(r, c); e != nil {
			return fail(msg.ID, e.withStatus(http.StatusBadRequest))
		}
		if c.caller.Agent == "" {
			c.caller.Agent = metaClientName(c.env.Meta)
		}
	}
	meth, ok := mcpMethods[msg.Method]
	if !ok || (c.is2026 && !meth.era2026) || (!c.is2026 && !meth.era2025) {
		e := newRPCError(rpcMethodNotFound, "method not found: "+strconv.Quote(msg.Method))
		if c.is2026 {
			if slices.Contains(removedIn2026, msg.Method) {
				e.Message = fmt.Sprintf("method %q does not exist in protocol revision %s", msg.Method, mcprev.Stateless)
			}
			e.status = http.StatusNotFound
		}
		return fail(msg.ID, e)
	}
	result, rerr := m.call(r.Context(), meth, c)
	if rerr != nil {
		return fail(msg.ID, rerr)
	}
	// The result is framed, not copied: it can be a cached inspect answer of MBs, shared
	// by every call that hits it.
	head := c.head[:0]
	if c.is2026 {
		head, result = appendResponseHead2026(head, msg.ID, m.decorationFor(meth.decoration), result)
	} else {
		head = appendResponseHead(head, msg.ID)
	}
	c.head = head
	if full, ok := withTail(result); ok {
		// The tail travels in the result's last write (endResult).
		return http.StatusOK, rpcAnswer{head: head, result: full}
	}
	return http.StatusOK, rpcAnswer{head: head, result: result, tail: responseTail}
}

// unsupportedVersion is the -32022 error naming the revisions talkd serves.
func unsupportedVersion(requested string) *rpcError {
	e := newRPCError(rpcUnsupportedProtocol, fmt.Sprintf("unsupported protocol version %q; talkd supports %s",
		requested, strings.Join(mcprev.Supported(), ", ")))
	e.Data = map[string]any{"supported": mcprev.Supported(), "requested": requested}
	return e
}

func orBody(path string) string {
	if path == "" {
		return "the body"
	}
	return "field " + strconv.Quote(path)
}

// call runs a method, turning a panic into an internal error instead of a dropped
// connection.
func (m *mcpServer) call(ctx context.Context, meth mcpMethod, c *mcpCall) (result []byte, rerr *rpcError) {
	defer func() {
		if p := recover(); p != nil {
			m.s.log.Error("mcp method panicked", "method", c.msg.Method, "panic", p)
			result, rerr = nil, newRPCError(rpcInternalError, "internal error while handling "+c.msg.Method)
		}
	}()
	return meth.handle(m, ctx, c)
}

func (m *mcpServer) decorationFor(d decoration) []byte {
	switch d {
	case decoList:
		return m.decoList2026
	case decoRead:
		return m.decoRead2026
	}
	return m.deco2026
}

// appendResponseHead2026 frames a response whose result object starts with the 2026-era
// fields (deco), spliced in front of the encoded result without re-encoding it: the head
// up to the result's own members, and the rest of the result (a sub-slice, not a copy)
// that follows it before responseTail.
func appendResponseHead2026(buf []byte, id json.RawMessage, deco, result []byte) (head, rest []byte) {
	buf = append(buf, `{"jsonrpc":"2.0","id":`...)
	buf = appendID(buf, id)
	buf = append(buf, `,"result":{`...)
	buf = append(buf, deco...)
	if inner := bytes.TrimSpace(result[1:]); len(inner) > 1 { // more than the closing brace
		return append(buf, ','), inner
	}
	return append(buf, '}'), nil
}
