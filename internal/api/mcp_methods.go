package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"talkd/internal/api/mcprev"
)

// The methods of the MCP door, each answering its encoded result or a JSON-RPC error.

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

func (m *mcpServer) initialize(_ context.Context, c *mcpCall) ([]byte, *rpcError) {
	var p struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	if e := decodeParams(c, &p); e != nil {
		return nil, e
	}
	version := mcprev.Latest2025
	if mcprev.Is2025(p.ProtocolVersion) {
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

// resourcesPage bounds the resources one resources/list answer names: a root may hold
// thousands of plans, and a host hands its model the whole answer.
const resourcesPage = 50

// resourceCursorPrefix starts the cursor of resources/list's next page (its offset).
const resourceCursorPrefix = "resources:"

// resourcesList names the fixed resources and, with plans, each plan the caller may read,
// in pages: per caller, so its 2026-era caching hint is private (decoRead).
func (m *mcpServer) resourcesList(ctx context.Context, c *mcpCall) ([]byte, *rpcError) {
	if m.listedResources == nil {
		return m.listResult(c, func(l *encodedLists) []byte { return l.resources })
	}
	offset := 0
	if cur := c.env.Cursor; cur != nil && !bytes.Equal(cur, jsonNull) && !bytes.Equal(cur, []byte(`""`)) {
		var s string
		n, err := 0, json.Unmarshal(cur, &s)
		if err == nil {
			n, err = strconv.Atoi(strings.TrimPrefix(s, resourceCursorPrefix))
		}
		if err != nil || !strings.HasPrefix(s, resourceCursorPrefix) || n <= 0 {
			return nil, invalidParams("unknown cursor %s: pass the nextCursor of the page before", cur)
		}
		offset = n
	}
	all := append(m.reg.resourceEntries(), m.listedResources(ctx, c.caller)...)
	offset = min(offset, len(all))
	page := map[string]any{"resources": all[offset:min(offset+resourcesPage, len(all))]}
	if offset+resourcesPage < len(all) {
		page["nextCursor"] = resourceCursorPrefix + strconv.Itoa(offset+resourcesPage)
	}
	out, err := json.Marshal(page)
	if err != nil {
		return nil, newRPCError(rpcInternalError, "the resource list could not be encoded")
	}
	return out, nil
}

func (m *mcpServer) templatesList(_ context.Context, c *mcpCall) ([]byte, *rpcError) {
	return m.listResult(c, func(l *encodedLists) []byte { return l.templates })
}

func (m *mcpServer) promptsList(_ context.Context, c *mcpCall) ([]byte, *rpcError) {
	return m.listResult(c, func(l *encodedLists) []byte { return l.prompts })
}

var emptyArgs = json.RawMessage(`{}`)

func (m *mcpServer) toolsCall(ctx context.Context, c *mcpCall) ([]byte, *rpcError) {
	var t tool
	var args json.RawMessage
	if name, ok := plainString(c.env.Name); ok && len(name) > 0 {
		// The envelope already holds both fields, split from the same params; the name
		// is looked up without a copy of its bytes.
		if t, ok = m.reg.tool(string(name)); !ok {
			return nil, invalidParams("unknown tool %q", string(name))
		}
		args = c.env.Arguments
	} else {
		var p struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		}
		if e := decodeParams(c, &p); e != nil {
			return nil, e
		}
		if p.Name == "" {
			return nil, invalidParams("tools/call needs params.name")
		}
		if t, ok = m.reg.tool(p.Name); !ok {
			return nil, invalidParams("unknown tool %q", p.Name)
		}
		args = p.Arguments
	}
	switch {
	case args == nil || bytes.Equal(args, jsonNull):
		args = emptyArgs
	case args[0] != '{':
		return nil, invalidParams("params.arguments must be an object")
	}
	if t.Heavy {
		release, err := m.s.acquireHeavy(ctx)
		if err != nil {
			return nil, m.busyError(t.Name, err)
		}
		defer release()
	}
	out, built, err := encodeToolResult(c.scratch[:0], t.call(ctx, c.caller, args, c.scratch[:0]))
	if built {
		c.scratch = out // the call's storage until it is released (a shared result is not)
	}
	if err != nil {
		m.s.log.Error("encoding a tool result failed", "tool", t.Name, "err", err)
		return nil, newRPCError(rpcInternalError, "the result of tool "+strconv.Quote(t.Name)+" could not be encoded")
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
