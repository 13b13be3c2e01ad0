package voice

import (
	"context"
	"strconv"
	"strings"
	"time"
)

// espeak drives espeak-ng (or the older espeak). The text goes in on stdin, so a text
// that starts with "-" can never be taken for an option.
type espeak struct {
	bin     string
	timeout time.Duration
}

func (e *espeak) synth(ctx context.Context, r synthRequest) error {
	v := r.Voice
	if v == "" {
		v = r.Lang
	}
	argv := []string{e.bin, "-w", r.Out, "-v", v, "-b", "1", "--stdin"}
	if r.Speed > 0 {
		argv = append(argv, "-s", strconv.Itoa(r.Speed))
	}
	if _, err := runProc(ctx, procSpec{argv: argv, stdin: strings.NewReader(r.Text), timeout: e.timeout}); err != nil {
		return err
	}
	// espeak-ng exits 0 when it cannot write its file: check the output, not the status.
	return checkWAVFile(r.Out)
}

// voices parses `espeak-ng --voices`:
//
//	Pty Language       Age/Gender VoiceName          File                 Other Languages
//	 5  de              --/M      German             gmw/de
func (e *espeak) voices(ctx context.Context) ([]VoiceInfo, error) {
	out, err := runProc(ctx, procSpec{argv: []string{e.bin, "--voices"}, timeout: e.timeout})
	if err != nil {
		return nil, err
	}
	return parseEspeakVoices(out), nil
}

func parseEspeakVoices(out string) []VoiceInfo {
	var list []VoiceInfo
	for _, l := range strings.Split(out, "\n") {
		f := strings.Fields(l)
		if len(f) < 4 || f[0] == "Pty" {
			continue
		}
		g := ""
		if _, after, ok := strings.Cut(f[2], "/"); ok && after != "-" {
			g = after
		}
		list = append(list, VoiceInfo{ID: f[1], Name: strings.ReplaceAll(f[3], "_", " "), Lang: f[1], Gender: g})
	}
	return list
}
