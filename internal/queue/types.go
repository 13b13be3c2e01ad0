package queue

import (
	"context"
	"errors"
	"time"
)

// Utterance is one admitted announcement on its way to the voice.
type Utterance struct {
	ID       string
	Text     string
	Lang     string // a BCP-47 tag the engine speaks (checked at admission)
	Priority Priority
	Provider string // configured provider name; "" = the default provider
	Voice    string // engine voice; "" = [voice.agents] for Agent, else voice.voices[Lang]
	Prosody  Prosody
	Caller   string // client id ("local" in local mode)
	Agent    string // claimed agent name, a label only
	Enqueued time.Time
}

// Audio is a synthesized utterance waiting to be played. Close releases what it holds
// (temporary files); it is called exactly once, played or not.
type Audio interface {
	Close() error
}

// Speaker is the voice as the queue sees it. Prepare (synthesis) of the next utterance may
// run while the current one plays; Play calls never overlap. Both must return promptly
// when ctx is cancelled (stop, mute, shutdown), killing any process they started.
type Speaker interface {
	Prepare(ctx context.Context, u Utterance) (Audio, error)
	Play(ctx context.Context, u Utterance, a Audio) error
}

// ErrNoPlayer is what Speaker.Play returns (wrapped, with the reason) when the audio was
// synthesized but nothing here could play it. The queue records such an announcement as
// OutcomeSynthesized, never as spoken: a voice must not claim sound it did not make.
var ErrNoPlayer = errors.New("no audio player")

// Prosody is how an utterance is spoken, on engine-neutral scales; 0 means the engine's
// default (or voice.speed for the rate). Each engine maps what it can (README, "Voices
// and engines"); the admission checks the ranges.
type Prosody struct {
	Rate   int // words per minute, 80–450
	Pitch  int // 1–99, 50 = the voice's normal pitch
	Volume int // percent, 1–200, 100 = normal
}

// Ranges of Prosody, shared by the admission check and the engines' mapping.
const (
	MinRate, MaxRate     = 80, 450
	MinPitch, MaxPitch   = 1, 99
	MinVolume, MaxVolume = 1, 200
)

// ErrNoDevice is what Speaker.Play returns (wrapped, with a short reason a person
// understands) when every player, or the engine's own output, failed to reach an audio
// device: a machine without a sound card, a sound server that is not running. The queue
// records the announcement as failed with that reason; the voice reports itself not
// audible until a play succeeds again.
var ErrNoDevice = errors.New("no audio device")
