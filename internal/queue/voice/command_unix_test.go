//go:build unix

package voice

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"talkd/internal/config"
	"talkd/internal/queue"
)

// TestCommandArgvAndStdin runs a script engine in both forms and checks what it received.
func TestCommandArgvAndStdin(t *testing.T) {
	bin := t.TempDir()
	seen := t.TempDir()
	fixture := fixtureWAV(t)
	// The script records each argument on its own line, then its stdin, then "speaks".
	writeScript(t, bin, "engine", `out="$1"; shift
for a in "$@"; do printf '%s\n' "$a"; done > "`+seen+`/args"
cat > "`+seen+`/stdin"
cp "`+fixture+`" "$out"`)
	cfg := baseConfig("argvtts", "null")
	cfg.Voices = map[string]string{"de": "thorsten"}
	cfg.Commands = []config.Command{
		{Name: "argvtts", Argv: []string{"engine", "{out}", "{text}", "{lang}", "{voice}"}},
		{Name: "stdintts", Argv: []string{"engine", "{out}", "{lang}"}, Stdin: true},
	}
	v, err := newVoice(cfg, t.TempDir(), nil, platform{goos: "linux", lookPath: pathIn(bin)})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	if !v.Has("argvtts") || !v.Has("stdintts") || v.Has("nosuch") {
		t.Fatalf("Has: providers %v", v.Info().Providers)
	}
	ctx := context.Background()

	cases := []struct {
		provider, text, lang string
		wantArgs, wantStdin  string
	}{
		{"argvtts", "Guten Morgen", "de", "Guten Morgen\nde\nthorsten\n", ""},
		{"argvtts", "-rf --help", "en", " -rf --help\nen\nen\n", ""},
		{"stdintts", "-n line one", "de", "de\n", "-n line one"},
	}
	for _, c := range cases {
		a, err := v.Prepare(ctx, queue.Utterance{ID: "u1", Text: c.text, Lang: c.lang, Provider: c.provider})
		if err != nil {
			t.Fatalf("%s %q: %v", c.provider, c.text, err)
		}
		// The sink is null: the audio was made, and Play says nobody heard it.
		if err := v.Play(ctx, queue.Utterance{ID: "u1"}, a); !errors.Is(err, queue.ErrNoPlayer) {
			t.Fatalf("play into the null sink: %v", err)
		}
		a.Close()
		args, _ := os.ReadFile(filepath.Join(seen, "args"))
		stdin, _ := os.ReadFile(filepath.Join(seen, "stdin"))
		if string(args) != c.wantArgs || string(stdin) != c.wantStdin {
			t.Errorf("%s %q: args %q stdin %q, want %q %q", c.provider, c.text, args, stdin, c.wantArgs, c.wantStdin)
		}
	}
}

// TestCommandHangingEngineKilledWithChild checks the timeout kills the engine and the
// child it started, and that the error says so.
func TestCommandHangingEngineKilledWithChild(t *testing.T) {
	bin := t.TempDir()
	pids := filepath.Join(t.TempDir(), "pids")
	writeScript(t, bin, "hang", `sleep 300 &
echo $! > "`+pids+`"
echo $$ >> "`+pids+`"
wait`)
	cfg := baseConfig("hang", "null")
	cfg.Timeout = config.Duration{Duration: 300 * time.Millisecond}
	cfg.Commands = []config.Command{{Name: "hang", Argv: []string{"hang", "{out}", "{text}"}}}
	v, err := newVoice(cfg, t.TempDir(), nil, platform{goos: "linux", lookPath: pathIn(bin)})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	_, err = v.Prepare(context.Background(), queue.Utterance{ID: "h", Text: "never spoken"})
	if err == nil || !strings.Contains(err.Error(), "killed after timeout of 300ms") {
		t.Fatalf("want a timeout error, got %v", err)
	}
	for _, pid := range readPIDs(t, pids, 2) {
		waitGone(t, pid)
	}
}

// TestCommandCancelKillsEngine checks that stop (ctx cancel) ends synthesis at once.
func TestCommandCancelKillsEngine(t *testing.T) {
	bin := t.TempDir()
	pids := filepath.Join(t.TempDir(), "pids")
	writeScript(t, bin, "hang", `sleep 300 &
echo $! > "`+pids+`"
wait`)
	cfg := baseConfig("hang", "null")
	cfg.Commands = []config.Command{{Name: "hang", Argv: []string{"hang", "{out}"}, Stdin: true}}
	v, err := newVoice(cfg, t.TempDir(), nil, platform{goos: "linux", lookPath: pathIn(bin)})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := v.Prepare(ctx, queue.Utterance{ID: "c", Text: "x"})
		done <- err
	}()
	child := readPIDs(t, pids, 1)[0]
	cancel()
	err = <-done
	if err == nil || !strings.Contains(err.Error(), "stopped") {
		t.Fatalf("want a stopped error, got %v", err)
	}
	waitGone(t, child)
}

func TestCommandOutputChecked(t *testing.T) {
	bin := t.TempDir()
	writeScript(t, bin, "silent", `exit 0`)
	writeScript(t, bin, "empty", `: > "$1"`)
	writeScript(t, bin, "badwav", `printf 'RIFFxxxxWAVEjunk' > "$1"`)
	writeScript(t, bin, "mp3", `printf 'ID3\003\000\000\000\000\000\000' > "$1"`)
	writeScript(t, bin, "fails", `echo "model file missing" >&2; exit 3`)
	cases := map[string]string{
		"silent": "wrote no output file",
		"empty":  "wrote an empty output",
		"badwav": "WAV",
		"fails":  "exit status 3: model file missing",
		"mp3":    "",
	}
	for name, want := range cases {
		t.Run(name, func(t *testing.T) {
			cfg := baseConfig(name, "dir:"+t.TempDir())
			cfg.Commands = []config.Command{{Name: name, Argv: []string{name, "{out}", "{text}"}}}
			v, err := newVoice(cfg, t.TempDir(), nil, platform{goos: "linux", lookPath: pathIn(bin)})
			if err != nil {
				t.Fatal(err)
			}
			defer v.Close()
			a, err := v.Prepare(context.Background(), queue.Utterance{ID: "x", Text: "hello"})
			if want == "" {
				if err != nil {
					t.Fatalf("non-WAV audio must pass: %v", err)
				}
				a.Close()
				return
			}
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Fatalf("want error containing %q, got %v", want, err)
			}
		})
	}
}

func TestCommandMissingBinaryIsAnError(t *testing.T) {
	cfg := baseConfig("piper", "null")
	cfg.Commands = []config.Command{{Name: "piper", Argv: []string{"piper", "--output_file", "{out}"}, Stdin: true}}
	_, err := newVoice(cfg, t.TempDir(), nil, platform{goos: "linux", lookPath: pathIn(t.TempDir())})
	if err == nil || !strings.Contains(err.Error(), `engine "piper" not found`) {
		t.Fatalf("want a clear missing-engine error, got %v", err)
	}
}
