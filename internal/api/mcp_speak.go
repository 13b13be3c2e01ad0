package api

import (
	"context"
	"encoding/json"
)

// registerSpeak adds the speak tool. It goes through DecodeSpeakRequest and Server.Speak,
// the same admission path as POST /speak, so both doors validate, rule and answer alike;
// its schemas are SpeakRequest's and SpeakResult's.
func (m *mcpServer) registerSpeak() {
	AddTool(m.s, ToolSpec[SpeakRequest, SpeakResult]{
		Name:  "speak",
		Title: "Speak aloud",
		Description: "Say a short announcement aloud (e.g. \"tests are green\"). Mute, quiet hours and rate limits " +
			"may hold it (unless now); queued, muted and discarded are normal outcomes.",
		Annotations: ToolAnnotations{
			ReadOnlyHint:    Hint(false),
			DestructiveHint: Hint(false),
			IdempotentHint:  Hint(false), // every call is one more announcement
			OpenWorldHint:   Hint(false),
		},
		Decode: decodeSpeakArgs,
		Encode: func(dst []byte, r SpeakResult) ([]byte, error) { return r.appendJSON(dst) },
		Call: func(ctx context.Context, caller Caller, req SpeakRequest, _ json.RawMessage) (SpeakResult, string, *ToolError) {
			res, serr := m.s.Speak(ctx, caller, req)
			if serr != nil {
				return SpeakResult{}, "", toolErrorOf(serr)
			}
			return res, res.Text(), nil
		},
	})
}
