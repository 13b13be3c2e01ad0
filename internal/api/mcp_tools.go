package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"talkd/internal/werkbaum"
	"talkd/internal/werkbaum/plans"
)

// Tools are declared once, as Go types: AddTool derives the input schema from In and the
// output schema from Out when the tool is registered, and a call can only answer an Out
// (as structuredContent, with its text copy in content) or a *ToolError. So every answer
// in every state is valid against what tools/list declares:
//   - a success is an Out, whose schema is Out's type;
//   - a failure (bad arguments, a refused or failed operation) is isError: true with no
//     structuredContent, and one text block holding the ToolError as a JSON object.
// Hosts that validate structuredContent against outputSchema (the TypeScript SDKs do)
// thus accept every answer, and the details of a failure (the conflict's current text and
// base, the guard's warnings) still reach the model, in the text.

// ToolSpec declares a tool through its argument type In and result type Out (both
// structs; see schema.go for how their schemas are derived).
type ToolSpec[In, Out any] struct {
	Name        string
	Title       string
	Description string
	Annotations ToolAnnotations
	// UndeclaredOutput leaves the output schema out of tools/list (structuredContent is
	// still an Out). For the seven write tools: their one small result type cost 414
	// bytes of schema each in every request a host sends, which hosts do not show their
	// model; the guide and the text copy say what a write answers.
	UndeclaredOutput bool
	// InputEnums sets the allowed values of string properties of the input schema that
	// come from the engine's vocabulary at run time, which a struct tag cannot hold.
	InputEnums []PropertyEnum
	// Heavy marks a tool whose calls cost milliseconds of CPU (the plan tools that run the
	// notation engine or answer hundreds of KB). At most Options.HeavyCalls of them run at
	// once, call and result encoding included; the others wait their turn.
	Heavy bool
	// Decode replaces the strict decoding of the arguments where a hand-written decoder
	// pays (the speak tool); nil = decodeStrictArgs into In. raw is valid JSON: a member of
	// a body the door has checked with json.Valid (decodeRPC, serveBatch).
	Decode func(raw json.RawMessage) (In, *Error)
	// Encode, when set, appends an Out to dst exactly as encoding/json encodes it (the
	// speak tool: SpeakResult.appendJSON). The result object is then built straight into
	// the call's storage, without putting the Out into an interface first (an allocation
	// of its size on every call). nil: the Out encodes itself (jsonAppender, wholeResult)
	// or goes through encoding/json.
	Encode func(dst []byte, out Out) ([]byte, error)
	// Call does the work: a success answers the result and its one-line text copy; a
	// failure a *ToolError. raw is the arguments object as sent ({} when none), for
	// recognising retries.
	Call func(ctx context.Context, caller Caller, in In, raw json.RawMessage) (Out, string, *ToolError)
}

// tool is a registered tool as the door serves it.
type tool struct {
	Name         string
	Title        string
	Description  string
	InputSchema  map[string]any
	OutputSchema map[string]any
	Annotations  ToolAnnotations
	Heavy        bool
	// call runs the tool; it may build the result object in dst (toolAnswer.built).
	call func(ctx context.Context, caller Caller, args json.RawMessage, dst []byte) toolAnswer
}

