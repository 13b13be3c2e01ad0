package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"talkd/internal/queue"
)

// MaxTextChars is the longest announcement, in characters, after trimming.
const MaxTextChars = 1000

// SpeakRequest is the body of POST /speak and the arguments of the MCP speak tool.
// Its tags are the speak tool's input schema (schema.go); the schema says what
// validateSpeak checks, and additionalProperties is false because the decoder refuses
// unknown fields (a typo must not pass silently).
type SpeakRequest struct {
	Text     string `json:"text" minLength:"1" maxLength:"1000" desc:"What to say: one or two plain sentences (1-1000 characters after trimming)."`
	Priority string `json:"priority,omitempty" enum:"low,normal,high" default:"\"normal\"" desc:"high is spoken before normal before low; each priority has its own rate limit."`
	Lang     string `json:"lang,omitempty" enum:"de,en" desc:"Language of the text; defaults to the daemon's configured language."`
	Provider string `json:"provider,omitempty" desc:"A configured speech provider to use instead of the default; usually omitted."`
	Now      bool   `json:"now,omitempty" default:"false" desc:"Pass quiet hours and the rate limit (never mute). Only for what cannot wait."`
}

// DecodeSpeakRequest decodes a speak request strictly: one JSON object, no unknown fields
// (a typo must not pass silently), every field of its type.
func DecodeSpeakRequest(raw []byte) (SpeakRequest, *Error) {
	var req SpeakRequest
	if decodeSpeakPlain(raw, &req) {
		return req, nil
	}
	req = SpeakRequest{}
	if err := decodeStrict(raw, &req); err != nil {
		return req, err
	}
	return req, nil
}

// decodeSpeakPlain decodes the usual request, one object of known lower-case fields with
// plain strings and a boolean, without encoding/json's reflection and decoder. It reports
// false for anything else (unknown or case-folded keys, escapes, null, wrong types, bad
// JSON), which decodeStrict then decodes or refuses with its field-naming errors.
func decodeSpeakPlain(raw []byte, req *SpeakRequest) bool {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '{' || !json.Valid(raw) {
		return false
	}
	members := newObjectMembers(raw)
	for {
		key, val, ok := members.next()
		if !ok {
			return true
		}
		if !exactKey(key) {
			return false
		}
		if string(key[1:len(key)-1]) == "now" {
			switch string(val) {
			case "true":
				req.Now = true
			case "false":
				req.Now = false
			default:
				return false
			}
			continue
		}
		str, ok := plainString(val)
		if !ok {
			return false
		}
		switch string(key[1 : len(key)-1]) {
		case "text":
			req.Text = string(str)
		case "priority":
			req.Priority = string(str)
		case "lang":
			req.Lang = string(str)
		case "provider":
			req.Provider = string(str)
		default:
			return false // unknown, or a case-folded name: decodeStrict decides
		}
	}
}

