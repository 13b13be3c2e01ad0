package api

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
)

// The MCP door: POST /mcp, one JSON-RPC message per request, no sessions, serving the
// 2025 era (initialize handshake, then independent requests) and the stateless 2026 era
// (per-request _meta and header checks) side by side. Which era a request belongs to is
// decided per request, from the MCP-Protocol-Version header and _meta, as
// shared/mcp/PROTOCOL.md describes.

// Protocol revisions talkd serves.
const (
	rev2026       = "2026-07-28"
	latest2025    = "2025-11-25"
	metaVersion   = "io.modelcontextprotocol/protocolVersion"
	metaCaps      = "io.modelcontextprotocol/clientCapabilities"
	metaClient    = "io.modelcontextprotocol/clientInfo"
	metaServer    = "io.modelcontextprotocol/serverInfo"
	listTTLMillis = 60_000 // lists change only when the daemon is rewired, i.e. restarted
)

var (
	revisions2025 = []string{"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}
	// supportedVersions is what server/discover and the unsupported-version error offer.
	supportedVersions = append([]string{rev2026}, revisions2025...)
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
	m.registerSpeak()
	return m
}

// setInstructions sets the instructions of initialize and server/discover; the discover
// result is encoded here once, not per request.
func (m *mcpServer) setInstructions(text string) {
	m.instructions = text
	m.discover, _ = json.Marshal(map[string]any{
		"supportedVersions": supportedVersions, "capabilities": m.caps2026, "instructions": text,
	})
}

// mcpCall is one request on its way through the door.
type mcpCall struct {
	msg    rpcMessage
	env    mcpEnvelope
	caller Caller
	is2026 bool
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
	"resources/list":           {handle: (*mcpServer).resourcesList, era2025: true, era2026: true, decoration: decoList},
	"resources/templates/list": {handle: (*mcpServer).templatesList, era2025: true, era2026: true, decoration: decoList},
	"resources/read":           {handle: (*mcpServer).resourcesRead, era2025: true, era2026: true, decoration: decoRead},
	"prompts/list":             {handle: (*mcpServer).promptsList, era2025: true, era2026: true, decoration: decoList},
	"prompts/get":              {handle: (*mcpServer).promptsGet, era2025: true, era2026: true},
	"completion/complete":      {handle: (*mcpServer).complete, era2025: true, era2026: true},
}

// handleMCP is POST /mcp. The router has already answered other methods with 405 and
// refused foreign Host headers.
func (s *Server) handleMCP(w http.ResponseWriter, r *http.Request) {
	m := s.mcp
	if origin := r.Header.Get("Origin"); origin != "" && !s.originListed(origin) && !s.ownOrigin(origin, r.Host) {
		writeRPCError(w, nil, newRPCError(rpcInvalidRequest,
			"origin "+strconv.Quote(origin)+" may not use /mcp; list it in server.allowed_origins").withStatus(http.StatusForbidden))
		return
	}
	caller, aerr := s.auth.identify(r)
	if aerr != nil {
		w.Header().Set("WWW-Authenticate", `Bearer realm="talkd"`)
		writeRPCError(w, nil, newRPCError(rpcInvalidRequest, aerr.Message).withStatus(aerr.Status))
		return
	}
	body, berr := s.readBody(w, r)
	if berr != nil {
		writeRPCError(w, nil, newRPCError(rpcInvalidRequest, berr.Message).withStatus(berr.Status))
		return
	}
	msg, derr := decodeRPC(body)
	if derr != nil {
		if derr.Code == rpcParseError || derr.Code == rpcInvalidRequest {
			derr.status = http.StatusBadRequest
		}
		writeRPCError(w, msg.ID, derr)
		return
	}
	if msg.Method == "" || msg.isNotification() {
		// Notifications and client responses need no answer; talkd keeps no state they
		// could change.
		w.WriteHeader(http.StatusAccepted)
		return
	}
	c := &mcpCall{msg: msg, caller: caller}
	if msg.Params != nil {
		if err := c.env.decode(msg.Params); err != nil {
			e := invalidParams("params: %v", err)
			if detectEra(r.Header.Get("MCP-Protocol-Version"), nil) {
				e.status = http.StatusBadRequest // a 2026-era _meta that cannot be read fails check 1
			}
			writeRPCError(w, msg.ID, e)
			return
		}
	}
	c.is2026 = detectEra(r.Header.Get("MCP-Protocol-Version"), c.env.Meta)
	if c.is2026 {
		if e := check2026(r, c); e != nil {
			writeRPCError(w, msg.ID, e.withStatus(http.StatusBadRequest))
			return
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
				e.Message = fmt.Sprintf("method %q does not exist in protocol revision %s", msg.Method, rev2026)
			}
			e.status = http.StatusNotFound
		}
		writeRPCError(w, msg.ID, e)
		return
	}
	result, rerr := m.call(r.Context(), meth, c)
	if rerr != nil {
		writeRPCError(w, msg.ID, rerr)
		return
	}
	buf := make([]byte, 0, len(result)+len(msg.ID)+len(m.decoList2026)+40)
	if c.is2026 {
		buf = appendResponse2026(buf, msg.ID, m.decorationFor(meth.decoration), result)
	} else {
		buf = appendResponse(buf, msg.ID, result)
	}
	writeRPC(w, http.StatusOK, buf)
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

// appendResponse2026 writes a response whose result object starts with the 2026-era
// fields (deco), spliced in front of the encoded result without re-encoding it.
func appendResponse2026(buf []byte, id json.RawMessage, deco, result []byte) []byte {
	buf = append(buf, `{"jsonrpc":"2.0","id":`...)
	buf = appendID(buf, id)
	buf = append(buf, `,"result":{`...)
	buf = append(buf, deco...)
	if inner := bytes.TrimSpace(result[1:]); len(inner) > 1 { // more than the closing brace
		buf = append(buf, ',')
		buf = append(buf, inner...)
	} else {
		buf = append(buf, '}')
	}
	return append(buf, "}\n"...)
}

// detectEra tells the eras apart: a 2025-era header decides for 2025, any other header
// for 2026; without a header, the _meta protocolVersion key (not _meta as such: 2025
// clients send _meta.progressToken) decides for 2026.
func detectEra(header string, meta map[string]json.RawMessage) (is2026 bool) {
	header = strings.TrimSpace(header)
	if header != "" {
		return !slices.Contains(revisions2025, header)
	}
	_, ok := meta[metaVersion]
	return ok
}

// check2026 runs the 2026-era checks in the documented order: _meta fields, header
// against _meta, supported revision, Mcp-Method and Mcp-Name headers.
func check2026(r *http.Request, c *mcpCall) *rpcError {
	var version string
	raw, ok := c.env.Meta[metaVersion]
	if !ok || json.Unmarshal(raw, &version) != nil || version == "" {
		return invalidParams(`params._meta must carry %q (a string)`, metaVersion)
	}
	if caps, ok := c.env.Meta[metaCaps]; !ok || len(caps) == 0 || caps[0] != '{' {
		return invalidParams(`params._meta must carry %q (an object)`, metaCaps)
	}
	header, present := headerValue(r, "MCP-Protocol-Version")
	if !present || header != version {
		return newRPCError(rpcHeaderMismatch, fmt.Sprintf("header mismatch: MCP-Protocol-Version %q must equal params._meta[%q] %q",
			header, metaVersion, version))
	}
	if version != rev2026 {
		e := newRPCError(rpcUnsupportedProtocol, fmt.Sprintf("unsupported protocol version %q", version))
		e.Data = map[string]any{"supported": supportedVersions, "requested": version}
		return e
	}
	if h, present := headerValue(r, "Mcp-Method"); !present || h != c.msg.Method {
		return newRPCError(rpcHeaderMismatch, fmt.Sprintf("header mismatch: Mcp-Method %q must equal the method %q", h, c.msg.Method))
	}
	var field string
	var want json.RawMessage
	switch c.msg.Method {
	case "tools/call", "prompts/get":
		field, want = "params.name", c.env.Name
	case "resources/read":
		field, want = "params.uri", c.env.URI
	default:
		return nil
	}
	var body string
	hasBody := want != nil && json.Unmarshal(want, &body) == nil
	h, present := headerValue(r, "Mcp-Name")
	if present != hasBody || h != body {
		return newRPCError(rpcHeaderMismatch, fmt.Sprintf("header mismatch: Mcp-Name %q must equal %s %q", h, field, body))
	}
	return nil
}

// headerValue returns a header with surrounding whitespace trimmed and an
// =?base64?…?= value decoded. An undecodable value reads as absent-and-wrong.
func headerValue(r *http.Request, name string) (string, bool) {
	vals := r.Header.Values(name)
	if len(vals) == 0 {
		return "", false
	}
	v := strings.TrimSpace(vals[0])
	if inner, ok := strings.CutPrefix(v, "=?base64?"); ok {
		if inner, ok = strings.CutSuffix(inner, "?="); ok {
			dec, err := base64.StdEncoding.DecodeString(inner)
			if err != nil {
				return "\x00invalid base64", true
			}
			return string(dec), true
		}
	}
	return v, true
}

// metaClientName is the 2026-era clientInfo.name, the agent label of the caller.
func metaClientName(meta map[string]json.RawMessage) string {
	var ci struct {
		Name string `json:"name"`
	}
	if raw, ok := meta[metaClient]; ok && json.Unmarshal(raw, &ci) == nil {
		return cleanAgent(ci.Name)
	}
	return ""
}

func invalidParams(format string, args ...any) *rpcError {
	return newRPCError(rpcInvalidParams, "invalid params: "+fmt.Sprintf(format, args...))
}

// decodeParams decodes the request params into v (an absent params object decodes as {}).
func decodeParams(c *mcpCall, v any) *rpcError {
	if c.msg.Params == nil {
		return nil
	}
	if err := json.Unmarshal(c.msg.Params, v); err != nil {
		return invalidParams("%v", err)
	}
	return nil
}

// checkCursor refuses any cursor: talkd's lists fit one page and never hand one out.
func checkCursor(c *mcpCall) *rpcError {
	cur := c.env.Cursor
	if cur == nil || bytes.Equal(cur, jsonNull) || bytes.Equal(cur, []byte(`""`)) {
		return nil
	}
	return invalidParams("unknown cursor %s: talkd's lists have a single page", cur)
}

// --- methods ---

func (m *mcpServer) initialize(_ context.Context, c *mcpCall) ([]byte, *rpcError) {
	var p struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	if e := decodeParams(c, &p); e != nil {
		return nil, e
	}
	version := latest2025
	if slices.Contains(revisions2025, p.ProtocolVersion) {
		version = p.ProtocolVersion
	}
	out, err := json.Marshal(map[string]any{
		"protocolVersion": version,
		"capabilities":    m.capabilities2025,
		"serverInfo":      m.serverInfo,
		"instructions":    m.instructions,
	})
	if err != nil {
		return nil, newRPCError(rpcInternalError, "encoding the initialize result failed")
	}
	return out, nil
}

var emptyObject = []byte("{}")

func (m *mcpServer) empty(context.Context, *mcpCall) ([]byte, *rpcError) { return emptyObject, nil }

func (m *mcpServer) setLevel(_ context.Context, c *mcpCall) ([]byte, *rpcError) {
	var p struct {
		Level string `json:"level"`
	}
	if e := decodeParams(c, &p); e != nil {
		return nil, e
	}
	if !slices.Contains(logLevels, p.Level) {
		return nil, invalidParams("level must be one of %s, not %q", strings.Join(logLevels, ", "), p.Level)
	}
	// talkd sends no log notifications (there is no stream to carry them), so the level
	// has nothing to filter.
	return emptyObject, nil
}

func (m *mcpServer) serverDiscover(context.Context, *mcpCall) ([]byte, *rpcError) {
	return m.discover, nil
}

// listResult serves one of the pre-encoded lists.
func (m *mcpServer) listResult(c *mcpCall, pick func(*encodedLists) []byte) ([]byte, *rpcError) {
	if e := checkCursor(c); e != nil {
		return nil, e
	}
	l, err := m.reg.encoded()
	if err != nil {
		m.s.log.Error("encoding an MCP list failed", "err", err)
		return nil, newRPCError(rpcInternalError, "the list could not be encoded")
	}
	return pick(l), nil
}

func (m *mcpServer) toolsList(_ context.Context, c *mcpCall) ([]byte, *rpcError) {
	return m.listResult(c, func(l *encodedLists) []byte { return l.tools })
}

func (m *mcpServer) resourcesList(_ context.Context, c *mcpCall) ([]byte, *rpcError) {
	return m.listResult(c, func(l *encodedLists) []byte { return l.resources })
}

func (m *mcpServer) templatesList(_ context.Context, c *mcpCall) ([]byte, *rpcError) {
	return m.listResult(c, func(l *encodedLists) []byte { return l.templates })
}

func (m *mcpServer) promptsList(_ context.Context, c *mcpCall) ([]byte, *rpcError) {
	return m.listResult(c, func(l *encodedLists) []byte { return l.prompts })
}

var emptyArgs = json.RawMessage(`{}`)

func (m *mcpServer) toolsCall(ctx context.Context, c *mcpCall) ([]byte, *rpcError) {
	var p struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}
	if name, ok := plainString(c.env.Name); ok {
		// The envelope already holds both fields, split from the same params.
		p.Name, p.Arguments = string(name), c.env.Arguments
	} else if e := decodeParams(c, &p); e != nil {
		return nil, e
	}
	if p.Name == "" {
		return nil, invalidParams("tools/call needs params.name")
	}
	t, ok := m.reg.tool(p.Name)
	if !ok {
		return nil, invalidParams("unknown tool %q", p.Name)
	}
	args := p.Arguments
	switch {
	case args == nil || bytes.Equal(args, jsonNull):
		args = emptyArgs
	case args[0] != '{':
		return nil, invalidParams("params.arguments must be an object")
	}
	if t.Heavy {
		release, err := m.s.acquireHeavy(ctx)
		if err != nil {
			return nil, m.busyError(p.Name, err)
		}
		defer release()
	}
	res := t.Call(ctx, c.caller, args)
	if res.Content == nil {
		res.Content = []Content{}
	}
	out, err := encodeToolResult(res)
	if err != nil {
		m.s.log.Error("encoding a tool result failed", "tool", p.Name, "err", err)
		return nil, newRPCError(rpcInternalError, "the result of tool "+strconv.Quote(p.Name)+" could not be encoded")
	}
	return out, nil
}

