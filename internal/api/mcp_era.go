package api

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"talkd/internal/api/mcprev"
)

// Telling the protocol eras apart and the 2026 era's checks (shared/mcp/PROTOCOL.md).

// detectEra tells the eras apart: a 2025-era header decides for 2025, any other header
// for 2026; without a header, the _meta protocolVersion key (not _meta as such: 2025
// clients send _meta.progressToken) decides for 2026.
func detectEra(header string, meta map[string]json.RawMessage) (is2026 bool) {
	header = strings.TrimSpace(header)
	if header != "" {
		return !mcprev.Is2025(header)
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
	header, present := headerValue(r, headerProtocolVersion)
	if !present || header != version {
		return newRPCError(rpcHeaderMismatch, fmt.Sprintf("header mismatch: MCP-Protocol-Version %q must equal params._meta[%q] %q",
			header, metaVersion, version))
	}
	if version != mcprev.Stateless {
		return unsupportedVersion(version)
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
