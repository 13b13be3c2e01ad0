package api

import (
	"encoding/json"
	"net/http"
	"strconv"
	"time"
)

// Error is a refusal the caller can act on. Both doors render it: /speak and the control
// endpoints as HTTP status + {"error":{...}}, the MCP door as a tool error or JSON-RPC error.
type Error struct {
	Status     int           // HTTP status
	Code       string        // stable machine-readable code
	Message    string        // English, names the problem
	Field      string        // the request field at fault, if any
	RetryAfter time.Duration // for 503: when to try again
	// invalidToken marks a 401 for a token that was sent but is wrong (RFC 6750 §3.1
	// invalid_token), as against none sent.
	invalidToken bool
}

// authChallenge is the WWW-Authenticate value of a 401, the same on every door: a wrong
// token says invalid_token with a description, so hosts can tell the user (Claude Code
// and Gemini CLI showed only "Disconnected" or an OAuth registration error).
func authChallenge(e *Error) string {
	if e.invalidToken {
		return `Bearer realm="talkd", error="invalid_token", error_description="the bearer token is not valid"`
	}
	return `Bearer realm="talkd"`
}

func (e *Error) Error() string { return e.Message }

// Error codes shared by all doors.
const (
	CodeInvalidJSON      = "invalid_json"
	CodeUnknownField     = "unknown_field"
	CodeInvalidField     = "invalid_field"
	CodeBodyTooLarge     = "body_too_large"
	CodeNotFound         = "not_found"
	CodeMethodNotAllowed = "method_not_allowed"
	CodeQueueFull        = "queue_full"
	CodeShuttingDown     = "shutting_down"
	CodeUnauthorized     = "unauthorized"
	CodeForbidden        = "forbidden"
	CodeHostNotAllowed   = "host_not_allowed"
	CodeOriginNotAllowed = "origin_not_allowed"
	CodeBadHeader        = "bad_header" // malformed or ambiguous headers (two Authorization headers)
	CodeInternal         = "internal"
	// CodeNotWaiting: POST /cancel named an announcement that is not waiting.
	CodeNotWaiting = "not_waiting"
)

func fieldError(field, msg string) *Error {
	return &Error{Status: http.StatusBadRequest, Code: CodeInvalidField, Field: field, Message: msg}
}

type errorBody struct {
	Error errorDetail `json:"error"`
}

type errorDetail struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Field   string `json:"field,omitempty"`
}

// writeError renders e as the JSON error body of the HTTP doors.
func writeError(w http.ResponseWriter, e *Error) {
	if e.RetryAfter > 0 {
		secs := int((e.RetryAfter + time.Second - 1) / time.Second)
		w.Header().Set("Retry-After", strconv.Itoa(secs))
	}
	if e.Status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", authChallenge(e))
	}
	writeJSON(w, e.Status, errorBody{Error: errorDetail{Code: e.Code, Message: e.Message, Field: e.Field}})
}

// writeJSON writes v with status. Encoding errors cannot be reported to the client any
// more once the header is out, so the body is marshalled first.
func writeJSON(w http.ResponseWriter, status int, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		body = []byte(`{"error":{"code":"internal","message":"response could not be encoded"}}`)
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(body)+1))
	w.WriteHeader(status)
	body = append(body, '\n')
	_, _ = w.Write(body)
}
