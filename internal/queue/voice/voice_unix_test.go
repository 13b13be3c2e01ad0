//go:build unix

package voice

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"talkd/internal/config"
	"talkd/internal/queue"
)

// TestProviderSelection covers auto per platform, explicit engines missing, and what
// Info and Has report.
func TestProviderSelection(t *testing.T) {
	withEspeak := t.TempDir()
	writeScript(t, withEspeak, "espeak-ng", "exit 0")
	withOldEspeak := t.TempDir()
	writeScript(t, withOldEspeak, "espeak", "exit 0")
	withSay := t.TempDir()
	writeScript(t, withSay, "say", "exit 0")
	writeScript(t, withSay, "espeak-ng", "exit 0")
	empty := t.TempDir()

	cases := []struct {
		name, goos, provider, path string
		wantProvider, wantReason   string
		wantProviders              []string
		wantErr                    string
	}{
		{"linux auto espeak-ng", "linux", "auto", withEspeak, "espeak", "auto: espeak is the first engine found for linux", []string{"espeak"}, ""},
		{"linux auto old espeak", "linux", "", withOldEspeak, "espeak", "auto: espeak", []string{"espeak"}, ""},
		{"darwin prefers say", "darwin", "auto", withSay, "say", "auto: say", []string{"espeak", "say"}, ""},
		{"linux ignores say", "linux", "auto", withSay, "espeak", "auto: espeak", []string{"espeak"}, ""},
		{"nothing found falls back", "linux", "auto", empty, "none", "no speech engine found for linux (tried espeak, speechd)", nil, ""},
		{"windows without powershell", "windows", "auto", empty, "none", "tried sapi, espeak", nil, ""},
		{"explicit espeak missing", "linux", "espeak", empty, "", "", nil, "neither espeak-ng nor espeak is installed"},
		{"explicit say on linux", "linux", "say", withSay, "", "", nil, "say exists on macOS only"},
		{"explicit sapi on darwin", "darwin", "sapi", withSay, "", "", nil, "sapi exists on Windows only"},
		{"fake", "linux", "fake", empty, "fake", "configured: fake", []string{"fake"}, ""},
		{"unknown", "linux", "festival", withEspeak, "", "", nil, `"festival" is not auto, espeak, say, sapi, speechd, fake`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v, err := newVoice(baseConfig(c.provider, "null"), t.TempDir(), nil, platform{goos: c.goos, lookPath: pathIn(c.path)})
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("want error %q, got %v", c.wantErr, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer v.Close()
			i := v.Info()
			if i.Provider != c.wantProvider || !strings.Contains(i.ProviderReason, c.wantReason) || !slices.Equal(i.Providers, c.wantProviders) {
				t.Errorf("info %+v", i)
			}
			for _, p := range c.wantProviders {
				if !v.Has(p) {
					t.Errorf("Has(%q) false", p)
				}
			}
			if v.Has("none") || v.Has("auto") {
				t.Error("none and auto are not request providers")
			}
		})
	}
}

// TestNoEngineFailsEachUtterance checks that auto without engine fails utterances with a
// message naming the remedy, instead of refusing to start.
func TestNoEngineFailsEachUtterance(t *testing.T) {
	v, err := newVoice(baseConfig("auto", "null"), t.TempDir(), nil, platform{goos: "linux", lookPath: pathIn(t.TempDir())})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	_, err = v.Prepare(context.Background(), queue.Utterance{ID: "x", Text: "hi"})
	if err == nil || !strings.Contains(err.Error(), "install espeak-ng") {
		t.Fatalf("got %v", err)
	}
	if _, err := v.Prepare(context.Background(), queue.Utterance{ID: "x", Text: "hi", Provider: "say"}); err == nil || !strings.Contains(err.Error(), `provider "say" is not available`) {
		t.Fatalf("got %v", err)
	}
}

func TestCommandNamesReserved(t *testing.T) {
	bin := t.TempDir()
	writeScript(t, bin, "tts", "exit 0")
	for _, name := range []string{"espeak", "fake", "auto", "none"} {
		cfg := baseConfig("auto", "null")
		cfg.Commands = []config.Command{{Name: name, Argv: []string{"tts", "{out}"}}}
		if _, err := newVoice(cfg, t.TempDir(), nil, platform{goos: "linux", lookPath: pathIn(bin)}); err == nil {
			t.Errorf("command name %q must be refused", name)
		}
	}
}

