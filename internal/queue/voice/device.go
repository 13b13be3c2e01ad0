package voice

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"

	"talkd/internal/queue"
)

// deviceMarkers are what players and engines print when they cannot reach an audio device.
// They are matched case-insensitively in the failure message, so the daemon can tell a
// person "no audio device" instead of passing on 300 characters of ALSA's diagnostics.
var deviceMarkers = []struct {
	marker string
	reach  string // what the program could not do, for the short reason
}{
	{"cannot find card", "could not open a sound card"},
	{"audio open error", "could not open a sound card"},
	{"snd_pcm_open", "could not open a sound card"},
	{"unknown pcm", "could not open a sound card"},
	{"alsa lib", "could not open a sound card"},
	{"no such device", "could not open a sound card"},
	{"cannot open audio device", "could not open a sound card"},
	{"could not open audio device", "could not open a sound card"},
	{"no available audio device", "could not open a sound card"},
	{"can't open output file", "could not open a sound card"},
	{"connection refused", "could not reach the sound server"},
	{"connection failure", "could not reach the sound server"},
	{"can't connect", "could not reach the sound server"},
	{"pa_context_connect", "could not reach the sound server"},
	{"pw_context_connect", "could not reach the sound server"},
	{"host is down", "could not reach the sound server"},
}

// deviceFailure tells whether err (a failed player or engine run) means that no audio
// device could be reached, and if so returns the short reason, e.g. "aplay could not open
// a sound card".
func deviceFailure(program string, err error) (string, bool) {
	if err == nil {
		return "", false
	}
	msg := strings.ToLower(err.Error())
	for _, m := range deviceMarkers {
		if strings.Contains(msg, m.marker) {
			return filepath.Base(program) + " " + m.reach, true
		}
	}
	return "", false
}

// shortFailure is a failed run's error as one short line for the history: the program's
// raw output is for the debug log, not for a person reading talk history.
func shortFailure(err error) string { return firstLine(err.Error(), 120) }

// firstLine is s's first line, cut to limit characters.
func firstLine(s string, limit int) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if r := []rune(s); len(r) > limit {
		s = string(r[:limit]) + "…"
	}
	return s
}

// shortError is an engine's error as a person reads it in the history: its first line,
// at most 200 characters (the engine's full output is logged at debug level). It wraps
// the original, so errors.Is still sees what happened.
type shortError struct{ err error }

func (e shortError) Error() string { return firstLine(e.err.Error(), 200) }

func (e shortError) Unwrap() error { return e.err }

// classifyPlayFailures turns the failures of every player tried for one utterance into
// the error Play returns: ErrNoDevice with the short reasons when none could reach a
// device, else the first failure, shortened. The raw messages go to the debug log.
func classifyPlayFailures(ctx context.Context, log *slog.Logger, programs []string, errs []error) error {
	var devices []string
	var other error
	for i, err := range errs {
		log.DebugContext(ctx, "audio player failed", "player", programs[i], "err", err)
		if why, ok := deviceFailure(programs[i], err); ok {
			devices = append(devices, why)
		} else if other == nil {
			other = fmt.Errorf("player %s failed: %s", filepath.Base(programs[i]), shortFailure(err))
		}
	}
	if other != nil {
		return other
	}
	if len(devices) == 0 {
		return errors.New("no audio player was tried")
	}
	return fmt.Errorf("%w: %s", queue.ErrNoDevice, strings.Join(devices, "; "))
}
