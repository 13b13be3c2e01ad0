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
	"unicode"
	"unicode/utf8"

	"talkd/internal/config"
	"talkd/internal/queue"
)

// MaxTextBytes is the longest text a speak request may carry, the body limit of
// /speak; what is longer than voice.cleanup.max_chars is cut at a sentence boundary, not
// refused (the answer says so), so `make 2>&1 | talk say` works.
const MaxTextBytes = 64 << 10

// SpeakRequest is the body of POST /speak and the arguments of the MCP speak tool.
// Its tags are the speak tool's input schema (schema.go); the schema says what
// validateSpeak checks, and additionalProperties is false because the decoder refuses
// unknown fields (a typo must not pass silently).
type SpeakRequest struct {
	Text     string `json:"text" minLength:"1" maxLength:"65536" desc:"One or two plain sentences (cut at about 400 characters)."`
	Priority string `json:"priority,omitempty" enum:"low,normal,high" default:"\"normal\"" desc:"high before normal before low; each has its own rate limit."`
	Lang     string `json:"lang,omitempty" pattern:"^[A-Za-z]{2,3}(-[A-Za-z0-9]{1,8})*$" desc:"BCP-47 language of the text (de, en, pt-BR, …); default: the daemon's."`
	Provider string `json:"provider,omitempty" desc:"A configured speech provider; usually omitted."`
	Now      bool   `json:"now,omitempty" default:"false" desc:"Pass quiet hours (if allowed) and rate limit, not mute; only for what cannot wait."`
	// Keep says which part of a text longer than max_chars is spoken: its start (the
	// default, cut at a sentence) or its end (the last lines: piped build output, where
	// the error is).
	Keep string `json:"keep,omitempty" enum:"start,end" default:"\"start\"" desc:"Of a long text: start, or end (its last lines: build output)."`
	// Voice is an engine voice (talk voices lists them); Rate, Pitch and Volume are on
	// engine-neutral scales (queue.Prosody), 0 or absent = the default. Their bounds are
	// queue.MinRate … queue.MaxVolume (a test holds the tags to them).
	Voice  string `json:"voice,omitempty" maxLength:"64" desc:"An engine voice (talk voices lists them); usually omitted."`
	Rate   int    `json:"rate,omitempty" minimum:"80" maximum:"450" desc:"Words per minute."`
	Pitch  int    `json:"pitch,omitempty" minimum:"1" maximum:"99" desc:"50 = the voice's normal."`
	Volume int    `json:"volume,omitempty" minimum:"1" maximum:"200" desc:"Volume in percent, 100 = normal."`
}

// DecodeSpeakRequest decodes a speak request strictly: one JSON object, no unknown fields
// (a typo must not pass silently), every field of its type.
func DecodeSpeakRequest(raw []byte) (SpeakRequest, *Error) {
	if !json.Valid(raw) {
		return decodeSpeakStrict(raw)
	}
	return decodeSpeakArgs(raw)
}

// decodeSpeakArgs is DecodeSpeakRequest for raw that is valid JSON: the speak tool's
// arguments, part of a body the MCP door has checked already (ToolSpec.Decode). Checking
// them again took a tenth of the door's JSON work per call.
func decodeSpeakArgs(raw json.RawMessage) (SpeakRequest, *Error) {
	var req SpeakRequest
	if decodeSpeakPlain(raw, &req) {
		return req, nil
	}
	return decodeSpeakStrict(raw)
}

// decodeSpeakStrict decodes raw with encoding/json, refusing with field-naming errors.
func decodeSpeakStrict(raw []byte) (SpeakRequest, *Error) {
	var req SpeakRequest
	if err := decodeStrict(raw, &req); err != nil {
		return req, err
	}
	return req, nil
}