// AddTool registers a tool. It panics on a type without a schema, an empty or duplicate
// name or a missing Call: wiring mistakes that must not reach a host.
func AddTool[In, Out any](s *Server, spec ToolSpec[In, Out]) {
	in, err := schemaOf[In](inputMode)
	if err != nil {
		panic(fmt.Sprintf("api: tool %q: input schema: %v", spec.Name, err))
	}
	out, err := schemaOf[Out](outputMode)
	if err != nil {
		panic(fmt.Sprintf("api: tool %q: output schema: %v", spec.Name, err))
	}
	if spec.Call == nil {
		panic(fmt.Sprintf("api: tool %q has no Call", spec.Name))
	}
	for _, e := range spec.InputEnums {
		if err := setEnum(in, e); err != nil {
			panic(fmt.Sprintf("api: tool %q: input property %s: %v", spec.Name, strings.Join(e.Path, "."), err))
		}
	}
	if spec.UndeclaredOutput {
		out = nil
	}
	decode := spec.Decode
	if decode == nil {
		decode = func(raw json.RawMessage) (In, *Error) {
			var v In
			err := decodeStrictArgs(raw, &v)
			return v, err
		}
	}
	name, log, encode := spec.Name, s.log, spec.Encode
	s.mcp.reg.addTool(tool{
		Name: spec.Name, Title: spec.Title, Description: spec.Description,
		InputSchema: in, OutputSchema: out, Annotations: spec.Annotations, Heavy: spec.Heavy,
		call: func(ctx context.Context, caller Caller, raw json.RawMessage, dst []byte) toolAnswer {
			v, derr := decode(raw)
			if derr != nil {
				return refusedAnswer(log, name, caller, toolErrorOf(derr))
			}
			res, text, terr := spec.Call(ctx, caller, v, raw)
			if terr != nil && errors.Is(ctx.Err(), context.Canceled) {
				return abandonedAnswer(log, name, caller, terr)
			}
			if terr != nil {
				return refusedAnswer(log, name, caller, terr)
			}
			if encode != nil {
				built, err := encode(append(appendTextContent(dst, text), `,"structuredContent":`...), res)
				if err != nil {
					return toolAnswer{encodeErr: fmt.Errorf("encoding a tool result: %w", err)}
				}
				return toolAnswer{built: endResult(append(built, '}'))}
			}
			return toolAnswer{text: text, result: res}
		},
	})
}

// toolAnswer is what a call produced: a result of the tool's Out type with its text
// copy, the whole result object already built (ToolSpec.Encode), or a failure. Only
// AddTool's wrapper builds one.
type toolAnswer struct {
	// built is the result object with responseTail after it, appended to the dst the
	// call was given; encodeErr is why it could not be built.
	built     []byte
	encodeErr error

	text   string
	result any // the Out value; nil for a failure
	err    *ToolError
}

// ToolError is a failed tool call, sent as isError: true with one text block holding this
// object as JSON (and no structuredContent). Error and Message are always set; the other
// fields belong to particular failures.
type ToolError struct {
	// Error is a stable machine-readable code ("invalid_field", "conflict", "refused", …).
	Error string `json:"error"`
	// Message is an English sentence naming the problem, for the model.
	Message string `json:"message"`
	Field   string `json:"field,omitempty"`
	// A conflict: the plan changed since the caller's base. Base is the plan's base now;
	// Changes turn the caller's base text into the current one (0-based line indexes of
	// the base text, as werkbaum_apply_ops takes them), MoreChanges counts those left out;
	// Text is the current text, only when it is small or the changes are unknown.
	Conflict    bool              `json:"conflict,omitempty"`
	Base        *plans.Base       `json:"base,omitempty"`
	Changes     []werkbaum.LineOp `json:"changes,omitempty"`
	MoreChanges int               `json:"moreChanges,omitempty"`
	Text        *string           `json:"text,omitempty"`
	// A guard refusal (and its replay): why, the warnings, the switch that would allow it.
	Refused  bool               `json:"refused,omitempty"`
	Reason   string             `json:"reason,omitempty"`
	Warnings []werkbaum.Warning `json:"warnings,omitempty"`
	Switch   string             `json:"switch,omitempty"`
	Lines    []int              `json:"lines,omitempty"`
}

// toolErrorOf is the tool failure of a refusal of the shared admission path (a field
// error, a missing grant, a full queue).
func toolErrorOf(e *Error) *ToolError {
	return &ToolError{Error: e.Code, Message: e.Message, Field: e.Field}
}

// refusedAnswer logs a refused call (tool, code, caller; never arguments, which may hold
// a whole plan) and wraps it.
func refusedAnswer(log interface {
	Info(msg string, args ...any)
}, name string, caller Caller, e *ToolError) toolAnswer {
	log.Info("tool call refused", "tool", name, "code", e.Error, "client", caller.ID, "message", truncate(e.Message, 200))
	return toolAnswer{err: e}
}

