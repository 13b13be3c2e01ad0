package voice

import (
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestParseWAV(t *testing.T) {
	silent := silentWAV(500*time.Millisecond, 22050)
	w, err := parseWAV(silent, true)
	if err != nil {
		t.Fatal(err)
	}
	if w.Format != 1 || w.Channels != 1 || w.SampleRate != 22050 || w.BitsPerSample != 16 {
		t.Errorf("format %+v", w)
	}
	if w.Duration != 500*time.Millisecond || w.Peak != 0 {
		t.Errorf("duration %v peak %v", w.Duration, w.Peak)
	}

	// A 440 Hz tone at half scale: peak ≈ 0.5, RMS ≈ 0.354.
	tone := silentWAV(200*time.Millisecond, 8000)
	for i := 44; i+1 < len(tone); i += 2 {
		v := int16(16384 * math.Sin(2*math.Pi*440*float64((i-44)/2)/8000))
		binary.LittleEndian.PutUint16(tone[i:], uint16(v))
	}
	w, err = parseWAV(tone, true)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(w.Peak-0.5) > 0.01 || math.Abs(w.RMS-0.354) > 0.01 {
		t.Errorf("tone peak %.3f rms %.3f", w.Peak, w.RMS)
	}

	// A streamed header (data size 0xFFFFFFFF) uses the file length.
	streamed := append([]byte(nil), silent...)
	binary.LittleEndian.PutUint32(streamed[40:], 0xFFFFFFFF)
	if w, err := parseWAV(streamed, true); err != nil || w.Duration != 500*time.Millisecond {
		t.Errorf("streamed: %v, %v", w.Duration, err)
	}

	for name, b := range map[string][]byte{
		"empty":   nil,
		"not wav": []byte("ID3 this is an mp3 file honestly"),
		"no data": silent[:36],
		"no fmt":  append([]byte("RIFF\x00\x00\x00\x00WAVE"), silent[36:]...),
	} {
		if _, err := parseWAV(b, true); err == nil {
			t.Errorf("%s: want an error", name)
		}
	}
}

// TestCheckWAVFileLongOutput: a long output passes the check from its first megabyte.
func TestCheckWAVFileLongOutput(t *testing.T) {
	path := filepath.Join(t.TempDir(), "long.wav")
	if err := os.WriteFile(path, silentWAV(60*time.Second, 22050), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := checkWAVFile(path); err != nil {
		t.Fatalf("a 60 s WAV failed the check: %v", err)
	}
	if err := os.WriteFile(path, silentWAV(60*time.Second, 22050)[:40], 0o600); err != nil {
		t.Fatal(err)
	}
	if err := checkWAVFile(path); err == nil {
		t.Fatal("a WAV cut inside its header passed the check")
	}
}

// TestProbeWAVLength: the probe reads the length of a long file from its header without
// reading the samples.
func TestProbeWAVLength(t *testing.T) {
	path := filepath.Join(t.TempDir(), "long.wav")
	if err := os.WriteFile(path, silentWAV(90*time.Second, 22050), 0o600); err != nil {
		t.Fatal(err)
	}
	w, err := probeWAV(path)
	if err != nil || w.Duration != 90*time.Second {
		t.Fatalf("probe: %+v %v", w, err)
	}
}
