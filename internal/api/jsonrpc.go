package api

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
)

// This file is the JSON-RPC 2.0 subset the MCP door needs: one message per HTTP body (a
// batch is split by the door, mcp.go, and each element decoded here), request ids kept as raw JSON so that any number or string round-trips byte
// for byte, and responses assembled from pre-encoded result bytes.

// JSON-RPC error codes: the standard ones and the MCP additions.
const (
	rpcParseError          = -32700
	rpcInvalidRequest      = -32600
	rpcMethodNotFound      = -32601
	rpcInvalidParams       = -32602
	rpcInternalError       = -32603
	rpcResourceNotFound    = -32002 // 2025 era only; the 2026 era uses -32602
	rpcHeaderMismatch      = -32020
	rpcUnsupportedProtocol = -32022 // (-32021, a missing client capability, never arises: no talkd feature needs one)
)

// rpcError is a JSON-RPC error object plus the HTTP status it travels with.
type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data,omitempty"`

	status int // HTTP status; 0 means 200
}

func newRPCError(code int, msg string) *rpcError { return &rpcError{Code: code, Message: msg} }

// withStatus sets the HTTP status the error travels with.
func (e *rpcError) withStatus(status int) *rpcError {
	e.status = status
	return e
}

// rpcMessage is one decoded JSON-RPC message.
type rpcMessage struct {
	// ID is the request id as raw JSON (a string or a number), nil for a notification.
	ID json.RawMessage
	// Method is empty for a response sent by the client.
	Method string
	// Params is the raw params object, nil when absent or null.
	Params json.RawMessage
}

// isNotification reports whether no answer may be sent.
func (m *rpcMessage) isNotification() bool { return m.ID == nil }

var (
	jsonNull     = []byte("null")
	jsonVersion2 = []byte(`"2.0"`)
)

// decodeRPC decodes exactly one JSON-RPC message. On failure it returns the id as far as it
// could be read (nil when unknown), so the error can still echo it. The body is scanned
// once by json.Valid and once to split its members; params stay raw for the method.
func decodeRPC(body []byte) (rpcMessage, *rpcError) {
	var msg rpcMessage
	body = bytes.TrimSpace(body)
	if !json.Valid(body) {
		return msg, newRPCError(rpcParseError, "parse error: the body is not valid JSON")
	}
	switch {
	case body[0] == '[':
		return msg, newRPCError(rpcInvalidRequest, "batches are not supported: send one JSON-RPC message per request")
	case body[0] != '{':
		return msg, newRPCError(rpcInvalidRequest, "invalid request: the body must be a JSON-RPC object")
	}
	// Members as a map decode would keep them: keys unescaped, the last duplicate wins.
	var id, version, method, params json.RawMessage
	var hasResult, hasError bool
	members := newObjectMembers(body)
	for {
		rawKey, val, ok := members.next()
		if !ok {
			break
		}
		key := rawKey[1 : len(rawKey)-1]
		if !exactKey(rawKey) {
			key = []byte(keyName(rawKey))
		}
		switch string(key) {
		case "id":
			id = val
		case "jsonrpc":
			version = val
		case "method":
			method = val
		case "params":
			params = val
		case "result":
			hasResult = true
		case "error":
			hasError = true
		}
	}
	if id != nil && !bytes.Equal(id, jsonNull) {
		if !validID(id) {
			return msg, newRPCError(rpcInvalidRequest, "invalid request: id must be a string or a number")
		}
		msg.ID = id
	}
	if version == nil || !bytes.Equal(version, jsonVersion2) {
		return msg, newRPCError(rpcInvalidRequest, `invalid request: "jsonrpc" must be "2.0"`)
	}
	if method == nil {
		if hasResult || hasError {
			return msg, nil // a response from the client; talkd never asks, so it is dropped
		}
		return msg, newRPCError(rpcInvalidRequest, `invalid request: "method" is missing`)
	}
	if s, ok := plainString(method); ok {
		msg.Method = methodName(s)
	} else {
		// Into a variable of its own: &msg.Method would move the whole message to the heap
		// on every request, not only on this rare one.
		var name string
		if json.Unmarshal(method, &name) == nil {
			msg.Method = name
		}
	}
	if msg.Method == "" {
		return msg, newRPCError(rpcInvalidRequest, `invalid request: "method" must be a non-empty string`)
	}
	if params != nil && !bytes.Equal(params, jsonNull) {
		if params[0] != '{' {
			return msg, newRPCError(rpcInvalidParams, `invalid params: "params" must be an object`)
		}
		msg.Params = params
	}
	return msg, nil
}

// validID accepts the id types JSON-RPC allows besides null: strings and numbers.
func validID(raw json.RawMessage) bool {
	if len(raw) == 0 {
		return false
	}
	c := raw[0]
	return c == '"' || c == '-' || (c >= '0' && c <= '9')
}

