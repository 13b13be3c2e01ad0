package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"talkd/internal/werkbaum"
	"talkd/internal/werkbaum/plans"
	"talkd/internal/werkbaum/plans/docs"
)

// The document protocol's wire shapes (shared/werkbaum/DOCUMENTS.md) and their decoding.
// Request bodies are decoded leniently about *unknown* fields — the editor's live client
// may send members this server has no use for, and refusing them would break it on every
// editor release — and strictly about everything the protocol defines: types, required
// members, ranges, lengths, UTF-8. The answers have their own types here, so what goes on
// the wire is decided in one place and not by the store's Go types (lines is always an
// array, never null).

// Limits of the protocol's strings, in characters (plans/docs holds them for every door).
const (
	maxClientID    = docs.MaxClientID
	maxDisplayName = docs.MaxDisplayName
	maxTitle       = docs.MaxTitle
)

// lineOpWire is one LineOperation as it travels; the pointers tell a missing member from
// a zero.
type lineOpWire struct {
	Op    *string   `json:"op"`
	Index *int64    `json:"index"`
	Count *int64    `json:"count"`
	Lines *[]string `json:"lines"`
}

// contentPatchWire is the body of PATCH …/content.
type contentPatchWire struct {
	BaseVersion *int64        `json:"baseVersion"`
	Checksum    *string       `json:"checksum"`
	ClientID    *string       `json:"clientId"`
	Seq         *int64        `json:"seq"`
	DisplayName *string       `json:"displayName"`
	Milestone   *bool         `json:"milestone"`
	Ops         *[]lineOpWire `json:"ops"`
}

// titlePatchWire is the body of PATCH …/title. clientId and displayName are not in the
// contract's body; they are taken when an editor sends them, for the RENAMED version's
// attribution (without a name, the client id's last one).
type titlePatchWire struct {
	Title           *string `json:"title"`
	ExpectedVersion *int64  `json:"expectedVersion"`
	ClientID        *string `json:"clientId"`
	DisplayName     *string `json:"displayName"`
}

type titlePatch struct {
	Title           string
	ExpectedVersion uint64
	ClientID        string
	DisplayName     string
}

