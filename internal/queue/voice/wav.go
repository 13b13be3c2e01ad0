package voice

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"time"
)

// WAVInfo describes a WAV file well enough to tell whether an engine really produced
// speech: its format, its length and how loud it gets.
type WAVInfo struct {
	Format        int // 1 PCM, 3 IEEE float (WAVE_FORMAT_EXTENSIBLE resolved to its subformat)
	Channels      int
	SampleRate    int
	BitsPerSample int
	DataBytes     int64
	Duration      time.Duration
	// Peak and RMS are the largest and the root-mean-square sample magnitude, scaled to
	// 0..1; -1 when the sample format is not decoded.
	Peak float64
	RMS  float64

	dataOffset   int   // where the data chunk's samples start in the file
	dataDeclared int64 // the data chunk's size as its header states it (0 when streamed)
}

// InspectWAV reads and decodes a WAV file. Engines that stream their output (a data size
// of 0 or 0xFFFFFFFF in the header) are handled by trusting the file length instead.
func InspectWAV(path string) (WAVInfo, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return WAVInfo{}, err
	}
	return parseWAV(b, true)
}

// parseWAV walks the RIFF chunks of b; see InspectWAV. Without withLevels the samples are
// not decoded (Peak and RMS stay 0).
func parseWAV(b []byte, withLevels bool) (WAVInfo, error) {
	var w WAVInfo
	if len(b) < 12 || string(b[0:4]) != "RIFF" || string(b[8:12]) != "WAVE" {
		return w, errors.New("not a WAV file (no RIFF/WAVE header)")
	}
	le := binary.LittleEndian
	var data []byte
	haveFmt := false
	for off := 12; off+8 <= len(b); {
		id := string(b[off : off+4])
		size := int64(le.Uint32(b[off+4 : off+8]))
		body := off + 8
		end := int64(body) + size
		if id == "data" && (size == 0 || end > int64(len(b))) {
			end = int64(len(b)) // streamed or truncated header: use what is there
		}
		if end > int64(len(b)) {
			return w, fmt.Errorf("WAV chunk %q is truncated", id)
		}
		switch id {
		case "fmt ":
			if size < 16 {
				return w, errors.New("WAV fmt chunk too short")
			}
			f := b[body:end]
			w.Format = int(le.Uint16(f[0:2]))
			w.Channels = int(le.Uint16(f[2:4]))
			w.SampleRate = int(le.Uint32(f[4:8]))
			w.BitsPerSample = int(le.Uint16(f[14:16]))
			if w.Format == 0xFFFE && size >= 26 {
				w.Format = int(le.Uint16(f[24:26]))
			}
			haveFmt = true
		case "data":
			data = b[body:end]
			w.dataOffset = body
			if size != 0 && size != 0xFFFFFFFF {
				w.dataDeclared = size
			}
		}
		off = int(end + end%2) // chunks are word aligned
		if data != nil && haveFmt {
			break
		}
	}
	if !haveFmt {
		return w, errors.New("WAV has no fmt chunk")
	}
	if data == nil {
		return w, errors.New("WAV has no data chunk")
	}
	if w.Channels <= 0 || w.SampleRate <= 0 || w.BitsPerSample <= 0 {
		return w, fmt.Errorf("WAV format invalid (%d channels, %d Hz, %d bits)", w.Channels, w.SampleRate, w.BitsPerSample)
	}
	w.DataBytes = int64(len(data))
	w.Duration = durationOf(w, w.DataBytes)
	if withLevels {
		w.Peak, w.RMS = levels(w, data)
	}
	return w, nil
}

// durationOf is how long n bytes of w's samples play.
func durationOf(w WAVInfo, n int64) time.Duration {
	frame := int64(w.Channels * ((w.BitsPerSample + 7) / 8))
	return time.Duration(float64(n/frame) / float64(w.SampleRate) * float64(time.Second))
}

