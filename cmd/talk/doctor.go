package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"
)

// check is one link of the chain talk doctor follows from the daemon to the ear.
type check struct {
	Name   string `json:"name"`
	Status string `json:"status"` // ok, warn, fail
	Detail string `json:"detail"`
	Fix    string `json:"fix,omitempty"` // what to install or set, when not ok
}

// Statuses of a check.
const (
	checkOK   = "ok"
	checkWarn = "warn"
	checkFail = "fail"
)

// doctorPlayers are the players talkd's auto sink looks for (internal/queue/voice
// defaultPlayers), by program name.
var doctorPlayers = []string{"pw-play", "pw-cat", "paplay", "aplay", "play", "afplay", "ffplay"}

func doctorCommand() command {
	return command{
		name: "doctor", usage: "doctor", data: true,
		summary: "check the whole voice chain (daemon, engine, voices, player, device, speech-dispatcher, service) and say what to fix",
		detail: `Each line is one link: the daemon (reachable?), the speech engine it uses, its voices,
the audio player, the audio device (what talkd saw on its last play, the sound cards and
sound server here), speech-dispatcher (does it answer within 3s?) and the service that
starts talkd at login. A link that is not ok says what to install or set. The engine,
player and speech-dispatcher links are looked up on this machine's PATH (talkd's own
PATH, e.g. under a service, may differ; its view is in the daemon link).
Exit 0 when nothing failed (warnings allowed), 1 when a link failed. --json prints
{"checks":[{"name","status","detail","fix"}…]}.`,
		define: func(fs *flag.FlagSet, a *app) func(context.Context, []string) int {
			return func(ctx context.Context, args []string) int {
				if len(args) > 0 {
					cmd, _ := findCommand("doctor")
					return a.usage(cmd, "unexpected argument %q", args[0])
				}
				checks := a.doctor(ctx)
				failed := false
				for _, c := range checks {
					failed = failed || c.Status == checkFail
				}
				if a.opts.json {
					raw, _ := json.Marshal(map[string]any{"checks": checks})
					a.printJSON(raw)
				} else {
					for _, c := range checks {
						fmt.Fprintf(a.stdout, "%-4s  %-18s %s\n", strings.ToUpper(c.Status), c.Name, c.Detail)
						if c.Fix != "" {
							fmt.Fprintf(a.stdout, "      %-18s → %s\n", "", c.Fix)
						}
					}
				}
				if failed {
					return exitFailure
				}
				return exitOK
			}
		},
	}
}

// doctor runs every check, in the order sound travels.
func (a *app) doctor(ctx context.Context) []check {
	var checks []check
	vi, reached := a.doctorDaemon(ctx, &checks)
	checks = append(checks, doctorEngine(vi, reached))
	if reached {
		checks = append(checks, a.doctorVoices(ctx))
	}
	checks = append(checks, doctorPlayer(vi, reached))
	checks = append(checks, doctorDevice(vi, reached, a.getenv))
	checks = append(checks, doctorSpeechd(ctx))
	checks = append(checks, a.doctorService())
	return checks
}

// doctorDaemon asks the daemon for its voice; it is the one that speaks, so its view
// wins over what this machine's PATH shows.
func (a *app) doctorDaemon(ctx context.Context, checks *[]check) (voiceInfo, bool) {
	var vi voiceInfo
	_, st, err := a.fetchStatus(ctx)
	if err != nil {
		var unreachable *unreachableError
		fix := "start it: talkd (or talk service install)"
		if !errors.As(err, &unreachable) {
			fix = "check --url and TALK_TOKEN"
		}
		*checks = append(*checks, check{Name: "daemon", Status: checkFail, Detail: err.Error(), Fix: fix})
		return vi, false
	}
	if err := json.Unmarshal(st.Voice, &vi); err != nil {
		*checks = append(*checks, check{Name: "daemon", Status: checkFail, Detail: "its /status has no voice: " + err.Error(), Fix: "run talk and talkd of the same version"})
		return vi, false
	}
	*checks = append(*checks, check{Name: "daemon", Status: checkOK, Detail: fmt.Sprintf("talkd %s at %s", st.Version, a.client().base)})
	return vi, true
}

