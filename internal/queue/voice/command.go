package voice

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"talkd/internal/config"
)

// command is a [[voice.commands]] engine: an argv template run without a shell.
//
// Placeholders, substituted inside each argv element in one pass (so a text containing
// "{out}" stays literal): {text} the cleaned text, {lang} the language tag, {voice} the
// request's voice, else voice.agents[agent], else voice.voices[lang], else the language
// tag, {rate} words per minute (request, else voice.speed, else 175), {pitch} 1–99 (50),
// {volume} percent (100), {out} the path of the audio file to write. Without {out} the
// command plays by itself: its exit is the end of the utterance, and stop kills it.
// With stdin = true the text is also sent on standard input.
type command struct {
	name    string
	argv    []string
	stdin   bool
	timeout time.Duration
	plays   bool // no {out}: the command makes the sound itself
}

// newCommand checks a configured entry and resolves its binary; a missing binary is an
// error because the entry was configured explicitly.
func newCommand(c config.Command, timeout time.Duration, p platform) (*command, error) {
	if len(c.Argv) == 0 || c.Argv[0] == "" {
		return nil, fmt.Errorf("[[voice.commands]] %q: argv is empty", c.Name)
	}
	plays := !slices.ContainsFunc(c.Argv[1:], func(a string) bool { return strings.Contains(a, "{out}") })
	bin, err := p.lookPath(c.Argv[0])
	if err != nil {
		return nil, fmt.Errorf("[[voice.commands]] %q: engine %q not found: %w (give its full path in argv, or put its folder on talkd's PATH; a service's PATH is often shorter than your shell's)", c.Name, c.Argv[0], err)
	}
	argv := append([]string{bin}, c.Argv[1:]...)
	return &command{name: c.Name, argv: argv, stdin: c.Stdin, timeout: timeout, plays: plays}, nil
}

// expandArgv substitutes the placeholders in each element of tmpl. A text that would
// start an element with "-" gets a leading space, so that no engine can mistake spoken
// words for an option; engines ignore the space.
func expandArgv(tmpl []string, r synthRequest) []string {
	text := r.Text
	if strings.HasPrefix(text, "-") {
		text = " " + text
	}
	v := r.Voice
	if v == "" {
		v = r.Lang
	}
	rate, pitch, volume := r.Speed, r.Pitch, r.Volume
	if rate <= 0 {
		rate = defaultRate
	}
	if pitch <= 0 {
		pitch = 50
	}
	if volume <= 0 {
		volume = 100
	}
	rep := strings.NewReplacer("{text}", text, "{lang}", r.Lang, "{voice}", v, "{out}", r.Out,
		"{rate}", strconv.Itoa(rate), "{pitch}", strconv.Itoa(pitch), "{volume}", strconv.Itoa(volume))
	out := make([]string, len(tmpl))
	for i, a := range tmpl {
		out[i] = rep.Replace(a)
	}
	return out
}

// defaultRate is {rate} when neither the request nor voice.speed sets one: about the
// default of espeak-ng and most engines.
const defaultRate = 175

// speak runs a command without {out}: it plays by itself, so its exit ends the
// utterance; a cancelled ctx (stop, mute) kills it with its children.
func (c *command) speak(ctx context.Context, r synthRequest) error {
	spec := procSpec{argv: expandArgv(c.argv, r), timeout: c.timeout + utteranceTime(r.Text)}
	if c.stdin {
		spec.stdin = strings.NewReader(r.Text)
	}
	_, err := runProc(ctx, spec)
	return err
}

func (c *command) playsOnly() bool { return c.plays }

func (c *command) synth(ctx context.Context, r synthRequest) error {
	if c.plays {
		return fmt.Errorf("[[voice.commands]] %q plays by itself and writes no audio file", c.name)
	}
	spec := procSpec{argv: expandArgv(c.argv, r), timeout: c.timeout}
	if c.stdin {
		spec.stdin = strings.NewReader(r.Text)
	}
	if _, err := runProc(ctx, spec); err != nil {
		return err
	}
	return checkAudioFile(r.Out)
}

// checkAudioFile accepts any non-empty file (a command may write MP3 or OGG) but holds a
// file that claims to be WAV to the WAV check.
func checkAudioFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return errors.New("engine wrote no output file")
		}
		return fmt.Errorf("engine output: %w", err)
	}
	head := make([]byte, 4)
	n, _ := io.ReadFull(f, head)
	f.Close()
	if n == 0 {
		return errors.New("engine wrote an empty output file")
	}
	if string(head[:n]) == "RIFF" {
		return checkWAVFile(path)
	}
	return nil
}

func (c *command) voices(context.Context) ([]VoiceInfo, error) { return nil, ErrNoVoiceList }