// TestAutoSink covers the player search: configured players, defaults, options, no player.
func TestAutoSink(t *testing.T) {
	bin := t.TempDir()
	seen := filepath.Join(t.TempDir(), "played")
	writeScript(t, bin, "aplay", `printf '%s\n' "$@" > "`+seen+`"`)
	writeScript(t, bin, "myplayer", `printf '%s\n' "$@" > "`+seen+`"`)

	cases := []struct {
		name    string
		players []string
		path    string
		want    string
		args    string // expected player argv after the program, file path last
	}{
		{"default order finds aplay", nil, bin, "aplay", "-q"},
		{"configured with options", []string{"nosuch", "myplayer --volume 50"}, bin, "myplayer", "--volume 50"},
		{"nothing found", []string{"nosuch"}, bin, "none", ""},
		{"no players at all", nil, t.TempDir(), "none", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			os.Remove(seen)
			cfg := baseConfig("fake", "auto")
			cfg.Players = c.players
			v, err := newVoice(cfg, t.TempDir(), nil, platform{goos: "linux", lookPath: pathIn(c.path)})
			if err != nil {
				t.Fatal(err)
			}
			defer v.Close()
			if i := v.Info(); i.Sink != c.want || !strings.HasPrefix(i.SinkReason, "auto:") {
				t.Fatalf("info %+v", i)
			}
			err = speak(t, v, context.Background(), queue.Utterance{ID: "p", Text: "hi"})
			if c.want == "none" {
				// Nothing can play: the utterance is not heard, and the error says so.
				if !errors.Is(err, queue.ErrNoPlayer) || v.Info().Audible || !strings.Contains(err.Error(), "pw-play, pw-cat, paplay") && c.players == nil {
					t.Fatalf("without a player: %v, info %+v", err, v.Info())
				}
			} else if err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(seen)
			if c.want == "none" {
				if err == nil {
					t.Error("a player ran although none was found")
				}
				return
			}
			lines := strings.Fields(string(got))
			if len(lines) == 0 || !strings.HasSuffix(lines[len(lines)-1], "-p.wav") || strings.Join(lines[:len(lines)-1], " ") != c.args {
				t.Errorf("player argv %q", lines)
			}
		})
	}
}

// TestPlayerKilledOnStop checks that stop (ctx cancel) ends playback at once.
func TestPlayerKilledOnStop(t *testing.T) {
	bin := t.TempDir()
	pids := filepath.Join(t.TempDir(), "pids")
	writeScript(t, bin, "pw-play", `sleep 300 &
echo $! > "`+pids+`"
wait`)
	v, err := newVoice(baseConfig("fake", "auto"), t.TempDir(), nil, platform{goos: "linux", lookPath: pathIn(bin)})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- speak(t, v, ctx, queue.Utterance{ID: "s", Text: "x"}) }()
	pid := readPIDs(t, pids, 1)[0]
	cancel()
	if err := <-done; err != context.Canceled {
		t.Fatalf("Play: %v", err)
	}
	waitGone(t, pid)
}

// TestDirSinkNumbersOnAcrossRestarts checks file names keep the speaking order when the
// daemon restarts with files already in the directory.
func TestDirSinkNumbersOnAcrossRestarts(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "new", "wavs")
	for _, id := range []string{"first", "second/../x"} {
		v, err := newVoice(baseConfig("fake", "dir:"+dir), t.TempDir(), nil, platform{goos: "linux", lookPath: pathIn(t.TempDir())})
		if err != nil {
			t.Fatal(err)
		}
		if err := speak(t, v, context.Background(), queue.Utterance{ID: id, Text: "x"}); err != nil {
			t.Fatal(err)
		}
		v.Close()
	}
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if !slices.Equal(names, []string{"000001-first.wav", "000002-secondx.wav"}) {
		t.Errorf("files %v", names)
	}
}

// TestAudioCloseRemovesTempFiles checks Prepare's files are gone after Close, played or not.
func TestAudioCloseRemovesTempFiles(t *testing.T) {
	v, err := newVoice(baseConfig("fake", "null"), t.TempDir(), nil, platform{goos: "linux", lookPath: pathIn(t.TempDir())})
	if err != nil {
		t.Fatal(err)
	}
	tmp := v.tmpDir
	a, err := v.Prepare(context.Background(), queue.Utterance{ID: "t", Text: "x"})
	if err != nil {
		t.Fatal(err)
	}
	path := a.(*audio).path
	if _, err := os.Stat(path); err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("audio file still there: %v", err)
	}
	v.Close()
	if _, err := os.Stat(tmp); !os.IsNotExist(err) {
		t.Errorf("temp dir still there: %v", err)
	}
}

// TestNotify checks the notifier gets title and text as separate arguments after "--",
// that Notify does not wait for it, and that Close does.
func TestNotify(t *testing.T) {
	bin := t.TempDir()
	work := t.TempDir()
	writeScript(t, bin, "notify-send", `while [ ! -f "`+work+`/release" ]; do sleep 0.01; done
printf '%s\n' "$@" > "`+work+`/args"`)
	v, err := newVoice(baseConfig("fake", "null"), t.TempDir(), nil, platform{goos: "linux", lookPath: pathIn(bin)})
	if err != nil {
		t.Fatal(err)
	}
	// The notifier waits for the release file, so this returns only if Notify never blocks.
	v.Notify("talkd: quiet hours", "-u critical build done")
	if err := os.WriteFile(filepath.Join(work, "release"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	v.Close()
	got, err := os.ReadFile(filepath.Join(work, "args"))
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != "--app-name=talkd\n--\ntalkd: quiet hours\n-u critical build done\n" {
		t.Errorf("notify-send argv %q", got)
	}
}

func TestNotifyArgvOsascript(t *testing.T) {
	argv := notifyArgv("/usr/bin/osascript", "-x title", `text "with" quotes`)
	if argv[len(argv)-2] != " -x title" || argv[len(argv)-1] != `text "with" quotes` {
		t.Errorf("argv %q", argv)
	}
	for _, a := range argv[1 : len(argv)-2] {
		if strings.Contains(a, "quotes") {
			t.Errorf("text leaked into the script: %q", a)
		}
	}
}