func doctorEngine(vi voiceInfo, reached bool) check {
	const install = "install espeak-ng (Debian/Ubuntu: apt-get install espeak-ng; macOS has say), or set voice.provider"
	if reached {
		if vi.Provider == "none" || vi.Provider == "" {
			return check{Name: "engine", Status: checkFail, Detail: "talkd has no speech engine: " + vi.ProviderReason, Fix: install}
		}
		return check{Name: "engine", Status: checkOK, Detail: vi.Provider + " (" + vi.ProviderReason + ")"}
	}
	for _, name := range []string{"espeak-ng", "espeak", "say", "spd-say"} {
		if p, err := exec.LookPath(name); err == nil {
			return check{Name: "engine", Status: checkOK, Detail: p + " on this PATH"}
		}
	}
	return check{Name: "engine", Status: checkFail, Detail: "no speech engine on this PATH (espeak-ng, espeak, say, spd-say)", Fix: install}
}

func (a *app) doctorVoices(ctx context.Context) check {
	ans, err := a.client().do(ctx, http.MethodGet, "/voices", nil, nil)
	if err != nil {
		return check{Name: "voices", Status: checkWarn, Detail: "GET /voices: " + err.Error()}
	}
	var doc struct {
		Voices []struct {
			Lang string `json:"lang"`
		} `json:"voices"`
		Error string `json:"error"`
	}
	if err := decode(ans, "GET /voices", &doc); err != nil {
		return check{Name: "voices", Status: checkWarn, Detail: err.Error()}
	}
	switch {
	case doc.Error != "":
		return check{Name: "voices", Status: checkWarn, Detail: doc.Error, Fix: "languages are not checked against the engine; set voice.voices for yours"}
	case len(doc.Voices) == 0:
		return check{Name: "voices", Status: checkFail, Detail: "the engine lists no voice", Fix: "install the engine's voice data (Debian/Ubuntu: espeak-ng-data)"}
	}
	langs := map[string]bool{}
	for _, v := range doc.Voices {
		langs[v.Lang] = true
	}
	return check{Name: "voices", Status: checkOK, Detail: fmt.Sprintf("%d voices, %d languages (talk voices lists them)", len(doc.Voices), len(langs))}
}

func doctorPlayer(vi voiceInfo, reached bool) check {
	const install = "install a player (Debian/Ubuntu: apt-get install pipewire-bin, pulseaudio-utils, alsa-utils or sox), or set voice.players"
	var found []string
	for _, name := range doctorPlayers {
		if _, err := exec.LookPath(name); err == nil {
			found = append(found, name)
		}
	}
	if reached {
		switch vi.Sink {
		case "none":
			return check{Name: "player", Status: checkFail, Detail: "talkd found no audio player: " + vi.SinkReason, Fix: install}
		case "null":
			return check{Name: "player", Status: checkWarn, Detail: "talkd's sink is null: audio is discarded", Fix: "set voice.sink = \"auto\" (or unset TALK_SINK)"}
		}
		if strings.HasPrefix(vi.Sink, "dir:") {
			return check{Name: "player", Status: checkWarn, Detail: "talkd keeps audio as files (" + vi.Sink + "), it plays none", Fix: "set voice.sink = \"auto\" to hear it"}
		}
		return check{Name: "player", Status: checkOK, Detail: vi.Sink + " (" + vi.SinkReason + ")"}
	}
	if len(found) == 0 {
		return check{Name: "player", Status: checkFail, Detail: "no audio player on this PATH (" + strings.Join(doctorPlayers, ", ") + ")", Fix: install}
	}
	return check{Name: "player", Status: checkOK, Detail: strings.Join(found, ", ") + " on this PATH"}
}

