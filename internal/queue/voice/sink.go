package voice

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"talkd/internal/queue"
)

// sink plays or keeps synthesized audio.
type sink interface {
	play(ctx context.Context, u queue.Utterance, a *audio) error
}

// nullSink discards audio: for headless machines and tests that only watch the fake log.
// Voice.Play reports the audio of a real engine sent here as not played (ErrNoPlayer); the
// fake engine's "speaking" is its log record, so it counts as spoken.
type nullSink struct{}

func (nullSink) play(context.Context, queue.Utterance, *audio) error { return nil }

// noPlayerSink is the auto sink when no player exists here: every utterance is
// synthesized and then reported as not played, so nothing claims sound it did not make.
type noPlayerSink struct{ why string }

func (n noPlayerSink) play(context.Context, queue.Utterance, *audio) error {
	return fmt.Errorf("%w: %s", queue.ErrNoPlayer, n.why)
}

// engineSink is the auto sink when no player exists but the default engine plays by
// itself (espeak-ng's own audio output): utterances of that engine are spoken by it in
// Play; audio made by any other engine has no player.
type engineSink struct {
	engine string
	why    string
}

func (e engineSink) play(context.Context, queue.Utterance, *audio) error {
	return fmt.Errorf("%w: %s", queue.ErrNoPlayer, e.why)
}

// dirSink keeps one file per utterance, named <sequence>-<id>.<ext> so that a directory
// listing shows the speaking order. The sequence continues after the highest number
// already in the directory, so restarts do not overwrite earlier recordings.
type dirSink struct {
	dir string
	mu  sync.Mutex
	seq int
}

var reSeqName = regexp.MustCompile(`^(\d{6,})-`)

func newDirSink(dir string) (*dirSink, error) {
	if dir == "" {
		return nil, errors.New(`sink "dir:" needs a path, as in dir:/tmp/talkd-wavs`)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("sink dir: %w", err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("sink dir: %w", err)
	}
	s := &dirSink{dir: dir}
	for _, e := range entries {
		if m := reSeqName.FindStringSubmatch(e.Name()); m != nil {
			if n, err := strconv.Atoi(m[1]); err == nil && n > s.seq {
				s.seq = n
			}
		}
	}
	return s, nil
}

// play moves the audio into the directory under a temporary name and renames it, so a
// file with its final name is always complete.
func (s *dirSink) play(ctx context.Context, u queue.Utterance, a *audio) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	s.seq++
	name := fmt.Sprintf("%06d-%s%s", s.seq, safeName(u.ID), audioExt(a.path))
	s.mu.Unlock()
	final := filepath.Join(s.dir, name)
	part := filepath.Join(s.dir, "."+name+".part")
	if err := os.Rename(a.path, part); err != nil {
		if err := copyFile(a.path, part); err != nil {
			os.Remove(part)
			return fmt.Errorf("sink dir: %w", err)
		}
	}
	if err := os.Rename(part, final); err != nil {
		os.Remove(part)
		return fmt.Errorf("sink dir: %w", err)
	}
	return nil
}

// safeName keeps letters, digits, '-' and '_' of an utterance id for use in a file name.
func safeName(id string) string {
	s := strings.Map(func(r rune) rune {
		if r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' {
			return r
		}
		return -1
	}, id)
	if s == "" {
		return "utterance"
	}
	return s[:min(len(s), 64)]
}

// audioExt names a file by its content, since a command engine may write MP3 or OGG.
func audioExt(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ".wav"
	}
	defer f.Close()
	head := make([]byte, 4)
	n, _ := io.ReadFull(f, head)
	h := string(head[:n])
	switch {
	case h == "OggS":
		return ".ogg"
	case h == "fLaC":
		return ".flac"
	case h == "FORM":
		return ".aiff"
	case strings.HasPrefix(h, "ID3") || n >= 2 && head[0] == 0xFF && head[1]&0xE0 == 0xE0:
		return ".mp3"
	}
	return ".wav"
}

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// playerSink plays through the audio players found on the PATH (pw-play, paplay, …), in
// the search order. A player that fails is followed by the next one found, so a PipeWire
// player without a running PipeWire does not silence a machine whose aplay works; the one
// that worked last is tried first next time.
type playerSink struct {
	players [][]string // each: player and its options; the file path is appended
	env     string     // when set, the path goes into this environment variable instead
	timeout time.Duration
	log     *slog.Logger
	first   atomic.Int32 // index of the player that worked last
}

// play runs the players until one succeeds; its timeout stretches to fit long utterances.
// When all fail, the error is short (classifyPlayFailures): ErrNoDevice when none reached
// an audio device.
func (p *playerSink) play(ctx context.Context, _ queue.Utterance, a *audio) error {
	timeout := p.timeout
	if w, err := probeWAV(a.path); err == nil {
		timeout = max(timeout, w.Duration*3/2+2*time.Second)
	}
	start := int(p.first.Load())
	var programs []string
	var errs []error
	for k := range p.players {
		i := (start + k) % len(p.players)
		argv := p.players[i]
		spec := procSpec{argv: append(append([]string{}, argv...), a.path), timeout: timeout}
		if p.env != "" {
			spec.argv, spec.env = argv, []string{p.env + "=" + a.path}
		}
		_, err := runProc(ctx, spec)
		if err == nil {
			p.first.Store(int32(i))
			return nil
		}
		if ctx.Err() != nil {
			return err
		}
		programs, errs = append(programs, argv[0]), append(errs, err)
	}
	return classifyPlayFailures(ctx, p.log, programs, errs)
}

// defaultPlayers is the search order of the auto sink per platform (documented in the
// README, "Voices and engines"). Each entry is a player with its options; the file path
// is appended. PipeWire and PulseAudio come first because they share the desktop's
// output; aplay talks to ALSA directly; sox's play and ffplay are what a machine without a
// sound server often still has.
func defaultPlayers(goos string) []string {
	list := []string{"pw-play", "pw-cat --playback", "paplay", "aplay -q", "play -q", "afplay", "ffplay -nodisp -autoexit -loglevel error"}
	switch goos {
	case "darwin":
		list = []string{"afplay", "play -q", "ffplay -nodisp -autoexit -loglevel error"}
	case "windows":
		list = nil // the built-in SoundPlayer is always there
	}
	return list
}

// playerNames are the programs of a players list without their options, for messages.
func playerNames(players []string) []string {
	out := make([]string, 0, len(players))
	for _, p := range players {
		if f := strings.Fields(p); len(f) > 0 {
			out = append(out, f[0])
		}
	}
	return out
}

// windowsPlayerScript plays a WAV with .NET's SoundPlayer; the path arrives in an
// environment variable, never inside the script.
const windowsPlayerScript = `(New-Object System.Media.SoundPlayer $env:TALKD_WAV).PlaySync()`
