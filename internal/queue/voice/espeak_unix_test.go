//go:build unix

package voice

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"talkd/internal/queue"
)

// TestEspeakExitZeroWithoutOutput covers espeak-ng's habit of exiting 0 when it could
// not write its file: the output is checked, not the status.
func TestEspeakExitZeroWithoutOutput(t *testing.T) {
	bin := t.TempDir()
	writeScript(t, bin, "espeak-ng", `cat > /dev/null; echo "Can't write to: output" >&2; exit 0`)
	v, err := newVoice(baseConfig("espeak", "null"), t.TempDir(), nil, platform{goos: "linux", lookPath: pathIn(bin)})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	_, err = v.Prepare(context.Background(), queue.Utterance{ID: "e", Text: "hello"})
	if err == nil || !strings.Contains(err.Error(), "without writing its output file") {
		t.Fatalf("want an output-check error, got %v", err)
	}

	writeScript(t, bin, "espeak-ng", `cat > /dev/null; : > "$2"`)
	_, err = v.Prepare(context.Background(), queue.Utterance{ID: "e", Text: "hello"})
	if err == nil || !strings.Contains(err.Error(), "empty output file") {
		t.Fatalf("want an empty-file error, got %v", err)
	}
}

// TestEspeakArgv checks the exact invocation: text on stdin, voice from lang or config.
func TestEspeakArgv(t *testing.T) {
	bin := t.TempDir()
	seen := t.TempDir()
	fixture := fixtureWAV(t)
	writeScript(t, bin, "espeak-ng", `printf '%s\n' "$@" > "`+seen+`/args"; cat > "`+seen+`/stdin"; cp "`+fixture+`" "$2"`)
	cfg := baseConfig("espeak", "null")
	cfg.Speed = 190
	cfg.Voices = map[string]string{"en": "en-us"}
	v, err := newVoice(cfg, t.TempDir(), nil, platform{goos: "linux", lookPath: pathIn(bin)})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	for _, c := range []struct{ lang, voice string }{{"de", "de"}, {"en", "en-us"}} {
		a, err := v.Prepare(context.Background(), queue.Utterance{ID: "e", Text: "-w /tmp/x **hi**", Lang: c.lang})
		if err != nil {
			t.Fatal(err)
		}
		a.Close()
		args, _ := os.ReadFile(filepath.Join(seen, "args"))
		stdin, _ := os.ReadFile(filepath.Join(seen, "stdin"))
		f := strings.Split(strings.TrimSpace(string(args)), "\n")
		want := []string{"-w", f[1], "-v", c.voice, "-b", "1", "--stdin", "-s", "190"}
		if strings.Join(f, " ") != strings.Join(want, " ") || !strings.HasSuffix(f[1], ".wav") {
			t.Errorf("lang %s: argv %q, want %q", c.lang, f, want)
		}
		if string(stdin) != "-w /tmp/x hi" {
			t.Errorf("stdin %q", stdin)
		}
	}
}

