package voice

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"
)

// synthRequest is one synthesis job for an engine: cleaned text in, audio file out.
type synthRequest struct {
	Text  string
	Lang  string // a BCP-47 tag the engine speaks
	Voice string // engine voice (request, voice.agents, voice.voices[lang]); "" = engine's choice for Lang
	Speed int    // words per minute; 0 = engine default
	// Pitch (1–99, 50 normal) and Volume (percent, 1–200) where the engine takes them; 0 = default.
	Pitch  int
	Volume int
	Out    string // path of the WAV to write (does not exist yet)
}

// provider is one speech engine.
type provider interface {
	// synth writes the audio of r.Text to r.Out, or fails. It must return promptly when
	// ctx ends, killing what it started.
	synth(ctx context.Context, r synthRequest) error
	// voices lists what the engine can speak with, where it can tell.
	voices(ctx context.Context) ([]VoiceInfo, error)
}

// selfPlayer is an engine that can make the sound itself, without a player.
type selfPlayer interface {
	// speak says r.Text aloud and returns when the utterance has ended (r.Out is unset).
	// It must return promptly when ctx ends, killing what it started.
	speak(ctx context.Context, r synthRequest) error
	// playsOnly reports an engine that cannot write audio for a sink at all.
	playsOnly() bool
}

// VoiceInfo is one voice an engine offers; ID is the value to put into voice.voices.
type VoiceInfo struct {
	ID     string `json:"id"`
	Name   string `json:"name,omitempty"`
	Lang   string `json:"lang,omitempty"`
	Gender string `json:"gender,omitempty"`
}

// ErrNoVoiceList is returned by Voices when the engine cannot list its voices.
var ErrNoVoiceList = errors.New("this provider cannot list its voices")

// lookPathFunc finds an executable; injected so tests can pretend a binary is missing.
type lookPathFunc func(string) (string, error)

// platform is what provider and sink selection depend on: the OS and the PATH.
type platform struct {
	goos     string
	lookPath lookPathFunc
}

// firstFound returns the path of the first name found on the PATH.
func (p platform) firstFound(names ...string) (string, bool) {
	for _, n := range names {
		if path, err := p.lookPath(n); err == nil {
			return path, true
		}
	}
	return "", false
}

// noEngine is the provider when auto finds nothing: every utterance fails with a clear
// message (recorded by the queue) instead of the daemon refusing to start.
type noEngine struct{ why string }

func (n noEngine) synth(context.Context, synthRequest) error { return errors.New(n.why) }
func (n noEngine) voices(context.Context) ([]VoiceInfo, error) {
	return nil, errors.New(n.why)
}

// voiceCache remembers an engine's voice list so that the voice for a language is
// looked up once, not per utterance.
type voiceCache struct {
	mu     sync.Mutex
	list   []VoiceInfo
	err    error
	loaded bool
	langs  map[string]bool // lang → spoken by a voice of list (Check)
	// failedAt is when the last load failed (get tries again after listRetry).
	failedAt time.Time
	// loading is closed when the load in flight ends (nil: none in flight).
	loading chan struct{}
}

// errListPending means the voice list is still being loaded and the caller chose not to
// wait longer for it: the request is admitted unchecked, the engine decides when it speaks.
var errListPending = errors.New("the voice list is still being loaded")

// listLoadTimeout bounds one voice-list load.
const listLoadTimeout = 10 * time.Second

// listRetry is how long a failed voice-list load is remembered before it is tried
// again, so a broken engine costs one slow request per interval, not every request.
const listRetry = 30 * time.Second

// get returns the engine's voice list, loading it on first use. The load runs on its
// own (it does not end with the request that started it, and the list serves every
// later one); get waits for it at most wait, then returns errListPending, so an engine
// slow to list its voices (speech-dispatcher starting up, or hanging) never holds up an
// admission. A failure is returned for listRetry, then tried again.
// fresh reports whether this call started the load (so a failure is logged once).
func (c *voiceCache) get(ctx context.Context, wait time.Duration, load func(context.Context) ([]VoiceInfo, error)) (list []VoiceInfo, fresh bool, err error) {
	c.mu.Lock()
	if !c.loaded && c.loading == nil && (c.failedAt.IsZero() || time.Since(c.failedAt) > listRetry) {
		fresh = true
		done := make(chan struct{})
		c.loading = done
		go func() {
			defer close(done)
			lctx, cancel := context.WithTimeout(context.Background(), listLoadTimeout)
			list, err := load(lctx)
			cancel()
			c.mu.Lock()
			defer c.mu.Unlock()
			c.list, c.err, c.loading = list, err, nil
			c.loaded = err == nil || errors.Is(err, ErrNoVoiceList)
			if !c.loaded {
				c.failedAt = time.Now()
			}
		}()
	}
	loading := c.loading
	c.mu.Unlock()
	if loading != nil {
		timer := time.NewTimer(wait)
		defer timer.Stop()
		select {
		case <-loading:
		case <-timer.C:
			return nil, false, errListPending
		case <-ctx.Done():
			return nil, false, ctx.Err()
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.list, fresh, c.err
}

// forLang returns the first voice whose language starts with lang ("de" matches
// "de_DE" and "de-CH"), or "" when none is known.
func (c *voiceCache) forLang(ctx context.Context, lang string, load func(context.Context) ([]VoiceInfo, error)) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.loaded {
		lctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		c.list, c.err = load(lctx)
		cancel()
		// A failed listing is retried next time unless ctx itself was cancelled.
		c.loaded = c.err == nil
	}
	for _, v := range c.list {
		l := strings.ToLower(v.Lang)
		if l == lang || strings.HasPrefix(l, lang+"_") || strings.HasPrefix(l, lang+"-") {
			return v.ID
		}
	}
	return ""
}