// doctorDevice reports what talkd saw on its last play (the truth: it is what failed or
// worked), and on Linux what this machine has: sound cards and a sound server.
func doctorDevice(vi voiceInfo, reached bool, getenv func(string) string) check {
	if reached && vi.Audible != nil && !*vi.Audible && strings.HasPrefix(vi.Silent, "no audio device") {
		return check{Name: "device", Status: checkFail, Detail: "talkd's last play: " + vi.Silent,
			Fix: "connect a sound card or start the sound server (PipeWire, PulseAudio); in a container or over SSH, talkd must run where the speakers are"}
	}
	if runtime.GOOS != "linux" {
		return check{Name: "device", Status: checkOK, Detail: "no failure seen by talkd"}
	}
	var have []string
	if raw, err := os.ReadFile("/proc/asound/cards"); err == nil && !strings.Contains(string(raw), "no soundcards") && strings.TrimSpace(string(raw)) != "" {
		have = append(have, "a sound card (/proc/asound/cards)")
	}
	runDir := getenv("XDG_RUNTIME_DIR")
	for _, sock := range []string{"pipewire-0", "pulse/native"} {
		if runDir != "" && isSocket(filepath.Join(runDir, sock)) {
			have = append(have, "a sound server ("+sock+")")
		}
	}
	if len(have) == 0 {
		return check{Name: "device", Status: checkWarn, Detail: "no sound card and no sound server socket found here",
			Fix: "announcements will fail with \"no audio device\"; run talkd where the speakers are, or use voice.sink = \"dir:<path>\" to keep the audio"}
	}
	detail := strings.Join(have, ", ")
	if reached {
		detail += "; no failure seen by talkd (talk say --wait \"test\" tries it)"
	}
	return check{Name: "device", Status: checkOK, Detail: detail}
}

func isSocket(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode()&os.ModeSocket != 0
}

// doctorSpeechd asks speech-dispatcher for its voices with a short deadline: a
// speech-dispatcher that hangs is what makes its announcements fail.
func doctorSpeechd(ctx context.Context) check {
	bin, err := exec.LookPath("spd-say")
	if err != nil {
		return check{Name: "speech-dispatcher", Status: checkOK, Detail: "not installed (optional: voice.provider = \"speechd\" needs it)"}
	}
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "-L")
	cmd.WaitDelay = time.Second
	out, err := cmd.Output()
	switch {
	case ctx.Err() != nil:
		return check{Name: "speech-dispatcher", Status: checkWarn, Detail: "spd-say -L did not answer within 3s",
			Fix: "restart it (systemctl --user restart speech-dispatcher, or: killall speech-dispatcher) or do not use provider speechd"}
	case err != nil:
		return check{Name: "speech-dispatcher", Status: checkWarn, Detail: "spd-say -L failed: " + strings.TrimSpace(err.Error()),
			Fix: "start speech-dispatcher, or do not use provider speechd"}
	}
	n := max(0, len(strings.Split(strings.TrimSpace(string(out)), "\n"))-1)
	return check{Name: "speech-dispatcher", Status: checkOK, Detail: fmt.Sprintf("answers, %d voices", n)}
}

// doctorService says whether talkd starts at login.
func (a *app) doctorService() check {
	s := service{a: a, goos: runtime.GOOS}
	path, err := s.file()
	if err != nil {
		return check{Name: "service", Status: checkWarn, Detail: err.Error()}
	}
	if isFile(path) {
		return check{Name: "service", Status: checkOK, Detail: path}
	}
	// Without a systemd user session, talk service install --autostart starts talkd
	// from the desktop session instead: that counts as starting at login too.
	if s.goos == "linux" {
		if entry, err := s.autostartFile(); err == nil && isFile(entry) {
			return check{Name: "service", Status: checkOK, Detail: entry + " (XDG autostart)"}
		}
	}
	return check{Name: "service", Status: checkWarn, Detail: "talkd does not start at login (" + path + " is missing)", Fix: "talk service install"}
}
