package voice

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"talkd/internal/queue"
)

// TestClassifyPlayFailures: the players' raw messages become one short reason; only
// failures that all mean "no device" are ErrNoDevice.
func TestClassifyPlayFailures(t *testing.T) {
	alsa := errors.New("aplay: exit status 1: ALSA lib confmisc.c:855:(parse_card) cannot find card '0' ALSA lib pcm.c:2666:(snd_pcm_open_noupdate) Unknown PCM default aplay: main:831: audio open error: No such file or directory")
	pulse := errors.New("paplay: exit status 1: Connection failure: Connection refused")
	broken := errors.New("play: exit status 2: play FAIL formats: can't determine type of file `x.wav'")
	log := slog.New(slog.DiscardHandler)
	for _, c := range []struct {
		programs []string
		errs     []error
		want     string
		noDevice bool
	}{
		{[]string{"/usr/bin/aplay"}, []error{alsa}, "no audio device: aplay could not open a sound card", true},
		{[]string{"/usr/bin/paplay", "/usr/bin/aplay"}, []error{pulse, alsa}, "no audio device: paplay could not reach the sound server; aplay could not open a sound card", true},
		{[]string{"/usr/bin/aplay", "/usr/bin/play"}, []error{alsa, broken}, "player play failed: play: exit status 2: play FAIL formats: can't determine type of file `x.wav'", false},
	} {
		err := classifyPlayFailures(context.Background(), log, c.programs, c.errs)
		if err.Error() != c.want || errors.Is(err, queue.ErrNoDevice) != c.noDevice {
			t.Errorf("%v: got %q (no device %v), want %q (%v)", c.programs, err, errors.Is(err, queue.ErrNoDevice), c.want, c.noDevice)
		}
	}
}

// TestShortError: an engine's long, multi-line failure becomes one line of at most 200
// characters for the history, and still wraps the original.
func TestShortError(t *testing.T) {
	raw := errors.New("piper: exit status 1: " + strings.Repeat("onnxruntime: cannot load model für @jörg ", 20) + "\nsecond line")
	err := shortError{raw}
	if n := len([]rune(err.Error())); n > 201 || strings.Contains(err.Error(), "second line") || !errors.Is(err, raw) {
		t.Fatalf("%d characters: %q", n, err.Error())
	}
}
