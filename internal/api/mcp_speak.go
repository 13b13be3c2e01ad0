package api

import (
	"context"
	"encoding/json"

	"talkd/internal/config"
	"talkd/internal/queue"
)

// speakInputSchema mirrors SpeakRequest; additionalProperties is false because the
// admission path rejects unknown fields (a typo must not pass silently).
var speakInputSchema = map[string]any{
	"type": "object",
	"properties": map[string]any{
		"text": map[string]any{"type": "string", "minLength": 1, "maxLength": MaxTextBytes,
			"description": "What to say: one or two plain sentences. Longer texts are cut at a sentence boundary to the daemon's voice.cleanup.max_chars (default 400 characters); the result says so."},
		"priority": map[string]any{"type": "string", "enum": []string{"low", "normal", "high"}, "default": "normal",
			"description": "high is spoken before normal before low; each priority has its own rate limit."},
		"lang": map[string]any{"type": "string", "pattern": config.LangTagPattern,
			"description": "BCP-47 language of the text (de, en, fr, pt-BR, …) that the engine can speak; defaults to the daemon's configured language."},
		"voice": map[string]any{"type": "string", "maxLength": 64,
			"description": "An engine voice (as listed by talk voices); defaults to the agent's voice from [voice.agents], else the language's."},
		"rate": map[string]any{"type": "integer", "minimum": queue.MinRate, "maximum": queue.MaxRate,
			"description": "Speaking rate in words per minute; omitted = the daemon's default."},
		"pitch": map[string]any{"type": "integer", "minimum": queue.MinPitch, "maximum": queue.MaxPitch,
			"description": "Pitch, 50 = the voice's normal; not every engine takes it."},
		"volume": map[string]any{"type": "integer", "minimum": queue.MinVolume, "maximum": queue.MaxVolume,
			"description": "Volume in percent, 100 = normal."},
		"provider": map[string]any{"type": "string",
			"description": "A configured speech provider to use instead of the default; usually omitted."},
		"now": map[string]any{"type": "boolean", "default": false,
			"description": "Pass quiet hours and the rate limit (never mute). Only for what cannot wait."},
	},
	"required":             []string{"text"},
	"additionalProperties": false,
}

// speakOutputSchema describes SpeakResult, the structuredContent of a speak result.
var speakOutputSchema = map[string]any{
	"type": "object",
	"properties": map[string]any{
		"status":   map[string]any{"type": "string", "enum": []string{queue.StatusQueued, queue.StatusMuted, queue.StatusDiscarded}},
		"id":       map[string]any{"type": "string", "description": "The announcement id, when queued."},
		"position": map[string]any{"type": "integer", "description": "Place in the queue, when queued (1 = next)."},
		"reason":   map[string]any{"type": "string", "enum": []string{queue.ReasonQuietHours, queue.ReasonRateLimit}},
		"until":    map[string]any{"type": "string", "format": "date-time", "description": "End of the mute, when muted with an end."},
		"retry_after_ms": map[string]any{"type": "integer",
			"description": "When discarded by the rate limit: milliseconds until this priority passes again."},
		"window": map[string]any{"type": "string", "description": "When discarded by quiet hours: the window, e.g. 22:00-07:00."},
		"shortened_from": map[string]any{"type": "integer",
			"description": "When the text was cut to the daemon's max_chars: its length before, in characters."},
		"deferred_ms": map[string]any{"type": "integer",
			"description": "When queued under on_rate_limit = defer: milliseconds it waits for its rate-limit slot."},
		"same_as": map[string]any{"type": "string",
			"description": "When the same text of the same caller was already waiting: its id; it is spoken once."},
		"warning": map[string]any{"type": "string",
			"description": "When queued but nothing can play it (no audio player): why it will not be heard."},
		"message": map[string]any{"type": "string"},
	},
	"required": []string{"status", "message"},
}

// registerSpeak adds the speak tool. It goes through DecodeSpeakRequest and Server.Speak,
// the same admission path as POST /speak, so both doors validate, rule and answer alike.
func (m *mcpServer) registerSpeak() {
	m.reg.addTool(Tool{
		Name:  "speak",
		Title: "Speak aloud",
		Description: "Say a short announcement aloud to the user (e.g. \"tests are green\", \"deploy failed\"). " +
			"The daemon applies its laws: while muted nothing is spoken; quiet hours and the per-priority rate " +
			"limit discard announcements unless now is true. The result says queued, muted or discarded; " +
			"discarded and muted are normal outcomes, not errors.",
		InputSchema:  speakInputSchema,
		OutputSchema: speakOutputSchema,
		Annotations: ToolAnnotations{
			Title:           "Speak aloud",
			ReadOnlyHint:    Hint(false),
			DestructiveHint: Hint(false),
			IdempotentHint:  Hint(false), // every call is one more announcement
			OpenWorldHint:   Hint(false),
		},
		Call: func(ctx context.Context, caller Caller, args json.RawMessage) ToolResult {
			req, derr := DecodeSpeakRequest(args)
			if derr != nil {
				return ErrorResult(derr)
			}
			res, serr := m.s.Speak(ctx, caller, req)
			if serr != nil {
				return ErrorResult(serr)
			}
			return JSONResult(res, res.Text())
		},
	})
}