// decodeBody decodes one JSON object into v: bytes that are not UTF-8 are refused naming
// the member (encoding/json would silently store U+FFFD instead), unknown members are
// ignored.
func decodeBody(raw []byte, what string, v any) *Error {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '{' {
		return &Error{Status: http.StatusBadRequest, Code: CodeInvalidJSON, Message: "the body must be a JSON object " + what}
	}
	if !utf8.Valid(raw) {
		if field := invalidUTF8Path(raw); field != "" {
			return fieldError(field, fmt.Sprintf("field %q holds bytes that are not valid UTF-8; send text as UTF-8", field))
		}
		return &Error{Status: http.StatusBadRequest, Code: CodeInvalidJSON, Message: "the body holds bytes that are not valid UTF-8"}
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if err := dec.Decode(v); err != nil {
		return jsonError(err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return &Error{Status: http.StatusBadRequest, Code: CodeInvalidJSON, Message: "the body must hold exactly one JSON object"}
	}
	return nil
}

// decodeContentPatch decodes and checks a ContentPatch. What only the store can judge
// (sorted, non-overlapping, in range, the checksum's value) is left to it.
func decodeContentPatch(raw []byte) (plans.ContentPatch, *Error) {
	var in contentPatchWire
	if e := decodeBody(raw, "ContentPatch {baseVersion, checksum, clientId, seq, ops}", &in); e != nil {
		return plans.ContentPatch{}, e
	}
	var p plans.ContentPatch
	base, e := wholeNumber("baseVersion", in.BaseVersion, true, maxVersion)
	if e != nil {
		return p, e
	}
	p.BaseVersion = uint64(base)
	if in.Checksum == nil {
		return p, missing("checksum", `"sha256:" and the lowercase hex SHA-256 of the base text with LF line endings`)
	}
	sum := strings.ToLower(*in.Checksum)
	if hexPart, ok := strings.CutPrefix(sum, "sha256:"); !ok || !checksumRe.MatchString(hexPart) {
		return p, fieldError("checksum", fmt.Sprintf(`field "checksum" must be "sha256:" and 64 hex digits, not %q`, truncate(*in.Checksum, 80)))
	}
	p.Checksum = sum
	if in.ClientID == nil {
		return p, missing("clientId", "the editor client's random id")
	}
	if e := label("clientId", *in.ClientID, 1, maxClientID); e != nil {
		return p, e
	}
	p.ClientID = *in.ClientID
	seq, e := wholeNumber("seq", in.Seq, true, maxVersion)
	if e != nil {
		return p, e
	}
	p.Seq = seq
	if in.DisplayName != nil {
		if e := label("displayName", *in.DisplayName, 0, maxDisplayName); e != nil {
			return p, e
		}
		p.DisplayName = *in.DisplayName
	}
	p.Milestone = in.Milestone != nil && *in.Milestone
	if in.Ops == nil {
		return p, missing("ops", "an array of line operations (may be empty)")
	}
	p.Ops = make([]werkbaum.LineOp, len(*in.Ops))
	for i, op := range *in.Ops {
		out, e := decodeLineOp(i, op)
		if e != nil {
			return p, e
		}
		p.Ops[i] = out
	}
	return p, nil
}

func decodeLineOp(i int, in lineOpWire) (werkbaum.LineOp, *Error) {
	name := func(m string) string { return "ops[" + strconv.Itoa(i) + "]." + m }
	var op werkbaum.LineOp
	if in.Op == nil {
		return op, missing(name("op"), `"insert", "delete" or "replace"`)
	}
	op.Op = *in.Op
	switch op.Op {
	case "insert", "delete", "replace":
	default:
		return op, fieldError(name("op"), fmt.Sprintf(`field %q must be "insert", "delete" or "replace", not %q`, name("op"), truncate(op.Op, 40)))
	}
	index, e := wholeNumber(name("index"), in.Index, true, maxLineIndex)
	if e != nil {
		return op, e
	}
	op.Index = int(index)
	if op.Op != "insert" || in.Count != nil {
		// Meaningless for insert, but a negative number is malformed everywhere.
		count, e := wholeNumber(name("count"), in.Count, op.Op != "insert", maxLineIndex)
		if e != nil {
			return op, e
		}
		op.Count = int(count)
	}
	if op.Op != "delete" {
		if in.Lines == nil {
			return op, missing(name("lines"), "the lines to insert, an array of strings")
		}
		op.Lines = *in.Lines
		for j, l := range op.Lines {
			if strings.ContainsAny(l, "\r\n") {
				f := name("lines") + "[" + strconv.Itoa(j) + "]"
				return op, fieldError(f, fmt.Sprintf("field %q holds a line break; each element of lines is one line", f))
			}
		}
	}
	return op, nil
}

// Upper bounds of the integer members: versions and seq are int64 in the protocol; a line
// index or count fits an int32 (a plan of 2 MiB has at most about two million lines).
const (
	maxVersion   = 1<<63 - 1
	maxLineIndex = 1<<31 - 1
)

// wholeNumber checks an integer member: present when required, never negative, at most
// limit.
func wholeNumber(field string, v *int64, required bool, limit int64) (int64, *Error) {
	if v == nil {
		if required {
			return 0, missing(field, "a whole number ≥ 0")
		}
		return 0, nil
	}
	if *v < 0 {
		return 0, fieldError(field, fmt.Sprintf("field %q must be a whole number ≥ 0, not %d", field, *v))
	}
	if *v > limit {
		return 0, fieldError(field, fmt.Sprintf("field %q is out of range: %d", field, *v))
	}
	return *v, nil
}

func missing(field, what string) *Error {
	return fieldError(field, fmt.Sprintf("field %q is required: %s", field, what))
}

// label checks a short attributed string (clientId, displayName, title): its length in
// characters and no control characters, since it ends up in history, feeds, logs and
// commit messages.
func label(field, s string, minLen, maxLen int) *Error {
	n := utf8.RuneCountInString(s)
	if n < minLen || n > maxLen {
		if minLen > 0 {
			return fieldError(field, fmt.Sprintf("field %q must be %d to %d characters long, not %d", field, minLen, maxLen, n))
		}
		return fieldError(field, fmt.Sprintf("field %q must be at most %d characters long, not %d", field, maxLen, n))
	}
	for _, r := range s {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || r == '\u2028' || r == '\u2029' {
			return fieldError(field, fmt.Sprintf("field %q must not contain control characters or line breaks (found U+%04X)", field, r))
		}
	}
	return nil
}

func decodeTitlePatch(raw []byte) (titlePatch, *Error) {
	var in titlePatchWire
	var t titlePatch
	if e := decodeBody(raw, "{title, expectedVersion}", &in); e != nil {
		return t, e
	}
	if in.Title == nil {
		return t, missing("title", "the new title, 1 to 255 characters")
	}
	if e := label("title", *in.Title, 1, maxTitle); e != nil {
		return t, e
	}
	t.Title = *in.Title
	v, e := wholeNumber("expectedVersion", in.ExpectedVersion, true, maxVersion)
	if e != nil {
		return t, e
	}
	t.ExpectedVersion = uint64(v)
	t.ClientID, t.DisplayName, e = decodeWho(in.ClientID, in.DisplayName)
	return t, e
}

// decodeWho checks the optional clientId and displayName a rename or a restore may carry.
func decodeWho(clientID, displayName *string) (string, string, *Error) {
	var id, name string
	if clientID != nil {
		if e := label("clientId", *clientID, 0, maxClientID); e != nil {
			return "", "", e
		}
		id = *clientID
	}
	if displayName != nil {
		if e := label("displayName", *displayName, 0, maxDisplayName); e != nil {
			return "", "", e
		}
		name = *displayName
	}
	return id, name, nil
}

// --- answers ---

// lineOpOut is a LineOperation in an answer: lines always an array.
type lineOpOut struct {
	Op    string   `json:"op"`
	Index int      `json:"index"`
	Count int      `json:"count"`
	Lines []string `json:"lines"`
}

func opsOf(ops []werkbaum.LineOp) []lineOpOut {
	out := make([]lineOpOut, len(ops))
	for i, op := range ops {
		out[i] = lineOpOut{Op: op.Op, Index: op.Index, Count: op.Count, Lines: op.Lines}
		if out[i].Lines == nil {
			out[i].Lines = []string{}
		}
	}
	return out
}

type documentWire struct {
	ID        string    `json:"id"`
	Title     string    `json:"title"`
	Content   string    `json:"content"`
	Version   uint64    `json:"version"`
	CreatedAt time.Time `json:"createdAt"`
	UpdatedAt time.Time `json:"updatedAt"`
}

func documentOf(d *plans.Document) documentWire {
	return documentWire{ID: d.ID, Title: d.Title, Content: d.Content, Version: d.Version,
		CreatedAt: d.CreatedAt.UTC(), UpdatedAt: d.UpdatedAt.UTC()}
}

type patchResultWire struct {
	Version      uint64      `json:"version"`
	OpsSinceBase []lineOpOut `json:"opsSinceBase"`
}

// conflictMembers are the extension members of a 409 on PATCH …/content.
type conflictMembers struct {
	CurrentVersion uint64      `json:"currentVersion"`
	OpsSinceBase   []lineOpOut `json:"opsSinceBase"`
}

type eventWire struct {
	Version     uint64 `json:"version"`
	ChangeType  string `json:"changeType"`
	ClientID    string `json:"clientId,omitempty"`
	DisplayName string `json:"displayName,omitempty"`
	Title       string `json:"title,omitempty"`
}

// feedWire is a ChangeFeed: ops (possibly empty) exactly when fromVersion is there,
// content exactly when it is not.
type feedWire struct {
	FromVersion    *uint64      `json:"fromVersion,omitempty"`
	CurrentVersion uint64       `json:"currentVersion"`
	Ops            *[]lineOpOut `json:"ops,omitempty"`
	Content        *string      `json:"content,omitempty"`
	Events         []eventWire  `json:"events"`
}

func feedOf(f *plans.ChangeFeed) feedWire {
	out := feedWire{FromVersion: f.FromVersion, CurrentVersion: f.CurrentVersion, Content: f.Content, Events: make([]eventWire, len(f.Events))}
	if f.FromVersion != nil {
		ops := opsOf(f.Ops)
		out.Ops = &ops
	}
	for i, e := range f.Events {
		out.Events[i] = eventWire{Version: e.Version, ChangeType: e.ChangeType, ClientID: e.ClientID, DisplayName: e.DisplayName, Title: e.Title}
	}
	return out
}

type historyWire struct {
	DocumentID  string    `json:"documentId"`
	Version     uint64    `json:"version"`
	Title       string    `json:"title"`
	Content     string    `json:"content"`
	ChangeType  string    `json:"changeType"`
	Timestamp   time.Time `json:"timestamp"`
	ClientID    string    `json:"clientId,omitempty"`
	DisplayName string    `json:"displayName,omitempty"`
	// talkd's members beside the contract's: whether the version is a milestone, who
	// marked it one (an empty milestone PATCH), which version a restore brought back.
	Milestone        bool   `json:"milestone"`
	MarkedBy         string `json:"markedBy,omitempty"`
	MarkedByClientID string `json:"markedByClientId,omitempty"`
	RestoredFrom     uint64 `json:"restoredFrom,omitempty"`
}

func historyOf(h []plans.HistoryEntry) []historyWire {
	out := make([]historyWire, len(h))
	for i, e := range h {
		out[i] = historyWire{DocumentID: e.DocumentID, Version: e.Version, Title: e.Title, Content: e.Content,
			ChangeType: e.ChangeType, Timestamp: e.Timestamp.UTC(), ClientID: e.ClientID, DisplayName: e.DisplayName,
			Milestone: e.Milestone, MarkedBy: e.MarkedBy, MarkedByClientID: e.MarkedByClientID, RestoredFrom: e.RestoredFrom}
	}
	return out
}

// writeDocJSON writes a document answer (HEAD: the headers only).
func writeDocJSON(w http.ResponseWriter, r *http.Request, status int, v any) {
	if r.Method == http.MethodHead {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		return
	}
	writeJSON(w, status, v)
}

// problemWire is an RFC 9457 problem details object. type is a URN per code (not meant to
// be dereferenced), title the status text; code and field are extension members shared
// with the other doors' errors.
type problemWire struct {
	Type     string `json:"type"`
	Title    string `json:"title"`
	Status   int    `json:"status"`
	Detail   string `json:"detail"`
	Instance string `json:"instance"`
	Code     string `json:"code"`
	Field    string `json:"field,omitempty"`
	*conflictMembers
}

// problemTypePrefix starts every problem type of talkd.
const problemTypePrefix = "urn:talkd:problem:"

// writeProblem renders e as application/problem+json, with the 409's members when given.
func writeProblem(w http.ResponseWriter, r *http.Request, e *Error, c *conflictMembers) {
	h := w.Header()
	if e.RetryAfter > 0 {
		secs := int((e.RetryAfter + time.Second - 1) / time.Second)
		h.Set("Retry-After", strconv.Itoa(secs))
	}
	if e.Status == http.StatusUnauthorized {
		h.Set("WWW-Authenticate", authChallenge(e))
	}
	body, err := json.Marshal(problemWire{Type: problemTypePrefix + e.Code, Title: http.StatusText(e.Status), Status: e.Status,
		Detail: e.Message, Instance: strings.ToValidUTF8(r.URL.Path, "?"), Code: e.Code, Field: e.Field, conflictMembers: c})
	if err != nil {
		body = []byte(`{"type":"urn:talkd:problem:internal","title":"Internal Server Error","status":500,"detail":"the answer could not be encoded"}`)
		e = &Error{Status: http.StatusInternalServerError}
	}
	h.Set("Content-Type", "application/problem+json")
	if r.Method == http.MethodHead {
		w.WriteHeader(e.Status)
		return
	}
	h.Set("Content-Length", strconv.Itoa(len(body)+1))
	w.WriteHeader(e.Status)
	_, _ = w.Write(append(body, '\n'))
}
