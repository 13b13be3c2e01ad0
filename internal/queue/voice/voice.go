package voice

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"talkd/internal/config"
	"talkd/internal/queue"
)

// Built-in provider names besides the [[voice.commands]] entries.
const (
	ProviderAuto   = "auto"
	ProviderEspeak = "espeak"
	ProviderSay    = "say"
	ProviderSAPI   = "sapi"
	// ProviderSpeechd is speech-dispatcher (spd-say), which plays by itself.
	ProviderSpeechd = "speechd"
	ProviderFake    = "fake"
	// ProviderNone is reported when auto found no engine; every utterance then fails
	// with a message saying what to install.
	ProviderNone = "none"
)

// Info says which engine and sink are in use and why; GET /status shows it.
type Info struct {
	Provider       string `json:"provider"`
	ProviderReason string `json:"provider_reason"`
	Sink           string `json:"sink"`
	SinkReason     string `json:"sink_reason"`
	// Providers are the names a request's "provider" field may use here.
	Providers []string `json:"providers"`
	// Audible is false when nothing here can make sound (no speech engine, no player,
	// null sink): announcements are then not heard. Silent says why.
	Audible bool   `json:"audible"`
	Silent  string `json:"silent,omitempty"`
}

// Voice is the speech engine and audio sink of one daemon; it implements queue.Speaker.
// What the voice configuration decides (engines, sink, language, voices, speed, cleanup)
// lives in one engineSet that Reconfigure replaces as a whole, so an utterance is always
// prepared and played with one consistent set, never half old and half new.
type Voice struct {
	log      *slog.Logger
	stateDir string
	platform platform

	set atomic.Pointer[engineSet]
	// device is why the last real play could not reach an audio device (nil: it could,
	// or nothing was played yet); it makes Info and Silent say the voice is not heard.
	device atomic.Pointer[string]

	tmpDir string
	seq    atomic.Uint64

	notifier []string // argv prefix; nil = log only
	notifyWG sync.WaitGroup
	notifyMu sync.Mutex // guards closed against a Notify racing Close
	closed   bool
	sem      chan struct{}
}

// engineSet is the part of the voice made from config.Voice. It is never changed after
// buildSet returns: Reconfigure builds a new one and swaps the pointer, and an audio keeps
// the set it was prepared with, so an utterance synthesized before a reload is played by
// the sink of its own set (a new provider or sink applies from the next utterance on).
type engineSet struct {
	log          *slog.Logger
	timeout      time.Duration
	speed        int
	lang         string
	voiceFor     map[string]string
	agentVoice   map[string]string // [voice.agents]
	lists        map[string]*voiceCache
	cleanup      CleanupOptions
	fakeLog      string
	fakeDuration time.Duration
	now          func() time.Time

	defName   string
	providers map[string]provider
	info      Info
	sink      sink
}

var _ queue.Speaker = (*Voice)(nil)

// reservedNames cannot name a [[voice.commands]] entry.
var reservedNames = []string{ProviderAuto, ProviderEspeak, ProviderSay, ProviderSAPI, ProviderSpeechd, ProviderFake, ProviderNone}

// New builds the voice from the validated configuration. An engine or sink that is named
// explicitly but cannot work here (binary missing, wrong platform) is an error, so a
// daemon never starts mute by surprise; "auto" falls back with a log line instead.
func New(cfg config.Voice, stateDir string, log *slog.Logger) (*Voice, error) {
	return newVoice(cfg, stateDir, log, platform{goos: runtime.GOOS, lookPath: exec.LookPath})
}

func newVoice(cfg config.Voice, stateDir string, log *slog.Logger, p platform) (*Voice, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	set, err := buildSet(cfg, stateDir, log, p)
	if err != nil {
		return nil, err
	}
	v := &Voice{log: log, stateDir: stateDir, platform: p, sem: make(chan struct{}, 4)}
	v.set.Store(set)
	v.setupNotifier(p)
	dir, err := os.MkdirTemp("", "talkd-voice-")
	if err != nil {
		return nil, fmt.Errorf("voice: temporary directory: %w", err)
	}
	v.tmpDir = dir
	v.log.Info("voice ready", "provider", set.info.Provider, "why", set.info.ProviderReason, "sink", set.info.Sink, "sink_why", set.info.SinkReason)
	return v, nil
}