func (m *mcpServer) resourcesRead(ctx context.Context, c *mcpCall) ([]byte, *rpcError) {
	var p struct {
		URI string `json:"uri"`
	}
	if e := decodeParams(c, &p); e != nil {
		return nil, e
	}
	if p.URI == "" {
		return nil, invalidParams("resources/read needs params.uri")
	}
	notFound := func() *rpcError {
		code := rpcResourceNotFound
		if c.is2026 {
			code = rpcInvalidParams
		}
		e := newRPCError(code, "resource not found: "+p.URI)
		e.Data = map[string]string{"uri": p.URI}
		return e
	}
	read, ok := m.reg.resolve(p.URI)
	if !ok {
		return nil, notFound()
	}
	contents, err := read(ctx, c.caller)
	if err != nil {
		if errors.Is(err, ErrResourceNotFound) {
			return nil, notFound()
		}
		return nil, m.operationError("resources/read", err)
	}
	if len(contents) == 0 {
		return nil, notFound()
	}
	out, merr := json.Marshal(map[string]any{"contents": contents})
	if merr != nil {
		return nil, newRPCError(rpcInternalError, "the resource could not be encoded")
	}
	return out, nil
}

func (m *mcpServer) promptsGet(ctx context.Context, c *mcpCall) ([]byte, *rpcError) {
	var p struct {
		Name      string            `json:"name"`
		Arguments map[string]string `json:"arguments"`
	}
	if e := decodeParams(c, &p); e != nil {
		return nil, e
	}
	pr, ok := m.reg.prompt(p.Name)
	if !ok {
		return nil, invalidParams("unknown prompt %q", p.Name)
	}
	for _, a := range pr.Arguments {
		if _, has := p.Arguments[a.Name]; a.Required && !has {
			return nil, invalidParams("prompt %q needs argument %q", p.Name, a.Name)
		}
	}
	for name := range p.Arguments {
		if !slices.ContainsFunc(pr.Arguments, func(a PromptArgument) bool { return a.Name == name }) {
			return nil, invalidParams("prompt %q has no argument %q", p.Name, name)
		}
	}
	if p.Arguments == nil {
		p.Arguments = map[string]string{}
	}
	res, err := pr.Get(ctx, c.caller, p.Arguments)
	if err != nil {
		return nil, m.operationError("prompts/get", err)
	}
	if res.Messages == nil {
		res.Messages = []PromptMessage{}
	}
	out, merr := json.Marshal(res)
	if merr != nil {
		return nil, newRPCError(rpcInternalError, "the prompt could not be encoded")
	}
	return out, nil
}

