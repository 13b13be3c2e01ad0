package voice

import (
	"context"
	"strconv"
	"strings"
	"time"
)

// sapiScript writes one utterance to a WAV through System.Speech. Every input arrives in
// an environment variable and is never spliced into the script, so no text can inject
// PowerShell.
const sapiScript = `$ErrorActionPreference = 'Stop'
Add-Type -AssemblyName System.Speech
$s = New-Object System.Speech.Synthesis.SpeechSynthesizer
try {
  if ($env:TALKD_VOICE) { $s.SelectVoice($env:TALKD_VOICE) }
  elseif ($env:TALKD_LANG) {
    try { $s.SelectVoiceByHints([System.Speech.Synthesis.VoiceGender]::NotSet, [System.Speech.Synthesis.VoiceAge]::NotSet, 0, [System.Globalization.CultureInfo]::new($env:TALKD_LANG)) } catch { }
  }
  if ($env:TALKD_RATE) { $s.Rate = [int]$env:TALKD_RATE }
  if ($env:TALKD_VOLUME) { $s.Volume = [int]$env:TALKD_VOLUME }
  $s.SetOutputToWaveFile($env:TALKD_OUT)
  $s.Speak($env:TALKD_TEXT)
} finally { $s.Dispose() }`

// sapiVoicesScript lists installed voices as "name<TAB>culture<TAB>gender" lines.
const sapiVoicesScript = `$ErrorActionPreference = 'Stop'
Add-Type -AssemblyName System.Speech
$s = New-Object System.Speech.Synthesis.SpeechSynthesizer
foreach ($v in $s.GetInstalledVoices()) { $i = $v.VoiceInfo; "{0}` + "`t" + `{1}` + "`t" + `{2}" -f $i.Name, $i.Culture.Name, $i.Gender }
$s.Dispose()`

// sapi drives the Windows speech API through powershell.exe.
type sapi struct {
	bin     string
	timeout time.Duration
}

func (s *sapi) synth(ctx context.Context, r synthRequest) error {
	env := []string{"TALKD_TEXT=" + r.Text, "TALKD_OUT=" + r.Out, "TALKD_LANG=" + r.Lang, "TALKD_VOICE=" + r.Voice}
	if r.Speed > 0 {
		env = append(env, "TALKD_RATE="+strconv.Itoa(sapiRate(r.Speed)))
	}
	if r.Volume > 0 {
		// SAPI's volume is 0–100 and cannot amplify: 100 % and above is its maximum.
		env = append(env, "TALKD_VOLUME="+strconv.Itoa(min(r.Volume, 100)))
	}
	argv := []string{s.bin, "-NoProfile", "-NonInteractive", "-Command", sapiScript}
	if _, err := runProc(ctx, procSpec{argv: argv, env: env, timeout: s.timeout}); err != nil {
		return err
	}
	return checkWAVFile(r.Out)
}

// sapiRate maps words per minute onto SAPI's -10..10 scale, where 0 is about 180 wpm and
// each step about 20 wpm.
func sapiRate(wpm int) int {
	return min(10, max(-10, (wpm-180)/20))
}

func (s *sapi) voices(ctx context.Context) ([]VoiceInfo, error) {
	out, err := runProc(ctx, procSpec{argv: []string{s.bin, "-NoProfile", "-NonInteractive", "-Command", sapiVoicesScript}, timeout: s.timeout})
	if err != nil {
		return nil, err
	}
	var list []VoiceInfo
	for _, l := range strings.Split(strings.ReplaceAll(out, "\r", ""), "\n") {
		f := strings.Split(l, "\t")
		if len(f) != 3 || f[0] == "" {
			continue
		}
		list = append(list, VoiceInfo{ID: f[0], Name: f[0], Lang: f[1], Gender: f[2]})
	}
	return list, nil
}