// Validate builds the voice of cfg as New does, without starting it, and reports what it
// would use: talkd --check-config calls it, so it fails exactly where the start would
// (an engine not found, a reserved name, a sink that cannot work here).
func Validate(cfg config.Voice, stateDir string) (Info, error) {
	set, err := buildSet(cfg, stateDir, slog.New(slog.DiscardHandler), platform{goos: runtime.GOOS, lookPath: exec.LookPath})
	if err != nil {
		return Info{}, err
	}
	return set.info, nil
}

// Reconfigure replaces the engines, sink and speaking defaults with those of cfg (a
// configuration reload). The new set is built and checked completely first: on an error
// the voice keeps its old set and the error says why. Utterances prepared before the swap
// are played as prepared; every utterance prepared afterwards uses the new set.
func (v *Voice) Reconfigure(cfg config.Voice) error {
	commit, err := v.Stage(cfg)
	if err != nil {
		return err
	}
	commit()
	return nil
}

// Stage is Reconfigure in two steps: it builds and checks the set of cfg without using
// it, and commit swaps it in. The daemon's reload stages every part that can fail before
// it commits any, so an error anywhere applies nothing.
func (v *Voice) Stage(cfg config.Voice) (commit func(), err error) {
	set, err := buildSet(cfg, v.stateDir, v.log, v.platform)
	if err != nil {
		return nil, err
	}
	return func() {
		v.set.Store(set)
		v.device.Store(nil) // new players or engines: the next play tells again
		v.log.Info("voice reconfigured", "provider", set.info.Provider, "why", set.info.ProviderReason, "sink", set.info.Sink, "sink_why", set.info.SinkReason)
	}, nil
}

// buildSet makes an engineSet from the validated configuration. An engine or sink that is
// named explicitly but cannot work here is an error; "auto" falls back with a log line.
func buildSet(cfg config.Voice, stateDir string, log *slog.Logger, p platform) (*engineSet, error) {
	v := &engineSet{
		log:          log,
		timeout:      cfg.Timeout.Duration,
		speed:        cfg.Speed,
		lang:         cfg.Lang,
		voiceFor:     cfg.Voices,
		agentVoice:   cfg.Agents,
		lists:        map[string]*voiceCache{},
		cleanup:      CleanupOptions{URLs: cfg.Cleanup.URLsOn(), Markdown: cfg.Cleanup.MarkdownOn(), MaxChars: cfg.Cleanup.Limit()},
		fakeLog:      cfg.FakeLogPath(stateDir),
		fakeDuration: cfg.FakeDuration.Duration,
		now:          time.Now,
		providers:    map[string]provider{},
	}
	if v.timeout <= 0 {
		v.timeout = config.DefaultVoiceTimeout
	}
	if v.fakeDuration <= 0 {
		v.fakeDuration = config.DefaultFakeDuration
	}
	if v.lang == "" {
		v.lang = config.DefaultLang
	}
	if err := v.setupProviders(cfg, p); err != nil {
		return nil, err
	}
	if err := v.setupSink(cfg, p); err != nil {
		return nil, err
	}
	if v.lang != "de" && v.lang != "en" {
		// A default language the engine cannot speak would fail every announcement.
		if _, err := v.check(context.Background(), v.defName, v.lang, ""); err != nil {
			return nil, fmt.Errorf("voice.lang: %w", err)
		}
	}
	v.info.Silent = v.Silent("")
	v.info.Audible = v.info.Silent == ""
	return v, nil
}