// decodeStrict decodes exactly one JSON object into v, refusing unknown fields and
// trailing data, with errors that name the field.
func decodeStrict(raw []byte, v any) *Error {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '{' {
		return &Error{Status: http.StatusBadRequest, Code: CodeInvalidJSON, Message: "the body must be a JSON object"}
	}
	if !utf8.Valid(raw) {
		// encoding/json would silently turn the bytes into U+FFFD and store or speak
		// something the caller never sent.
		if field := invalidUTF8Path(raw); field != "" {
			return fieldError(field, fmt.Sprintf("field %q holds bytes that are not valid UTF-8; send text as UTF-8", field))
		}
		return &Error{Status: http.StatusBadRequest, Code: CodeInvalidJSON, Message: "the body holds bytes that are not valid UTF-8"}
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return jsonError(err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return &Error{Status: http.StatusBadRequest, Code: CodeInvalidJSON, Message: "the body must hold exactly one JSON object"}
	}
	return nil
}

func jsonError(err error) *Error {
	var typeErr *json.UnmarshalTypeError
	var syntaxErr *json.SyntaxError
	switch {
	case errors.As(err, &typeErr):
		field := typeErr.Field
		if field == "" {
			return &Error{Status: http.StatusBadRequest, Code: CodeInvalidJSON, Message: "the body must be a JSON object"}
		}
		return fieldError(field, fmt.Sprintf("field %q must be %s, not a JSON %s", field, typeName(typeErr.Type.Kind().String()), typeErr.Value))
	case errors.As(err, &syntaxErr):
		return &Error{Status: http.StatusBadRequest, Code: CodeInvalidJSON, Message: fmt.Sprintf("invalid JSON at byte %d: %v", syntaxErr.Offset, err)}
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		name := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
		return &Error{Status: http.StatusBadRequest, Code: CodeUnknownField, Field: name, Message: fmt.Sprintf("unknown field %q", name)}
	case errors.Is(err, io.ErrUnexpectedEOF):
		return &Error{Status: http.StatusBadRequest, Code: CodeInvalidJSON, Message: "invalid JSON: unexpected end of input"}
	}
	return &Error{Status: http.StatusBadRequest, Code: CodeInvalidJSON, Message: "invalid JSON: " + err.Error()}
}

func typeName(kind string) string {
	switch kind {
	case "string":
		return "a string"
	case "bool":
		return "a boolean"
	case "int", "int64", "float64", "uint64":
		return "a number"
	case "slice":
		return "an array"
	case "struct", "map":
		return "an object"
	}
	return "of type " + kind
}

// SpeakResult is the outcome of an admitted-or-refused-by-law announcement, the same for
// both doors.
// Its tags are the speak tool's output schema.
type SpeakResult struct {
	Status       string     `json:"status" enum:"queued,muted,discarded"`
	ID           string     `json:"id,omitempty" desc:"The announcement id, when queued."`
	Position     int        `json:"position,omitempty" desc:"Place in the queue, when queued (1 = next)."`
	Reason       string     `json:"reason,omitempty" enum:"quiet_hours,rate_limit"`
	Until        *time.Time `json:"until,omitempty" desc:"End of the mute, when muted with an end."`
	RetryAfterMs int64      `json:"retry_after_ms,omitempty" desc:"When discarded by the rate limit: milliseconds until this priority passes again."`
	Window       string     `json:"window,omitempty" desc:"When discarded by quiet hours: the window, e.g. 22:00-07:00."`
	Message      string     `json:"message"`
}

// appendJSON appends r encoded exactly as json.Marshal encodes it, without reflection: the
// speak tool answers with it on every call.
func (r SpeakResult) appendJSON(dst []byte) ([]byte, error) {
	dst = append(dst, `{"status":`...)
	dst = appendJSONString(dst, r.Status)
	if r.ID != "" {
		dst = append(dst, `,"id":`...)
		dst = appendJSONString(dst, r.ID)
	}
	if r.Position != 0 {
		dst = append(dst, `,"position":`...)
		dst = strconv.AppendInt(dst, int64(r.Position), 10)
	}
	if r.Reason != "" {
		dst = append(dst, `,"reason":`...)
		dst = appendJSONString(dst, r.Reason)
	}
	if r.Until != nil {
		t, err := r.Until.MarshalJSON()
		if err != nil {
			return nil, fmt.Errorf("encoding until: %w", err)
		}
		dst = append(dst, `,"until":`...)
		dst = append(dst, t...)
	}
	if r.RetryAfterMs != 0 {
		dst = append(dst, `,"retry_after_ms":`...)
		dst = strconv.AppendInt(dst, r.RetryAfterMs, 10)
	}
	if r.Window != "" {
		dst = append(dst, `,"window":`...)
		dst = appendJSONString(dst, r.Window)
	}
	dst = append(dst, `,"message":`...)
	dst = appendJSONString(dst, r.Message)
	return append(dst, '}'), nil
}

// HTTPStatus is 202 for a queued announcement and 200 for the laws' other answers.
func (r SpeakResult) HTTPStatus() int {
	if r.Status == queue.StatusQueued {
		return http.StatusAccepted
	}
	return http.StatusOK
}

// Text is the one-line answer of the MCP speak tool ("queued: a12", "muted: …").
func (r SpeakResult) Text() string {
	if r.Status == queue.StatusQueued {
		return "queued: " + r.ID
	}
	return r.Message
}

// Speak is the one admission function of announcements: both POST /speak and the MCP
// speak tool call it, so they cannot drift apart in validation, messages or outcome.
func (s *Server) Speak(ctx context.Context, caller Caller, req SpeakRequest) (SpeakResult, *Error) {
	if !caller.CanSpeak() {
		return SpeakResult{}, &Error{Status: http.StatusForbidden, Code: CodeForbidden,
			Message: fmt.Sprintf("client %q has no speak grant", caller.ID)}
	}
	a, verr := s.validateSpeak(req)
	if verr != nil {
		return SpeakResult{}, verr
	}
	a.Caller, a.Agent = caller.ID, caller.Agent
	out, err := s.voice.Submit(ctx, a)
	switch {
	case errors.Is(err, queue.ErrQueueFull):
		return SpeakResult{}, &Error{Status: http.StatusServiceUnavailable, Code: CodeQueueFull, RetryAfter: 5 * time.Second,
			Message: "the announcement queue is full; try again in a few seconds"}
	case errors.Is(err, queue.ErrClosed):
		return SpeakResult{}, &Error{Status: http.StatusServiceUnavailable, Code: CodeShuttingDown, RetryAfter: 5 * time.Second,
			Message: "talkd is shutting down"}
	case err != nil:
		return SpeakResult{}, &Error{Status: http.StatusServiceUnavailable, Code: CodeInternal, Message: "the announcement was not queued: " + err.Error()}
	}
	res := SpeakResult{Status: out.Status, ID: out.ID, Position: out.Position, Reason: out.Reason}
	switch out.Status {
	case queue.StatusQueued:
		res.Message = "queued as " + out.ID + " at position " + strconv.Itoa(out.Position)
	case queue.StatusMuted:
		res.Until = out.MutedUntil
		if out.MutedUntil != nil {
			res.Message = "muted: talkd is muted until " + out.MutedUntil.Local().Format("15:04:05") + "; the announcement was not queued"
		} else {
			res.Message = "muted: talkd is muted until unmuted; the announcement was not queued"
		}
	case queue.StatusDiscarded:
		switch out.Reason {
		case queue.ReasonQuietHours:
			res.Window = out.Window
			res.Message = "discarded: quiet_hours " + out.Window + " (use now to pass quiet hours)"
		case queue.ReasonRateLimit:
			res.RetryAfterMs = out.RetryIn.Milliseconds()
			res.Message = fmt.Sprintf("discarded: rate_limit for %s announcements; the next passes in %s", a.Priority, roundUp(out.RetryIn))
		}
	}
	return res, nil
}

func roundUp(d time.Duration) time.Duration {
	if d < time.Second {
		return d.Round(time.Millisecond)
	}
	return ((d + time.Second - 1) / time.Second) * time.Second
}

// validateSpeak checks every field and fills the defaults.
func (s *Server) validateSpeak(req SpeakRequest) (queue.Announcement, *Error) {
	text := strings.TrimSpace(req.Text)
	n := utf8.RuneCountInString(text)
	if n == 0 {
		return queue.Announcement{}, fieldError("text", "field \"text\" is required and must not be empty")
	}
	if n > MaxTextChars {
		return queue.Announcement{}, fieldError("text", fmt.Sprintf("field \"text\" has %d characters; the limit is %d", n, MaxTextChars))
	}
	if !utf8.ValidString(text) {
		return queue.Announcement{}, fieldError("text", "field \"text\" holds bytes that are not valid UTF-8")
	}
	if strings.ContainsRune(text, 0) {
		return queue.Announcement{}, fieldError("text", "field \"text\" must not contain NUL characters")
	}
	prio, err := queue.ParsePriority(req.Priority)
	if err != nil {
		return queue.Announcement{}, fieldError("priority", "field \"priority\" must be low, normal or high, not "+strconv.Quote(req.Priority))
	}
	lang := req.Lang
	if lang == "" {
		lang = s.cfg.Voice.Lang
	}
	if lang != "de" && lang != "en" {
		return queue.Announcement{}, fieldError("lang", "field \"lang\" must be de or en, not "+strconv.Quote(req.Lang))
	}
	if req.Provider != "" && (s.engines == nil || !s.engines.Has(req.Provider)) {
		return queue.Announcement{}, fieldError("provider", "field \"provider\" names no configured provider: "+strconv.Quote(req.Provider))
	}
	return queue.Announcement{Text: text, Lang: lang, Priority: prio, Provider: req.Provider, Now: req.Now}, nil
}

// handleSpeak is POST /speak, after admission (which answered the preflight and set the
// CORS headers of a listed origin).
func (s *Server) handleSpeak(w http.ResponseWriter, r *http.Request, a admitted) {
	req, derr := DecodeSpeakRequest(a.body)
	if derr == nil {
		var res SpeakResult
		if res, derr = s.Speak(r.Context(), a.caller, req); derr == nil {
			writeJSON(w, res.HTTPStatus(), res)
			return
		}
	}
	s.refuse(w, r, speakDoor, derr)
}

// speakDoor names /speak in the log lines of refusals after admission.
var speakDoor = &door{path: "/speak"}

func (s *Server) allowOriginValue(origin string) string {
	if s.cfg.Server.CORSAny() {
		return "*"
	}
	return origin
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