// abandonedAnswer logs a call that failed because its request was cancelled (the client
// disconnected, or the daemon is stopping) and wraps the failure, which still goes out to
// a client that is there to read it (during a stop). It is no refusal: logged as one
// ("refused … context canceled"), it sent users looking for a rule that had said no. A
// write cut off this way may still have been applied; operation_get with its request id
// tells.
func abandonedAnswer(log interface {
	Info(msg string, args ...any)
}, name string, caller Caller, e *ToolError) toolAnswer {
	log.Info("tool call abandoned: the request was cancelled (client disconnected or daemon stopping)", "tool", name, "client", caller.ID, "message", truncate(e.Message, 200))
	return toolAnswer{err: e}
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = s[:n]
	for !utf8ValidEnd(s) {
		s = s[:len(s)-1]
	}
	return s + "…"
}

// ToolAnnotations are the hints hosts use to decide how carefully to treat a tool.
// Pointers distinguish "not said" from false.
type ToolAnnotations struct {
	Title           string `json:"title,omitempty"`
	ReadOnlyHint    *bool  `json:"readOnlyHint,omitempty"`
	DestructiveHint *bool  `json:"destructiveHint,omitempty"`
	IdempotentHint  *bool  `json:"idempotentHint,omitempty"`
	OpenWorldHint   *bool  `json:"openWorldHint,omitempty"`
}

// Hint returns a pointer to b, for ToolAnnotations literals.
func Hint(b bool) *bool { return &b }

// Content is one text content block (the only kind talkd produces).
type Content struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// TextContent is a text content block.
func TextContent(text string) Content { return Content{Type: "text", Text: text} }

// jsonAppender is a result that encodes itself (as json.Marshal would) onto a buffer: the
// speak result, as it is the most frequent answer.
type jsonAppender interface {
	appendJSON(dst []byte) ([]byte, error)
}

// wholeResult is a result whose text copy is its own JSON and that encodes the whole
// tools/call result itself: the inspect view, whose encoded result (MBs for a large
// plan) is computed once per store answer and shared by later calls. The returned bytes
// must not be modified.
type wholeResult interface {
	toolResult() []byte
}

// encodeToolResult encodes a call's answer as the tools/call result object, with
// responseTail after it (endResult). A wholeResult's bytes, made once and shared, are
// returned as they are (built false); every other answer is appended to dst (built true:
// the result is dst's storage, or what append grew it to). Text and results that encode
// themselves are written without reflection; other results go through encoding/json
// (cached per type by the encoder).
func encodeToolResult(dst []byte, a toolAnswer) (result []byte, built bool, err error) {
	switch {
	case a.encodeErr != nil:
		return nil, false, a.encodeErr
	case a.built != nil:
		return a.built, true, nil // built in dst's storage by the call itself
	}
	if w, ok := a.result.(wholeResult); ok && a.err == nil {
		return w.toolResult(), false, nil
	}
	result, err = appendToolResult(dst, a)
	return result, true, err
}

// appendTextContent appends the start of a result object: its one text block.
func appendTextContent(dst []byte, text string) []byte {
	out := append(dst, `{"content":[{"type":"text","text":`...)
	out = appendJSONString(out, text)
	return append(out, `}]`...)
}

func appendToolResult(dst []byte, a toolAnswer) ([]byte, error) {
	if a.err != nil {
		body, err := json.Marshal(a.err)
		if err != nil {
			return nil, fmt.Errorf("encoding a tool error: %w", err)
		}
		out := append(dst, `{"content":[{"type":"text","text":`...)
		out = appendJSONString(out, string(body))
		return endResult(append(out, `}],"isError":true}`...)), nil
	}
	out := appendTextContent(dst, a.text)
	if a.result != nil {
		out = append(out, `,"structuredContent":`...)
		if app, ok := a.result.(jsonAppender); ok {
			var err error
			if out, err = app.appendJSON(out); err != nil {
				return nil, err
			}
		} else {
			body, err := json.Marshal(a.result)
			if err != nil {
				return nil, fmt.Errorf("encoding a tool result: %w", err)
			}
			out = append(out, body...)
		}
	}
	return endResult(append(out, '}')), nil
}