// builtin resolves a built-in engine on this platform, or says why it is unavailable.
func (v *engineSet) builtin(name string, p platform) (provider, error) {
	switch name {
	case ProviderFake:
		return fake{}, nil
	case ProviderEspeak:
		if bin, ok := p.firstFound("espeak-ng", "espeak"); ok {
			return &espeak{bin: bin, timeout: v.timeout}, nil
		}
		return nil, errors.New("neither espeak-ng nor espeak is installed (Debian/Ubuntu: apt-get install espeak-ng)")
	case ProviderSay:
		if p.goos != "darwin" {
			return nil, errors.New("say exists on macOS only")
		}
		if bin, ok := p.firstFound("say"); ok {
			return &say{bin: bin, timeout: v.timeout}, nil
		}
		return nil, errors.New("say was not found on the PATH")
	case ProviderSAPI:
		if p.goos != "windows" {
			return nil, errors.New("sapi exists on Windows only")
		}
		if bin, ok := p.firstFound("powershell.exe", "powershell", "pwsh.exe"); ok {
			return &sapi{bin: bin, timeout: v.timeout}, nil
		}
		return nil, errors.New("powershell was not found on the PATH")
	case ProviderSpeechd:
		if bin, ok := p.firstFound("spd-say"); ok {
			return &speechd{bin: bin, timeout: v.timeout}, nil
		}
		return nil, errors.New("spd-say was not found on the PATH (Debian/Ubuntu: apt-get install speech-dispatcher)")
	}
	return nil, fmt.Errorf("%q is not a built-in provider", name)
}

// autoOrder is the engine preference of auto per platform.
func autoOrder(goos string) []string {
	switch goos {
	case "darwin":
		return []string{ProviderSay, ProviderEspeak}
	case "windows":
		return []string{ProviderSAPI, ProviderEspeak}
	}
	return []string{ProviderEspeak, ProviderSpeechd}
}

func (v *engineSet) setupProviders(cfg config.Voice, p platform) error {
	for _, c := range cfg.Commands {
		if slices.Contains(reservedNames, c.Name) {
			return fmt.Errorf("[[voice.commands]] %q: the name is taken by a built-in provider", c.Name)
		}
		if _, dup := v.providers[c.Name]; dup {
			return fmt.Errorf("[[voice.commands]] %q: defined twice", c.Name)
		}
		cmd, err := newCommand(c, v.timeout, p)
		if err != nil {
			return err
		}
		v.providers[c.Name] = cmd
	}
	// Built-in engines found here may be chosen per request even when not the default.
	for _, name := range []string{ProviderEspeak, ProviderSay, ProviderSAPI, ProviderSpeechd} {
		if e, err := v.builtin(name, p); err == nil {
			v.providers[name] = e
		}
	}

	name := cfg.Provider
	if name == "" {
		name = ProviderAuto
	}
	switch {
	case name == ProviderAuto:
		var tried []string
		for _, n := range autoOrder(p.goos) {
			if e, ok := v.providers[n]; ok && e != nil {
				v.defName = n
				v.info.ProviderReason = fmt.Sprintf("auto: %s is the first engine found for %s", n, p.goos)
				break
			}
			tried = append(tried, n)
		}
		if v.defName == "" {
			v.defName = ProviderNone
			why := fmt.Sprintf("auto: no speech engine found for %s (tried %s); install espeak-ng or set voice.provider", p.goos, strings.Join(tried, ", "))
			v.providers[ProviderNone] = noEngine{why: why}
			v.info.ProviderReason = why
			v.log.Warn("no speech engine found; announcements will fail until one is installed", "tried", tried)
		}
	case name == ProviderFake:
		v.providers[ProviderFake] = fake{}
		v.defName, v.info.ProviderReason = ProviderFake, "configured: fake (tests; no audio engine)"
	case name == ProviderEspeak || name == ProviderSay || name == ProviderSAPI || name == ProviderSpeechd:
		if _, ok := v.providers[name]; !ok {
			_, err := v.builtin(name, p)
			return fmt.Errorf("provider %q: %w", name, err)
		}
		v.defName, v.info.ProviderReason = name, "configured: "+name
	default:
		if _, ok := v.providers[name]; !ok {
			return fmt.Errorf("provider %q is not auto, espeak, say, sapi, speechd, fake or a [[voice.commands]] name", name)
		}
		v.defName, v.info.ProviderReason = name, "configured: [[voice.commands]] "+name
	}
	v.info.Provider = v.defName
	v.info.Providers = []string{} // a list, empty when no engine is found (JSON [], not null)
	for n := range v.providers {
		v.lists[n] = &voiceCache{}
		if n != ProviderNone {
			v.info.Providers = append(v.info.Providers, n)
		}
	}
	slices.Sort(v.info.Providers)
	return nil
}