// decodeSpeakPlain decodes the usual request, one object of known lower-case fields with
// plain strings and a boolean, without encoding/json's reflection and decoder; raw must
// be valid JSON. It reports false for anything else (unknown or case-folded keys,
// escapes, null, wrong types), which decodeStrict then decodes or refuses with its
// field-naming errors.
func decodeSpeakPlain(raw []byte, req *SpeakRequest) bool {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '{' {
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
		case "voice":
			req.Voice = string(str)
		case "keep":
			req.Keep = string(str)
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
	// ShortenedFrom is the text's length in characters when it was cut to max_chars.
	ShortenedFrom int `json:"shortened_from,omitempty" desc:"When the text was cut to the daemon's max_chars: its length before, in characters."`
	// LeftOut says, for a text cut to max_chars, what of it is not spoken.
	LeftOut string `json:"left_out,omitempty" desc:"When the text was cut: what was left out, e.g. the first 37 lines (1813 characters)."`
	// DeferredMs is how long a queued announcement waits for its rate-limit slot
	// (rules.on_rate_limit = "defer").
	DeferredMs int64 `json:"deferred_ms,omitempty" desc:"When queued under on_rate_limit = defer: milliseconds it waits for its rate-limit slot."`
	// SameAs names the waiting announcement with the same text and caller that this one
	// was merged into (spoken once).
	SameAs string `json:"same_as,omitempty" desc:"When the same text of the same caller was already waiting: its id; it is spoken once."`
	// Warning says, for a queued announcement, that it will not be heard (no speech engine, no player).
	Warning string `json:"warning,omitempty" desc:"When queued but nothing can make it heard (no speech engine, no audio player): why it will not be heard."`
	Message string `json:"message"`
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
	if r.ShortenedFrom != 0 {
		dst = append(dst, `,"shortened_from":`...)
		dst = strconv.AppendInt(dst, int64(r.ShortenedFrom), 10)
	}
	if r.LeftOut != "" {
		dst = append(dst, `,"left_out":`...)
		dst = appendJSONString(dst, r.LeftOut)
	}
	if r.DeferredMs != 0 {
		dst = append(dst, `,"deferred_ms":`...)
		dst = strconv.AppendInt(dst, r.DeferredMs, 10)
	}
	if r.SameAs != "" {
		dst = append(dst, `,"same_as":`...)
		dst = appendJSONString(dst, r.SameAs)
	}
	if r.Warning != "" {
		dst = append(dst, `,"warning":`...)
		dst = appendJSONString(dst, r.Warning)
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

// Text is the one-line answer of the MCP speak tool ("queued: a12", "muted: …"), with
// the warning that it will not be heard when nothing can make it heard.
func (r SpeakResult) Text() string {
	if r.Status == queue.StatusQueued {
		if r.Warning != "" {
			return "queued: " + r.ID + " (warning: " + r.Warning + ")"
		}
		return "queued: " + r.ID
	}
	return r.Message
}

// Speak is the one admission function of announcements: both POST /speak and the MCP
// speak tool call it, so they cannot drift apart in validation, messages or outcome.
func (s *Server) Speak(ctx context.Context, caller Caller, req SpeakRequest) (SpeakResult, *Error) {
	return s.speakFrom(ctx, caller, "", req)
}

// speakFrom is Speak for a request that came from a browser page (origin, "" for
// others), so the history and the log can name the page.
func (s *Server) speakFrom(ctx context.Context, caller Caller, origin string, req SpeakRequest) (SpeakResult, *Error) {
	if !caller.CanSpeak() {
		return SpeakResult{}, &Error{Status: http.StatusForbidden, Code: CodeForbidden,
			Message: fmt.Sprintf("client %q has no speak grant", caller.ID)}
	}
	a, cut, verr := s.validateSpeak(ctx, req)
	if verr != nil {
		return SpeakResult{}, verr
	}
	a.Caller, a.Agent, a.Origin = caller.ID, caller.Agent, origin
	a.NowPassesQuietHours = caller.NowPassesQuietHours()
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
		if out.SameAs != "" {
			res.SameAs = out.SameAs
			res.Message = "the same text is already waiting as " + out.SameAs + " (position " + strconv.Itoa(out.Position) + "); it is spoken once"
		}
		if out.Deferred > 0 {
			res.DeferredMs = out.Deferred.Milliseconds()
			res.Message += fmt.Sprintf("; it waits %s for its rate-limit slot", roundUp(out.Deferred))
		}
		if cut.from > 0 {
			res.ShortenedFrom, res.LeftOut = cut.from, cut.leftOut
			if cut.end {
				res.Message += fmt.Sprintf("; the text was cut from %d characters to its last %d (voice.cleanup.max_chars); left out: %s", cut.from, utf8.RuneCountInString(a.Text), cut.leftOut)
			} else {
				res.Message += fmt.Sprintf("; the text was cut at a sentence boundary from %d to %d characters (voice.cleanup.max_chars); left out: %s", cut.from, utf8.RuneCountInString(a.Text), cut.leftOut)
			}
		}
		if s.engines != nil {
			if why := s.engines.Silent(a.Provider); why != "" {
				res.Warning = why + "; the announcement will not be heard"
			}
		}
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
			res.Message = "discarded: quiet_hours " + out.Window + " (send now: true, or talk say --now, to pass quiet hours)"
			if out.NowRefused {
				res.Message = "discarded: quiet_hours " + out.Window + " (now does not pass quiet hours here: rules.now_passes_quiet_hours, or this client's grant, says so)"
			}
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

// textCut says how a text longer than voice.cleanup.max_chars was cut (from = 0: not cut).
type textCut struct {
	from    int    // its length before, in characters
	end     bool   // its end was kept (keep = "end")
	leftOut string // what is not spoken, for the answer
}

// validateSpeak checks every field and fills the defaults. Language and voice are checked
// against the engine's own voice list (Engines.Check), so what passes can be spoken.
// A text longer than voice.cleanup.max_chars is cut (its start kept, or with keep = "end"
// its last lines); cut says how.
func (s *Server) validateSpeak(ctx context.Context, req SpeakRequest) (a queue.Announcement, cut textCut, verr *Error) {
	text := strings.TrimSpace(req.Text)
	n := utf8.RuneCountInString(text)
	if n == 0 {
		return queue.Announcement{}, cut, fieldError("text", "field \"text\" is required and must not be empty")
	}
	if len(text) > MaxTextBytes {
		return queue.Announcement{}, cut, fieldError("text", fmt.Sprintf("field \"text\" has %d bytes; the limit is %d", len(text), MaxTextBytes))
	}
	if !utf8.ValidString(text) {
		return queue.Announcement{}, cut, fieldError("text", "field \"text\" holds bytes that are not valid UTF-8")
	}
	if strings.ContainsRune(text, 0) {
		return queue.Announcement{}, cut, fieldError("text", "field \"text\" must not contain NUL characters")
	}
	switch req.Keep {
	case "", "start", "end":
	default:
		return queue.Announcement{}, cut, fieldError("keep", "field \"keep\" must be start or end, not "+strconv.Quote(req.Keep))
	}
	cfg := s.config()
	if limit := cfg.Voice.Cleanup.Limit(); n > limit {
		cut.from = n
		if req.Keep == "end" {
			cut.end = true
			text, cut.leftOut = queue.CutKeepingEnd(text, limit)
		} else {
			text = queue.CutAtSentence(text, limit)
			cut.leftOut = fmt.Sprintf("the last %d characters", n-utf8.RuneCountInString(text))
		}
	}
	prio, err := queue.ParsePriority(req.Priority)
	if err != nil {
		return queue.Announcement{}, cut, fieldError("priority", "field \"priority\" must be low, normal or high, not "+strconv.Quote(req.Priority))
	}
	lang := req.Lang
	if lang == "" {
		// voice.lang was checked by config.Load; a regexp match per announcement for it
		// was a measurable part of the speak path.
		lang = cfg.Voice.Lang
	} else if !config.IsLangTag(lang) {
		return queue.Announcement{}, cut, fieldError("lang", "field \"lang\" must be a BCP-47 language tag such as de, en, fr or pt-BR, not "+strconv.Quote(req.Lang))
	}
	if req.Provider != "" && (s.engines == nil || !s.engines.Has(req.Provider)) {
		return queue.Announcement{}, cut, fieldError("provider", "field \"provider\" names no configured provider: "+strconv.Quote(req.Provider))
	}
	if v := req.Voice; v != "" && (len(v) > 64 || strings.HasPrefix(v, "-") || strings.IndexFunc(v, unicode.IsControl) >= 0) {
		return queue.Announcement{}, cut, fieldError("voice", "field \"voice\" must be a voice name of at most 64 characters (talk voices lists them), not "+strconv.Quote(v))
	}
	p := queue.Prosody{Rate: req.Rate, Pitch: req.Pitch, Volume: req.Volume}
	for _, r := range []struct {
		field     string
		v, lo, hi int
		unit      string
	}{
		{"rate", p.Rate, queue.MinRate, queue.MaxRate, "words per minute"},
		{"pitch", p.Pitch, queue.MinPitch, queue.MaxPitch, "50 is the voice's normal pitch"},
		{"volume", p.Volume, queue.MinVolume, queue.MaxVolume, "percent, 100 is normal"},
	} {
		if r.v != 0 && (r.v < r.lo || r.v > r.hi) {
			return queue.Announcement{}, cut, fieldError(r.field, fmt.Sprintf("field %q must be between %d and %d (%s), not %d", r.field, r.lo, r.hi, r.unit, r.v))
		}
	}
	if s.engines != nil {
		if field, err := s.engines.Check(ctx, req.Provider, lang, req.Voice); err != nil {
			return queue.Announcement{}, cut, fieldError(field, fmt.Sprintf("field %q: %v", field, err))
		}
	}
	return queue.Announcement{Text: text, Lang: lang, Priority: prio, Provider: req.Provider, Now: req.Now,
		Voice: req.Voice, Prosody: p}, cut, nil
}

// handleSpeak is POST /speak, after admission (which answered the preflight and set the
// CORS headers of a listed origin).
func (s *Server) handleSpeak(w http.ResponseWriter, r *http.Request, a admitted) {
	req, derr := DecodeSpeakRequest(a.body)
	if derr == nil {
		var res SpeakResult
		if res, derr = s.speakFrom(r.Context(), a.caller, r.Header.Get("Origin"), req); derr == nil {
			writeJSON(w, res.HTTPStatus(), res)
			return
		}
	}
	s.refuseHTTP(w, r, derr)
}

func allowOriginValue(cfg *config.Config, origin string) string {
	if cfg.Server.CORSAny() {
		return "*"
	}
	return origin
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