// appendResponseHead is a response up to its result, {"jsonrpc":"2.0","id":…,"result":,
// which the encoded result and responseTail follow (rpcAnswer).
func appendResponseHead(buf []byte, id json.RawMessage) []byte {
	buf = append(buf, `{"jsonrpc":"2.0","id":`...)
	buf = appendID(buf, id)
	return append(buf, `,"result":`...)
}

// responseTail ends a response after its result (read only).
var responseTail = []byte("}\n")

// endResult returns an encoded result with responseTail stored right after it, in the
// spare capacity of its array (appending once if there is none), for withTail to find.
// Only a result's encoder calls it, before the result is shared: a large answer whose tail
// is a write of its own goes out as a 2-byte write(2) of its own too (net/http writes a
// large part straight to the socket and flushes what follows when the handler returns),
// so a 16 KB tools/list answer took three write(2) calls where two carry the same bytes.
func endResult(result []byte) []byte {
	n := len(result)
	return append(result, responseTail...)[:n]
}

// withTail returns result and the responseTail stored after it by endResult, as one
// slice; false when the bytes after result are not the tail (a result encoded elsewhere,
// or a sub-slice that ends before its array's content does). Reading the spare capacity is
// safe: an encoded result is never written to once it has been returned.
func withTail(result []byte) ([]byte, bool) {
	n := len(result)
	if cap(result)-n < len(responseTail) {
		return result, false
	}
	if full := result[:n+len(responseTail)]; bytes.Equal(full[n:], responseTail) {
		return full, true
	}
	return result, false
}

// rpcAnswer is an encoded JSON-RPC answer as the parts it is sent in, one after the
// other, so that a large shared result (a cached inspect answer) is written as it is
// instead of being copied into one buffer per call. No part may be modified. A whole
// answer (an error) is all head; the zero value is no answer. A struct, not a slice of
// parts: returned by value it costs no allocation per call.
type rpcAnswer struct {
	head, result, tail []byte
}

// none reports whether there is no answer (a notification, a client's response).
func (a rpcAnswer) none() bool { return a.head == nil }

// size is the answer's length in bytes.
func (a rpcAnswer) size() int { return len(a.head) + len(a.result) + len(a.tail) }

// appendTo appends the whole answer to buf.
func (a rpcAnswer) appendTo(buf []byte) []byte {
	buf = append(buf, a.head...)
	buf = append(buf, a.result...)
	return append(buf, a.tail...)
}

// appendErrorResponse builds {"jsonrpc":"2.0","id":…,"error":{…}}.
func appendErrorResponse(buf []byte, id json.RawMessage, e *rpcError) []byte {
	obj, err := json.Marshal(e)
	if err != nil {
		// Only Data can fail to encode; the code and message still reach the client.
		obj, _ = json.Marshal(&rpcError{Code: e.Code, Message: e.Message})
	}
	buf = append(buf, `{"jsonrpc":"2.0","id":`...)
	buf = appendID(buf, id)
	buf = append(buf, `,"error":`...)
	buf = append(buf, obj...)
	return append(buf, "}\n"...)
}

func appendID(buf []byte, id json.RawMessage) []byte {
	if id == nil {
		return append(buf, "null"...)
	}
	return append(buf, id...)
}

// writeRPC sends an encoded JSON-RPC body.
func writeRPC(w http.ResponseWriter, status int, body []byte) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// jsonContentType is the Content-Type of every JSON-RPC answer; net/http only reads it.
var jsonContentType = []string{"application/json"}

// netHTTPCounts is the answer size below which net/http sets Content-Length itself: an
// answer that fits its response buffer (2,048 bytes) is still in it when the handler
// returns, and net/http counts it then. A larger one is sent while the handler writes,
// and without a declared length net/http would send it chunked.
const netHTTPCounts = 2048

// writeRPCParts sends an encoded JSON-RPC answer part by part, with its Content-Length
// (declared here only for an answer net/http does not count itself: the two allocations
// of a header value per answer were a measurable part of a speak call).
func writeRPCParts(w http.ResponseWriter, status int, a rpcAnswer) {
	// Assigned, not Set: the key is canonical already, and Set would canonicalise it and
	// allocate a new one-element slice on every answer.
	h := w.Header()
	h["Content-Type"] = jsonContentType
	if n := a.size(); n >= netHTTPCounts {
		h["Content-Length"] = []string{strconv.Itoa(n)}
	}
	w.WriteHeader(status)
	for _, p := range [3][]byte{a.head, a.result, a.tail} {
		if len(p) == 0 {
			continue
		}
		if _, err := w.Write(p); err != nil {
			return // the client went away; nothing more can reach it
		}
	}
}

// writeRPCError sends e with its HTTP status (200 when none is set).
func writeRPCError(w http.ResponseWriter, id json.RawMessage, e *rpcError) {
	status := e.status
	if status == 0 {
		status = http.StatusOK
	}
	writeRPC(w, status, appendErrorResponse(nil, id, e))
}