func (v *engineSet) setupSink(cfg config.Voice, p platform) error {
	s := cfg.Sink
	switch {
	case s == "null":
		v.sink, v.info.Sink, v.info.SinkReason = nullSink{}, "null", "configured: null (audio discarded)"
	case strings.HasPrefix(s, "dir:"):
		dir := strings.TrimSpace(strings.TrimPrefix(s, "dir:"))
		ds, err := newDirSink(dir)
		if err != nil {
			return err
		}
		v.sink, v.info.Sink, v.info.SinkReason = ds, "dir:"+dir, "configured: one file per utterance"
	case s == "" || s == "auto":
		players := cfg.Players
		if len(players) == 0 {
			players = defaultPlayers(p.goos)
		}
		var found [][]string
		var foundNames []string
		for _, entry := range players {
			if argv, ok := resolvePlayer(entry, p); ok {
				found, foundNames = append(found, argv), append(foundNames, filepath.Base(argv[0]))
			}
		}
		if len(found) > 0 {
			v.sink = &playerSink{players: found, timeout: v.timeout, log: v.log}
			v.info.Sink = foundNames[0]
			v.info.SinkReason = "auto: first player found: " + found[0][0]
			if len(found) > 1 {
				v.info.SinkReason += "; when it fails: " + strings.Join(foundNames[1:], ", ")
			}
			return nil
		}
		if p.goos == "windows" {
			if bin, ok := p.firstFound("powershell.exe", "powershell"); ok {
				v.sink = &playerSink{players: [][]string{{bin, "-NoProfile", "-NonInteractive", "-Command", windowsPlayerScript}}, env: "TALKD_WAV", timeout: v.timeout, log: v.log}
				v.info.Sink, v.info.SinkReason = "soundplayer", "auto: Windows SoundPlayer through powershell"
				return nil
			}
		}
		names := strings.Join(playerNames(players), ", ")
		if e, ok := v.providers[v.defName].(*espeak); ok && v.defName == ProviderEspeak {
			// espeak-ng can play by itself; it is the last resort because it bypasses
			// the sound server's choice less gracefully than the players above.
			v.sink, v.info.Sink = engineSink{engine: ProviderEspeak, why: "no audio player found (tried " + names + "); only espeak-ng's own output is available, which plays espeak's utterances only"}, filepath.Base(e.bin)
			v.info.SinkReason = fmt.Sprintf("auto: no audio player found (tried %s); %s plays through its own audio output", names, filepath.Base(e.bin))
			v.log.Warn("no audio player found; espeak-ng plays through its own audio output", "tried", names)
			return nil
		}
		why := fmt.Sprintf("no audio player found (tried %s); install one (e.g. sox or pipewire) or set voice.players", names)
		v.sink, v.info.Sink = noPlayerSink{why: why}, "none"
		v.info.SinkReason = "auto: " + why + "; announcements are synthesized, not heard"
		v.log.Warn("no audio player found; announcements are synthesized but not played", "tried", names)
	default:
		return fmt.Errorf("sink %q is not auto, null or dir:<path>", s)
	}
	return nil
}

// resolvePlayer turns a players entry into argv: the whole entry when it names a program
// (a path may contain spaces), else its first word as the program and the rest as options.
func resolvePlayer(entry string, p platform) ([]string, bool) {
	if path, err := p.lookPath(entry); err == nil {
		return []string{path}, true
	}
	f := strings.Fields(entry)
	if len(f) == 0 {
		return nil, false
	}
	path, err := p.lookPath(f[0])
	if err != nil {
		return nil, false
	}
	return append([]string{path}, f[1:]...), true
}

// audio is a synthesized utterance: a file in the voice's temporary directory.
type audio struct {
	set      *engineSet // the set that prepared it, which also plays it
	path     string
	provider string
	spoken   string
	lang     string
	fake     bool
	// self is set for an engine that plays by itself (no file): Play runs it with req.
	self selfPlayer
	req  synthRequest
	once sync.Once
}