// levels decodes PCM 8/16/24/32-bit and 32-bit float samples; other formats report -1.
func levels(w WAVInfo, data []byte) (peak, rms float64) {
	bytesPer := (w.BitsPerSample + 7) / 8
	var sample func([]byte) float64
	switch {
	case w.Format == 1 && bytesPer == 1:
		sample = func(p []byte) float64 { return (float64(p[0]) - 128) / 128 }
	case w.Format == 1 && bytesPer == 2:
		sample = func(p []byte) float64 { return float64(int16(binary.LittleEndian.Uint16(p))) / 32768 }
	case w.Format == 1 && bytesPer == 3:
		sample = func(p []byte) float64 {
			v := int32(uint32(p[0])<<8|uint32(p[1])<<16|uint32(p[2])<<24) >> 8
			return float64(v) / (1 << 23)
		}
	case w.Format == 1 && bytesPer == 4:
		sample = func(p []byte) float64 { return float64(int32(binary.LittleEndian.Uint32(p))) / (1 << 31) }
	case w.Format == 3 && bytesPer == 4:
		sample = func(p []byte) float64 { return float64(math.Float32frombits(binary.LittleEndian.Uint32(p))) }
	default:
		return -1, -1
	}
	var sum float64
	n := 0
	for i := 0; i+bytesPer <= len(data); i += bytesPer {
		v := math.Abs(sample(data[i : i+bytesPer]))
		peak = math.Max(peak, v)
		sum += v * v
		n++
	}
	if n == 0 {
		return 0, 0
	}
	return peak, math.Sqrt(sum / float64(n))
}

// silentWAV returns a mono 16-bit PCM WAV of d of silence: the fake engine's "speech".
func silentWAV(d time.Duration, rate int) []byte {
	frames := int(d.Seconds() * float64(rate))
	dataLen := frames * 2
	b := make([]byte, 44+dataLen)
	le := binary.LittleEndian
	copy(b[0:], "RIFF")
	le.PutUint32(b[4:], uint32(36+dataLen))
	copy(b[8:], "WAVE")
	copy(b[12:], "fmt ")
	le.PutUint32(b[16:], 16)
	le.PutUint16(b[20:], 1) // PCM
	le.PutUint16(b[22:], 1) // mono
	le.PutUint32(b[24:], uint32(rate))
	le.PutUint32(b[28:], uint32(rate*2))
	le.PutUint16(b[32:], 2)
	le.PutUint16(b[34:], 16)
	copy(b[36:], "data")
	le.PutUint32(b[40:], uint32(dataLen))
	return b
}

// wavCheckBytes is how much of an engine's output the check and the probe read.
const wavCheckBytes = 1 << 20

// probeWAV reads a WAV's format and length from its first megabyte, without decoding
// samples: what the output check and the player's timeout need, at a bounded cost
// whatever the engine wrote.
func probeWAV(path string) (WAVInfo, error) {
	f, err := os.Open(path)
	if err != nil {
		return WAVInfo{}, err
	}
	defer f.Close()
	head, err := io.ReadAll(io.LimitReader(f, wavCheckBytes))
	if err != nil {
		return WAVInfo{}, err
	}
	w, err := parseWAV(head, false)
	if err != nil {
		return w, err
	}
	if w.dataOffset > 0 {
		if st, err := f.Stat(); err == nil {
			onDisk := st.Size() - int64(w.dataOffset)
			if w.dataDeclared > 0 && w.dataDeclared < onDisk {
				onDisk = w.dataDeclared
			}
			w.DataBytes = onDisk
			w.Duration = durationOf(w, onDisk)
		}
	}
	return w, nil
}

// checkWAVFile is the output check of the built-in engines: the file must exist and be a
// WAV with audio in it. espeak-ng, for one, exits 0 when it could not write its file.
func checkWAVFile(path string) error {
	st, err := os.Stat(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return errors.New("engine exited without writing its output file")
		}
		return fmt.Errorf("engine output: %w", err)
	}
	if st.Size() == 0 {
		return errors.New("engine wrote an empty output file")
	}
	// The header and the start of the data tell whether the engine wrote audio; reading a
	// long (or runaway) output whole would only cost memory on every utterance.
	w, err := probeWAV(path)
	if err != nil {
		return fmt.Errorf("engine output: %w", err)
	}
	if w.DataBytes == 0 {
		return errors.New("engine wrote a WAV without audio")
	}
	return nil
}