// jsonAppender is structured content that encodes itself (as json.Marshal would) onto a
// buffer; the speak tool's result does, as it is the most frequent answer.
type jsonAppender interface {
	appendJSON(dst []byte) ([]byte, error)
}

// encodeToolResult encodes a tool result as json.Marshal would. Structured content that is
// already JSON (the plan tools' inspect view, up to hundreds of KB) is spliced in as it
// is: encoding/json would scan and compact it again on every answer. Text content and
// self-encoding structured content are written without reflection.
func encodeToolResult(res ToolResult) ([]byte, error) {
	var raw json.RawMessage
	var app jsonAppender
	switch v := res.StructuredContent.(type) {
	case nil:
	case json.RawMessage:
		if len(v) == 0 {
			return json.Marshal(res)
		}
		raw = v
	case jsonAppender:
		app = v
	default:
		return json.Marshal(res)
	}
	size := len(raw) + 96
	if app != nil {
		size += 256 // a speak result: status, id, position and a one-line message
	}
	for _, c := range res.Content {
		size += len(c.Type) + len(c.Text) + 24
	}
	out := make([]byte, 0, size)
	out = append(out, `{"content":`...)
	if res.Content == nil {
		out = append(out, "null"...)
	} else {
		out = append(out, '[')
		for i, c := range res.Content {
			if i > 0 {
				out = append(out, ',')
			}
			out = append(out, `{"type":`...)
			out = appendJSONString(out, c.Type)
			out = append(out, `,"text":`...)
			out = appendJSONString(out, c.Text)
			out = append(out, '}')
		}
		out = append(out, ']')
	}
	switch {
	case raw != nil:
		out = append(out, `,"structuredContent":`...)
		out = append(out, raw...)
	case app != nil:
		out = append(out, `,"structuredContent":`...)
		var err error
		if out, err = app.appendJSON(out); err != nil {
			return nil, err
		}
	}
	if res.IsError {
		out = append(out, `,"isError":true`...)
	}
	return append(out, '}'), nil
}

