package voice

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"
)

// speechd drives speech-dispatcher through spd-say, what Linux desktops already run:
// it speaks with the desktop's synthesizer and audio output, so it plays by itself.
// -w makes spd-say wait until the utterance has been spoken, so its exit is the end of
// the utterance and killing it (stop, mute) ends it; -N names talkd as the client, so
// the user's speech-dispatcher settings can tell it apart.
type speechd struct {
	bin     string
	timeout time.Duration

	mu sync.Mutex
	// downUntil: speech-dispatcher did not answer; until then announcements for it fail at
	// once (downWhy) instead of each holding the voice lane for the answer timeout.
	downUntil time.Time
	downWhy   string
}

// speechdAnswer bounds how long spd-say may take beyond the utterance itself: a
// speech-dispatcher that is running answers in well under a second, and one that hangs
// must not hold the voice lane (and every announcement behind it) for the engine timeout.
const speechdAnswer = 3 * time.Second

// speechdRetry is how long a speech-dispatcher that did not answer is not tried again.
const speechdRetry = 30 * time.Second

func (s *speechd) argv(r synthRequest) []string {
	argv := []string{s.bin, "-w", "-N", "talkd", "-l", strings.ToLower(r.Lang)}
	if r.Voice != "" {
		argv = append(argv, "-y", r.Voice)
	}
	// speech-dispatcher's scales are -100..100 with 0 as the normal value.
	if r.Speed > 0 {
		argv = append(argv, "-r", strconv.Itoa(clampSPD((r.Speed-defaultRate)*100/defaultRate)))
	}
	if r.Pitch > 0 {
		argv = append(argv, "-p", strconv.Itoa(clampSPD((r.Pitch-50)*2)))
	}
	if r.Volume > 0 {
		argv = append(argv, "-i", strconv.Itoa(clampSPD(r.Volume-100)))
	}
	// "--" ends the options, so a text starting with "-" is spoken, never parsed.
	return append(argv, "--", r.Text)
}

func clampSPD(n int) int { return min(100, max(-100, n)) }

func (s *speechd) speak(ctx context.Context, r synthRequest) error {
	if err := s.isDown(); err != nil {
		return err
	}
	_, err := runProc(ctx, procSpec{argv: s.argv(r), timeout: s.answerTimeout() + utteranceTime(r.Text)})
	s.noteAnswer(ctx, err, true)
	return err
}

// answerTimeout is speechdAnswer, or the engine timeout when that is shorter.
func (s *speechd) answerTimeout() time.Duration {
	if s.timeout > 0 && s.timeout < speechdAnswer {
		return s.timeout
	}
	return speechdAnswer
}

// isDown fails at once while a speech-dispatcher that did not answer is not tried again.
func (s *speechd) isDown() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if time.Now().Before(s.downUntil) {
		return fmt.Errorf("speech-dispatcher is not answering (%s); talkd tries it again at %s (check it with: spd-say -L, or talk doctor)",
			s.downWhy, s.downUntil.Format("15:04:05"))
	}
	return nil
}

// noteAnswer remembers a speech-dispatcher that refused the connection or (when
// timeoutMeansDown) did not finish in time, so the next announcements fail fast, and
// forgets it once spd-say succeeds. A slow voice list is no such sign: speech-dispatcher
// may still be starting its synthesizers.
func (s *speechd) noteAnswer(ctx context.Context, err error, timeoutMeansDown bool) {
	if ctx.Err() != nil {
		return // stopped or muted: says nothing about speech-dispatcher
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case err == nil:
		s.downUntil, s.downWhy = time.Time{}, ""
	case timeoutMeansDown && strings.Contains(err.Error(), "killed after timeout"):
		s.downUntil, s.downWhy = time.Now().Add(speechdRetry), "spd-say did not finish in time"
	case strings.Contains(strings.ToLower(err.Error()), "connect"):
		s.downUntil, s.downWhy = time.Now().Add(speechdRetry), "spd-say could not connect"
	}
}

func (s *speechd) playsOnly() bool { return true }

func (s *speechd) synth(context.Context, synthRequest) error {
	return errors.New("speech-dispatcher plays by itself and writes no audio file")
}

// voices parses `spd-say -L`: a header line, then "NAME LANGUAGE VARIANT" per voice.
func (s *speechd) voices(ctx context.Context) ([]VoiceInfo, error) {
	if err := s.isDown(); err != nil {
		return nil, err
	}
	out, err := runProc(ctx, procSpec{argv: []string{s.bin, "-L"}, timeout: min(s.timeout, listLoadTimeout)})
	s.noteAnswer(ctx, err, false)
	if err != nil {
		return nil, err
	}
	return parseSpeechdVoices(out), nil
}

func parseSpeechdVoices(out string) []VoiceInfo {
	var list []VoiceInfo
	for _, l := range strings.Split(out, "\n") {
		f := strings.Fields(l)
		if len(f) < 2 || strings.EqualFold(f[0], "NAME") {
			continue
		}
		list = append(list, VoiceInfo{ID: f[0], Name: f[0], Lang: f[1]})
	}
	return list
}
