package voice

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

// espeak drives espeak-ng (or the older espeak). The text goes in on stdin, so a text
// that starts with "-" can never be taken for an option.
type espeak struct {
	bin     string
	timeout time.Duration

	filesOnce sync.Once
	files     map[string]string // lang → voice file, where the data directory has it
}

// langFiles are the voice files espeak-ng ≥ 1.50 resolves "de" and "en" to. Naming the
// file directly gives the same voice and skips the scan of all ~400 voice files that a
// language name costs on every run (about 15 % of espeak-ng's CPU time per utterance).
var langFiles = map[string]string{"de": "gmw/de", "en": "gmw/en"}

// reDataDir finds the data directory in `espeak-ng --version`:
// "eSpeak NG text-to-speech: 1.51  Data at: /usr/lib/x86_64-linux-gnu/espeak-ng-data".
var reDataDir = regexp.MustCompile(`Data at: (.+)`)

// voiceFor is the -v argument for a language without a configured voice: the voice file
// when this installation has it, else the language code.
func (e *espeak) voiceFor(ctx context.Context, lang string) string {
	e.filesOnce.Do(func() {
		e.files = map[string]string{}
		out, err := runProc(context.WithoutCancel(ctx), procSpec{argv: []string{e.bin, "--version"}, timeout: min(e.timeout, 5*time.Second)})
		m := reDataDir.FindStringSubmatch(out)
		if err != nil || m == nil {
			return
		}
		dir := strings.TrimSpace(m[1])
		for l, f := range langFiles {
			if st, err := os.Stat(filepath.Join(dir, "lang", filepath.FromSlash(f))); err == nil && st.Mode().IsRegular() {
				e.files[l] = f
			}
		}
	})
	if f, ok := e.files[lang]; ok {
		return f
	}
	return lang
}

// args are espeak-ng's options for r, without the output: -w FILE for a sink, none for
// its own audio output.
func (e *espeak) args(ctx context.Context, r synthRequest) []string {
	v := r.Voice
	if v == "" {
		v = e.voiceFor(ctx, r.Lang)
	}
	argv := []string{"-v", v, "-b", "1", "--stdin"}
	if r.Speed > 0 {
		argv = append(argv, "-s", strconv.Itoa(r.Speed))
	}
	if r.Pitch > 0 {
		argv = append(argv, "-p", strconv.Itoa(r.Pitch)) // espeak-ng: 0–99, 50 default
	}
	if r.Volume > 0 {
		argv = append(argv, "-a", strconv.Itoa(r.Volume)) // espeak-ng: amplitude 0–200, 100 default
	}
	return argv
}

func (e *espeak) synth(ctx context.Context, r synthRequest) error {
	argv := append([]string{e.bin, "-w", r.Out}, e.args(ctx, r)...)
	if _, err := runProc(ctx, procSpec{argv: argv, stdin: strings.NewReader(r.Text), timeout: e.timeout}); err != nil {
		return err
	}
	// espeak-ng exits 0 when it cannot write its file: check the output, not the status.
	return checkWAVFile(r.Out)
}

// speak plays through espeak-ng's own audio output. espeak-ng exits 0 even when it
// found no audio device (it only prints the sound library's errors), so anything it
// writes on stderr counts as a failure: silence is never reported as spoken.
func (e *espeak) speak(ctx context.Context, r synthRequest) error {
	argv := append([]string{e.bin}, e.args(ctx, r)...)
	_, err := runProc(ctx, procSpec{argv: argv, stdin: strings.NewReader(r.Text), timeout: e.timeout + utteranceTime(r.Text), stderrFails: true})
	return err
}

func (e *espeak) playsOnly() bool { return false }

// utteranceTime is a generous bound of how long text takes to say (at 80 words per
// minute), added to the timeout of an engine that plays by itself.
func utteranceTime(text string) time.Duration {
	return time.Duration(len(strings.Fields(text))) * 750 * time.Millisecond
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
