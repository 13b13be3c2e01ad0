package voice

import (
	"context"
	"errors"
	"strconv"
	"strings"
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
}

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
	_, err := runProc(ctx, procSpec{argv: s.argv(r), timeout: s.timeout + utteranceTime(r.Text)})
	return err
}

func (s *speechd) playsOnly() bool { return true }

func (s *speechd) synth(context.Context, synthRequest) error {
	return errors.New("speech-dispatcher plays by itself and writes no audio file")
}

// voices parses `spd-say -L`: a header line, then "NAME LANGUAGE VARIANT" per voice.
func (s *speechd) voices(ctx context.Context) ([]VoiceInfo, error) {
	out, err := runProc(ctx, procSpec{argv: []string{s.bin, "-L"}, timeout: s.timeout})
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
