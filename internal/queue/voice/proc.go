package voice

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// stderrLimit bounds how much of an engine's stderr is kept for error messages; an engine
// that floods stderr costs CPU for the copy but never memory.
const stderrLimit = 4 << 10

// waitDelay bounds how long output is still read after the process exited or was
// killed, so a child that escaped its group and holds a pipe cannot hold the voice lane.
const waitDelay = 2 * time.Second

// stdoutLimit bounds captured standard output (voice lists).
const stdoutLimit = 256 << 10

// procSpec describes one external process run: argv (never a shell), extra environment,
// optional stdin, and the timeout after which it is killed with its children.
type procSpec struct {
	argv    []string
	env     []string
	stdin   io.Reader
	timeout time.Duration
	// stderrFails makes any output on stderr a failure even after exit status 0, for
	// programs that report a missing audio device only there.
	stderrFails bool
}

// runProc runs one external process to completion and returns its standard output
// (bounded). The process is killed together with every process it started when the
// timeout expires or ctx is cancelled, and the error says which of the two happened.
//
// The pipes are the package's own rather than exec's: exec.Cmd.Wait would wait for a
// grandchild that inherited stdout, whereas here the leader's exit is enough — its
// process group is then killed, which closes the pipes.
func runProc(ctx context.Context, s procSpec) (string, error) {
	if len(s.argv) == 0 {
		return "", errors.New("empty command")
	}
	name := filepath.Base(s.argv[0])
	runCtx := ctx
	cancel := context.CancelFunc(func() {})
	if s.timeout > 0 {
		runCtx, cancel = context.WithTimeout(ctx, s.timeout)
	}
	defer cancel()
	if err := runCtx.Err(); err != nil {
		return "", fmt.Errorf("%s: not started: %w", name, err)
	}

	cmd := exec.Command(s.argv[0], s.argv[1:]...)
	cmd.Env = append(os.Environ(), s.env...)
	setProcessGroup(cmd)
	stdout := &boundedBuffer{max: stdoutLimit}
	stderr := &boundedBuffer{max: stderrLimit}
	var (
		parentEnds []*os.File // ours: closed when done
		childEnds  []*os.File // the child's: closed after Start
		readers    sync.WaitGroup
	)
	pipeOut := func(dst *boundedBuffer) (*os.File, error) {
		r, w, err := os.Pipe()
		if err != nil {
			return nil, err
		}
		parentEnds, childEnds = append(parentEnds, r), append(childEnds, w)
		readers.Add(1)
		go func() {
			defer readers.Done()
			_, _ = io.Copy(dst, r)
		}()
		return w, nil
	}
	closeAll := func(fs []*os.File) {
		for _, f := range fs {
			f.Close()
		}
	}
	var err error
	if cmd.Stdout, err = pipeOut(stdout); err == nil {
		cmd.Stderr, err = pipeOut(stderr)
	}
	var stdinW *os.File
	if err == nil && s.stdin != nil {
		var r *os.File
		if r, stdinW, err = os.Pipe(); err == nil {
			cmd.Stdin = r
			childEnds = append(childEnds, r)
			parentEnds = append(parentEnds, stdinW)
		}
	}
	if err == nil {
		err = cmd.Start()
	}
	closeAll(childEnds)
	if err != nil {
		closeAll(parentEnds)
		readers.Wait()
		return "", fmt.Errorf("%s: %w", name, err)
	}
	if stdinW != nil {
		// Texts are small; a process that never reads stdin gets EPIPE or is killed.
		go func() {
			_, _ = io.Copy(stdinW, s.stdin)
			stdinW.Close()
		}()
	}

	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case err = <-exited:
	case <-runCtx.Done():
		killProcessGroup(cmd, false)
		err = <-exited
	}
	// Reap whatever the engine left behind in its group, even after a clean exit: a
	// stray child must not outlive the utterance it belonged to.
	killProcessGroup(cmd, true)

	// The readers end when the last writer is gone; a child that escaped the group
	// (setsid) could hold a pipe open, so the wait is bounded.
	readDone := make(chan struct{})
	go func() { readers.Wait(); close(readDone) }()
	select {
	case <-readDone:
	case <-time.After(waitDelay):
	}
	closeAll(parentEnds)

	switch {
	case ctx.Err() != nil:
		return stdout.String(), fmt.Errorf("%s: stopped: %w", name, ctx.Err())
	case runCtx.Err() != nil && err != nil:
		return stdout.String(), fmt.Errorf("%s: killed after timeout of %s", name, s.timeout)
	case err != nil:
		if msg := stderr.summary(); msg != "" {
			return stdout.String(), fmt.Errorf("%s: %w: %s", name, err, msg)
		}
		return stdout.String(), fmt.Errorf("%s: %w", name, err)
	case s.stderrFails && stderr.summary() != "":
		return stdout.String(), fmt.Errorf("%s: exited 0 but reported: %s", name, stderr.summary())
	}
	return stdout.String(), nil
}

// boundedBuffer keeps the first max bytes written to it and counts the rest. Write never
// fails, so a chatty process is never blocked or killed by a full pipe.
type boundedBuffer struct {
	mu      sync.Mutex
	max     int
	buf     bytes.Buffer
	dropped int64
}

func (b *boundedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	room := b.max - b.buf.Len()
	if room > len(p) {
		room = len(p)
	}
	if room > 0 {
		b.buf.Write(p[:room])
	}
	b.dropped += int64(len(p) - max(room, 0))
	return len(p), nil
}

func (b *boundedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// summary is the captured text on one line, for an error message.
func (b *boundedBuffer) summary() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := strings.Join(strings.Fields(b.buf.String()), " ")
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	if b.dropped > 0 {
		s += fmt.Sprintf(" (%d more bytes not kept)", b.dropped)
	}
	return s
}
