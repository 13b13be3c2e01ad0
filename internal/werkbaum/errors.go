package werkbaum

import (
	"errors"
	"fmt"
)

// Engine failures: the input may be fine, the engine could not produce an answer. Callers
// report these as server-side problems, not as the caller's mistake.
var (
	// ErrTimeout means a call ran past its deadline and was interrupted.
	ErrTimeout = errors.New("werkbaum: call exceeded its deadline")
	// ErrTooLarge means an input was over Options.MaxInputBytes; no JavaScript ran.
	ErrTooLarge = errors.New("werkbaum: input too large")
	// ErrEngine means the scripts failed unexpectedly (a bug, not bad input).
	ErrEngine = errors.New("werkbaum: engine failure")
)

// ErrBadInput matches every *InputError with errors.Is, for callers that only need to
// know whose fault a failure is.
var ErrBadInput = errors.New("werkbaum: bad input")

// InputError is the caller's mistake, reported by the notation scripts: an unknown id, a
// bad status or size, a node moved under itself, malformed line operations. Message is an
// English sentence meant to reach the agent that made the request.
type InputError struct {
	// Code is a stable machine-readable reason, e.g. "unknownId", "badStatus".
	Code string
	// Message names the problem and the offending value.
	Message string
}

func (e *InputError) Error() string { return fmt.Sprintf("werkbaum: %s", e.Message) }

// Is makes errors.Is(err, ErrBadInput) true for every InputError.
func (e *InputError) Is(target error) bool { return target == ErrBadInput }