// Close removes the audio file unless a dir: sink has already taken it.
func (a *audio) Close() error {
	var err error
	a.once.Do(func() {
		if a.path == "" {
			return
		}
		if rerr := os.Remove(a.path); rerr != nil && !errors.Is(rerr, os.ErrNotExist) {
			err = fmt.Errorf("voice: remove audio: %w", rerr)
		}
	})
	return err
}

// Prepare cleans the text and synthesizes it with the utterance's provider (the default
// when unset). It may run while the previous utterance plays.
func (v *Voice) Prepare(ctx context.Context, u queue.Utterance) (queue.Audio, error) {
	set := v.set.Load()
	name := u.Provider
	if name == "" {
		name = set.defName
	}
	e, ok := set.providers[name]
	if !ok {
		return nil, fmt.Errorf("provider %q is not available here (have %s)", name, strings.Join(set.info.Providers, ", "))
	}
	lang := u.Lang
	if lang == "" {
		lang = set.lang
	}
	spoken := Clean(u.Text, set.cleanup)
	if spoken == "" {
		spoken = strings.TrimSpace(u.Text)
	}
	a := &audio{
		set:      set,
		path:     filepath.Join(v.tmpDir, fmt.Sprintf("%06d-%s.wav", v.seq.Add(1), safeName(u.ID))),
		provider: name,
		spoken:   spoken,
		lang:     lang,
		fake:     name == ProviderFake,
	}
	r := synthRequest{Text: spoken, Lang: lang, Voice: set.voiceName(u, lang), Speed: set.speed,
		Pitch: u.Prosody.Pitch, Volume: u.Prosody.Volume, Out: a.path}
	if u.Prosody.Rate > 0 {
		r.Speed = u.Prosody.Rate
	}
	if sp, ok := set.playsItself(name, e); ok {
		// Nothing to synthesize ahead: the engine makes the sound in Play.
		a.path, a.self, a.req = "", sp, r
		a.req.Out = ""
		return a, nil
	}
	if err := e.synth(ctx, r); err != nil {
		a.Close()
		v.log.DebugContext(ctx, "synthesis failed", "provider", name, "err", err)
		return nil, fmt.Errorf("provider %q: %w", name, shortError{err})
	}
	return a, nil
}

// Play sends prepared audio to the sink. The queue never calls it concurrently; it returns
// promptly when ctx ends, killing the player.
func (v *Voice) Play(ctx context.Context, u queue.Utterance, qa queue.Audio) error {
	a, ok := qa.(*audio)
	if !ok {
		return fmt.Errorf("voice: cannot play audio of type %T", qa)
	}
	if a.fake {
		return a.set.playFake(ctx, u, a)
	}
	if a.self != nil {
		err := a.self.speak(ctx, a.req)
		if err != nil && ctx.Err() == nil {
			// runProc's errors start with the program's name.
			program, _, _ := strings.Cut(err.Error(), ":")
			v.log.DebugContext(ctx, "engine failed", "engine", program, "err", err)
			if why, ok := deviceFailure(program, err); ok {
				err = fmt.Errorf("%w: %s", queue.ErrNoDevice, why)
			} else {
				err = shortError{err}
			}
		}
		v.noteDevice(err)
		return err
	}
	switch a.set.sink.(type) {
	case nullSink:
		if err := ctx.Err(); err != nil {
			return err
		}
		return fmt.Errorf("%w: the sink is null", queue.ErrNoPlayer)
	case *playerSink:
		err := a.set.sink.play(ctx, u, a)
		if ctx.Err() == nil {
			v.noteDevice(err)
		}
		return err
	}
	return a.set.sink.play(ctx, u, a)
}

// noteDevice keeps what the last real play found out about the audio device: a failure
// to reach one makes the voice not audible (Info, Silent) from then on, a successful play
// makes it audible again. Each change is logged once.
func (v *Voice) noteDevice(err error) {
	switch {
	case err == nil:
		if old := v.device.Swap(nil); old != nil {
			v.log.Info("audio device reachable again", "was", *old)
		}
	case errors.Is(err, queue.ErrNoDevice):
		why := err.Error()
		if old := v.device.Swap(&why); old == nil || *old != why {
			v.log.Warn("announcements are not heard", "why", why)
		}
	}
}