// TestRealEspeakGermanAndEnglish speaks through the installed espeak-ng into a dir: sink
// and checks each file is a WAV longer than 0.3 s that is not silent.
func TestRealEspeakGermanAndEnglish(t *testing.T) {
	if _, err := exec.LookPath("espeak-ng"); err != nil {
		t.Skip("espeak-ng not installed (apt-get install espeak-ng)")
	}
	out := t.TempDir()
	evil := filepath.Join(t.TempDir(), "evil.wav")
	v, err := New(baseConfig("espeak", "dir:"+out), t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	utts := []queue.Utterance{
		{ID: "de1", Lang: "de", Text: "Guten Morgen, der Build ist fertig und alle Tests sind grün."},
		{ID: "en1", Lang: "en", Text: "Good morning, the build has finished and every test passed."},
		{ID: "dash", Lang: "en", Text: "-w " + evil + " --voices must be spoken, not obeyed"},
	}
	for _, u := range utts {
		a, err := v.Prepare(context.Background(), u)
		if err != nil {
			t.Fatalf("%s: %v", u.ID, err)
		}
		if err := v.Play(context.Background(), u, a); err != nil {
			t.Fatal(err)
		}
		a.Close()
	}
	files, _ := filepath.Glob(filepath.Join(out, "*.wav"))
	if len(files) != len(utts) {
		t.Fatalf("dir has %v", files)
	}
	for i, f := range files {
		if !strings.HasSuffix(f, utts[i].ID+".wav") {
			t.Errorf("file %d is %s, want speaking order", i, f)
		}
		w, err := InspectWAV(f)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if w.Duration < 300*time.Millisecond || w.Peak < 0.05 || w.RMS < 0.005 {
			t.Errorf("%s: duration %v peak %.3f rms %.4f: too short or silent", f, w.Duration, w.Peak, w.RMS)
		}
	}
	if _, err := os.Stat(evil); err == nil {
		t.Errorf("a text starting with -w made espeak-ng write %s", evil)
	}
	// German and English differ: the same engine spoke two different texts.
	a, _ := InspectWAV(files[0])
	b, _ := InspectWAV(files[1])
	if a.DataBytes == b.DataBytes {
		t.Errorf("de and en outputs have identical length %d", a.DataBytes)
	}
	list, err := v.Voices(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var de bool
	for _, vi := range list {
		de = de || vi.ID == "de"
	}
	if !de {
		t.Errorf("espeak-ng voices lack de: %d voices", len(list))
	}
}

func TestParseEspeakVoices(t *testing.T) {
	out := `Pty Language       Age/Gender VoiceName          File                 Other Languages
 5  de              --/M      German             gmw/de
 5  en-gb           --/M      English_(Great_Britain) gmw/en               (en 2)
 5  fr-fr           --/F      French             roa/fr               (fr 5)
`
	got := parseEspeakVoices(out)
	want := []VoiceInfo{
		{ID: "de", Name: "German", Lang: "de", Gender: "M"},
		{ID: "en-gb", Name: "English (Great Britain)", Lang: "en-gb", Gender: "M"},
		{ID: "fr-fr", Name: "French", Lang: "fr-fr", Gender: "F"},
	}
	if len(got) != len(want) {
		t.Fatalf("got %+v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("%d: %+v, want %+v", i, got[i], want[i])
		}
	}
}

func TestParseSayVoices(t *testing.T) {
	out := `Alex                en_US    # Most people recognize me by my voice.
Anna                de_DE    # Hallo, ich heiße Anna.
Bad News            en_US    # The light you see at the end of the tunnel is the headlamp.
Eddy (German (Germany)) de_DE    # Hallo! Ich heiße Eddy.
`
	got := parseSayVoices(out)
	ids := []string{"Alex", "Anna", "Bad News", "Eddy (German (Germany))"}
	if len(got) != len(ids) {
		t.Fatalf("got %+v", got)
	}
	for i, id := range ids {
		if got[i].ID != id {
			t.Errorf("%d: %q, want %q", i, got[i].ID, id)
		}
	}
	var c voiceCache
	load := func(context.Context) ([]VoiceInfo, error) { return got, nil }
	if v := c.forLang(context.Background(), "de", load); v != "Anna" {
		t.Errorf("first German voice %q", v)
	}
	if v := c.forLang(context.Background(), "fr", load); v != "" {
		t.Errorf("no French voice, got %q", v)
	}
}

// TestSayArgv runs the say provider against a script: text on stdin, the first voice of
// the language chosen from `say -v ?`.
func TestSayArgv(t *testing.T) {
	bin := t.TempDir()
	seen := t.TempDir()
	fixture := fixtureWAV(t)
	writeScript(t, bin, "say", `if [ "$1" = "-v" ]; then printf 'Alex                en_US    # hi\nAnna                de_DE    # hallo\n'; exit 0; fi
printf '%s\n' "$@" > "`+seen+`/args"; cat > "`+seen+`/stdin"; cp "`+fixture+`" "$2"`)
	v, err := newVoice(baseConfig("auto", "null"), t.TempDir(), nil, platform{goos: "darwin", lookPath: pathIn(bin)})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	if i := v.Info(); i.Provider != "say" || !strings.Contains(i.ProviderReason, "auto") {
		t.Fatalf("info %+v", i)
	}
	a, err := v.Prepare(context.Background(), queue.Utterance{ID: "s", Text: "-v Alex hallo", Lang: "de"})
	if err != nil {
		t.Fatal(err)
	}
	a.Close()
	args, _ := os.ReadFile(filepath.Join(seen, "args"))
	stdin, _ := os.ReadFile(filepath.Join(seen, "stdin"))
	f := strings.Fields(string(args))
	if len(f) != 6 || f[0] != "-o" || f[4] != "-v" || f[5] != "Anna" || string(stdin) != "-v Alex hallo" {
		t.Errorf("argv %q stdin %q", f, stdin)
	}
}

// TestEspeakVoiceFiles checks that languages map to voice files only where the data
// directory named by --version has them.
func TestEspeakVoiceFiles(t *testing.T) {
	bin := t.TempDir()
	data := t.TempDir()
	if err := os.MkdirAll(filepath.Join(data, "lang", "gmw"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(data, "lang", "gmw", "de"), []byte("name German\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	writeScript(t, bin, "espeak-ng", `echo "eSpeak NG text-to-speech: 1.51  Data at: `+data+`"`)
	e := &espeak{bin: filepath.Join(bin, "espeak-ng"), timeout: 5 * time.Second}
	if got := e.voiceFor(context.Background(), "de"); got != "gmw/de" {
		t.Errorf("de → %q, want gmw/de", got)
	}
	if got := e.voiceFor(context.Background(), "en"); got != "en" {
		t.Errorf("en → %q, want en (no file in the data dir)", got)
	}
}

// TestSAPIPassesTextByEnvironment runs the sapi provider against a stand-in powershell:
// the text must arrive in TALKD_TEXT and never inside the script argument.
func TestSAPIPassesTextByEnvironment(t *testing.T) {
	bin := t.TempDir()
	seen := t.TempDir()
	fixture := fixtureWAV(t)
	writeScript(t, bin, "powershell.exe", `if [ -n "$TALKD_WAV" ]; then printf '%s' "$TALKD_WAV" > "`+seen+`/played"; exit 0; fi
printf '%s' "$TALKD_TEXT" > "`+seen+`/text"
printf '%s|%s|%s' "$TALKD_LANG" "$TALKD_VOICE" "$TALKD_RATE" > "`+seen+`/env"
printf '%s\n' "$@" > "`+seen+`/args"
cp "`+fixture+`" "$TALKD_OUT"`)
	cfg := baseConfig("auto", "auto")
	cfg.Speed = 240
	v, err := newVoice(cfg, t.TempDir(), nil, platform{goos: "windows", lookPath: pathIn(bin)})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	if i := v.Info(); i.Provider != "sapi" || i.Sink != "soundplayer" {
		t.Fatalf("info %+v", i)
	}
	text := `'); Remove-Item C:\ -Recurse; ('`
	u := queue.Utterance{ID: "w", Text: text, Lang: "de"}
	a, err := v.Prepare(context.Background(), u)
	if err != nil {
		t.Fatal(err)
	}
	if err := v.Play(context.Background(), u, a); err != nil {
		t.Fatal(err)
	}
	a.Close()
	if played, _ := os.ReadFile(filepath.Join(seen, "played")); !strings.HasSuffix(string(played), "-w.wav") {
		t.Errorf("SoundPlayer got TALKD_WAV=%q", played)
	}
	got, _ := os.ReadFile(filepath.Join(seen, "text"))
	env, _ := os.ReadFile(filepath.Join(seen, "env"))
	args, _ := os.ReadFile(filepath.Join(seen, "args"))
	if string(got) != text || string(env) != "de||3" {
		t.Errorf("text %q env %q", got, env)
	}
	if strings.Contains(string(args), "Remove-Item") || !strings.Contains(string(args), "-NoProfile") {
		t.Errorf("args %q", args)
	}
}