var emptyCompletion = []byte(`{"completion":{"values":[]}}`)

func (m *mcpServer) complete(_ context.Context, c *mcpCall) ([]byte, *rpcError) {
	var p struct {
		Ref *struct {
			Type string `json:"type"`
		} `json:"ref"`
		Argument *struct {
			Name string `json:"name"`
		} `json:"argument"`
	}
	if e := decodeParams(c, &p); e != nil {
		return nil, e
	}
	if p.Ref == nil || (p.Ref.Type != "ref/prompt" && p.Ref.Type != "ref/resource") {
		return nil, invalidParams(`completion/complete needs params.ref of type "ref/prompt" or "ref/resource"`)
	}
	if p.Argument == nil || p.Argument.Name == "" {
		return nil, invalidParams("completion/complete needs params.argument.name")
	}
	// No prompt or template argument of talkd has a closed set of values worth offering.
	return emptyCompletion, nil
}

// rpcServerBusy is the implementation-defined JSON-RPC error (-32000…-32099 are reserved
// for servers) of a heavy tool call that waited longer than its bound for its turn.
const rpcServerBusy = -32000

// busyError answers a heavy tool call that could not start: busy after the wait bound (a
// retry later will pass), or the request's own end (the client gave up).
func (m *mcpServer) busyError(tool string, err error) *rpcError {
	if !errors.Is(err, errHeavyBusy) {
		return newRPCError(rpcInternalError, "tool "+strconv.Quote(tool)+" did not start: "+err.Error())
	}
	e := newRPCError(rpcServerBusy, fmt.Sprintf("busy: %d plan tool calls are running and this call of %q waited %s for its turn; retry in a few seconds",
		cap(m.s.heavy), tool, m.s.heavyWait))
	e.Data = map[string]any{"retry_after_ms": 5000}
	return e
}

// operationError maps a failed resource read or prompt: a refusal the caller can fix is
// invalid params, anything else an internal error (also logged).
func (m *mcpServer) operationError(method string, err error) *rpcError {
	var e *Error
	if errors.As(err, &e) && e.Status >= 400 && e.Status < 500 {
		return newRPCError(rpcInvalidParams, e.Message)
	}
	m.s.log.Error("mcp operation failed", "method", method, "err", err)
	return newRPCError(rpcInternalError, method+" failed: "+err.Error())
}