// deviceProblem is the reason no audio device could be reached by the last play, or "".
func (v *Voice) deviceProblem() string {
	if p := v.device.Load(); p != nil {
		return *p
	}
	return ""
}

// voiceName is the engine voice of u: the request's own, else the agent's from
// [voice.agents], else the language's from [voice.voices], a regional tag falling back
// to its language ("" = the engine's choice).
func (v *engineSet) voiceName(u queue.Utterance, lang string) string {
	if u.Voice != "" {
		return u.Voice
	}
	if name, ok := v.agentVoice[u.Agent]; ok && u.Agent != "" {
		return name
	}
	if name, ok := v.voiceFor[lang]; ok {
		return name
	}
	// A regional tag (de-AT) uses the voice configured for its language (de).
	if base, _, ok := strings.Cut(lang, "-"); ok {
		return v.voiceFor[base]
	}
	return ""
}

// playsItself reports whether the utterance's engine makes the sound itself instead of
// writing audio for the sink: an engine that can do nothing else (speech-dispatcher, a
// command without {out}), or espeak-ng when its own output is the sink.
func (v *engineSet) playsItself(name string, e provider) (selfPlayer, bool) {
	sp, ok := e.(selfPlayer)
	if !ok {
		return nil, false
	}
	if sp.playsOnly() {
		return sp, true
	}
	if es, ok := v.sink.(engineSink); ok && es.engine == name {
		return sp, true
	}
	return nil, false
}

// Info reports the engine and sink in use and why they were chosen.
func (v *Voice) Info() Info {
	set := v.set.Load()
	i := set.info
	i.Providers = slices.Clone(set.info.Providers)
	if why := v.deviceProblem(); why != "" && i.Audible && set.defName != ProviderFake {
		i.Audible, i.Silent = false, why
	}
	return i
}

// Silent says why an utterance of provider ("" = the default) will not be heard here
// ("" when it will): no speech engine, no audio player, or a null sink behind a real
// engine. An engine that plays by itself needs no player.
func (v *Voice) Silent(provider string) string {
	set := v.set.Load()
	if why := set.Silent(provider); why != "" {
		return why
	}
	if provider == "" {
		provider = set.defName
	}
	if provider != ProviderFake {
		return v.deviceProblem()
	}
	return ""
}

// Silent is Voice.Silent for this set.
func (v *engineSet) Silent(provider string) string {
	if provider == "" {
		provider = v.defName
	}
	e, ok := v.providers[provider]
	if !ok {
		return "" // unknown names are refused at admission
	}
	if none, ok := e.(noEngine); ok {
		// No engine makes no sound either: /status must not call this daemon audible,
		// and an admitted announcement must not look as if it will be heard.
		return none.why
	}
	if _, ok := v.playsItself(provider, e); ok {
		return ""
	}
	switch s := v.sink.(type) {
	case noPlayerSink:
		return s.why
	case engineSink:
		return s.why
	case nullSink:
		if provider != ProviderFake { // the fake engine's record is its sound
			return "the sink is null: audio is discarded"
		}
	}
	return ""
}

// Has reports whether a request may name provider here.
func (v *Voice) Has(provider string) bool {
	return slices.Contains(v.set.Load().info.Providers, provider)
}

// Voices lists the voices of the default engine, where the engine can tell; command
// engines cannot (ErrNoVoiceList).
func (v *Voice) Voices(ctx context.Context) ([]VoiceInfo, error) {
	set := v.set.Load()
	list, err := set.providers[set.defName].voices(ctx)
	if err != nil {
		return nil, fmt.Errorf("provider %q: %w", set.defName, err)
	}
	return list, nil
}

// Close waits (bounded by the notification timeout) for desktop notifications in flight
// and removes the temporary directory.
func (v *Voice) Close() error {
	v.notifyMu.Lock()
	v.closed = true
	v.notifyMu.Unlock()
	v.notifyWG.Wait()
	if err := os.RemoveAll(v.tmpDir); err != nil {
		return fmt.Errorf("voice: %w", err)
	}
	return nil
}
