// Package nodebench runs talkd's plan scripts under Node for Go benchmarks, through
// internal/werkbaum/testdata/bench/node-bench.js. The targets are ratios of goja to
// the same JavaScript under Node, measured by the engine's benchmarks and by the daemon's
// first-inspect benchmark in another package; both read Node's times through this one
// client of the script's line protocol, so they time Node the same way.
package nodebench

import (
	"bufio"
	"encoding/json"
	"io"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// Script is node-bench.js's path below the module root.
const Script = "internal/werkbaum/testdata/bench/node-bench.js"

// Answer is the times node-bench.js reports for one call, in milliseconds.
type Answer struct {
	WallMs float64 `json:"wallMs"`
	CPUMs  float64 `json:"cpuMs"`
}

// Durations returns the answer's wall and CPU time.
func (a Answer) Durations() (wall, cpu time.Duration) {
	return time.Duration(a.WallMs * 1e6), time.Duration(a.CPUMs * 1e6)
}

// Server is a node-bench.js --serve process: one request line in, one answer line out.
type Server struct {
	in  io.Writer
	out *bufio.Reader
}

// Start starts node-bench.js --serve (script) under nodeBin; the process ends with the test.
func Start(tb testing.TB, nodeBin, script string) *Server {
	tb.Helper()
	cmd := exec.Command(nodeBin, script, "--serve")
	in, err := cmd.StdinPipe()
	if err != nil {
		tb.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		tb.Fatalf("start %s: %v", script, err)
	}
	tb.Cleanup(func() {
		in.Close() // the server ends at the end of its input
		if err := cmd.Wait(); err != nil {
			tb.Errorf("node-bench.js --serve: %v: %s", err, stderr.String())
		}
	})
	return &Server{in: in, out: bufio.NewReaderSize(out, 1<<16)}
}

// Call runs op (inspect, records, path, …; node-bench.js lists them) on text in the Node
// process and returns the times it measured.
func (s *Server) Call(tb testing.TB, op, text string) (wall, cpu time.Duration) {
	tb.Helper()
	req, err := json.Marshal(struct {
		Op   string `json:"op"`
		Text string `json:"text"`
	}{op, text})
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := s.in.Write(append(req, '\n')); err != nil {
		tb.Fatalf("node-bench.js --serve: write: %v", err)
	}
	line, err := s.out.ReadBytes('\n')
	if err != nil {
		tb.Fatalf("node-bench.js --serve: read: %v", err)
	}
	var a Answer
	if err := json.Unmarshal(line, &a); err != nil || a.WallMs <= 0 {
		tb.Fatalf("node-bench.js --serve answered %q: %v", line, err)
	}
	return a.Durations()
}

// First runs the first inspect of text in a fresh Node process (its JIT cold) and returns
// its times.
func First(tb testing.TB, nodeBin, script, text string) (wall, cpu time.Duration) {
	tb.Helper()
	cmd := exec.Command(nodeBin, script, "--first")
	cmd.Stdin = strings.NewReader(text)
	out, err := cmd.Output()
	if err != nil {
		tb.Fatalf("node-bench.js --first: %v", err)
	}
	var a Answer
	if err := json.Unmarshal(out, &a); err != nil {
		tb.Fatalf("node-bench.js --first answered %q: %v", out, err)
	}
	return a.Durations()
}
