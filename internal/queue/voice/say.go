package voice

import (
	"context"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// say drives macOS say. The text goes in on stdin (say reads it when no message is given),
// so a leading "-" is never parsed as an option.
type say struct {
	bin     string
	timeout time.Duration
	cache   voiceCache
}

func (s *say) synth(ctx context.Context, r synthRequest) error {
	v := r.Voice
	if v == "" {
		// say's default voice speaks the user's system language; pick one for the
		// utterance's language instead when the system has one.
		v = s.cache.forLang(ctx, r.Lang, s.voices)
	}
	argv := []string{s.bin, "-o", r.Out, "--file-format=WAVE", "--data-format=LEI16@22050"}
	if v != "" {
		argv = append(argv, "-v", v)
	}
	if r.Speed > 0 {
		argv = append(argv, "-r", strconv.Itoa(r.Speed))
	}
	if _, err := runProc(ctx, procSpec{argv: argv, stdin: strings.NewReader(r.Text), timeout: s.timeout}); err != nil {
		return err
	}
	return checkWAVFile(r.Out)
}

// reSayVoice matches one line of `say -v ?`: "Anna                de_DE    # Hallo! …";
// names may contain spaces and parentheses.
var reSayVoice = regexp.MustCompile(`^(.+?)\s+([a-z]{2,3}[_-][A-Za-z0-9_-]+)\s+#`)

func (s *say) voices(ctx context.Context) ([]VoiceInfo, error) {
	out, err := runProc(ctx, procSpec{argv: []string{s.bin, "-v", "?"}, timeout: s.timeout})
	if err != nil {
		return nil, err
	}
	return parseSayVoices(out), nil
}

func parseSayVoices(out string) []VoiceInfo {
	var list []VoiceInfo
	for _, l := range strings.Split(out, "\n") {
		m := reSayVoice.FindStringSubmatch(strings.TrimSpace(l))
		if m == nil {
			continue
		}
		list = append(list, VoiceInfo{ID: m[1], Name: m[1], Lang: m[2]})
	}
	return list
}
