package mirror

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"
)

// git runs git commands in one folder with argv (no shell), a timeout per call, and an
// environment that lets the user's configuration, hooks and signing apply but never a
// repository location inherited from whoever started the daemon.
type git struct {
	bin     string
	dir     string
	timeout time.Duration
}

// inheritedRepoVars would point git at another repository or index than the plan's.
var inheritedRepoVars = []string{
	"GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_PREFIX", "GIT_OBJECT_DIRECTORY",
	"GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_COMMON_DIR", "GIT_NAMESPACE",
}

func gitEnv() []string {
	env := os.Environ()
	out := env[:0:0]
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		drop := false
		for _, v := range inheritedRepoVars {
			if name == v {
				drop = true
				break
			}
		}
		if !drop {
			out = append(out, kv)
		}
	}
	// No prompt may wait for a terminal the daemon does not have.
	return append(out, "GIT_TERMINAL_PROMPT=0")
}

// gitError is a failed git call with what git said.
type gitError struct {
	args   []string
	err    error
	stderr string
}

func (e *gitError) Error() string {
	msg := strings.TrimSpace(e.stderr)
	if msg == "" {
		msg = e.err.Error()
	}
	// Keep the report to the lines that say what went wrong; hooks can be chatty.
	lines := strings.Split(msg, "\n")
	if len(lines) > 4 {
		lines = append(lines[:4], "…")
	}
	return fmt.Sprintf("git %s: %s", e.args[0], clip(strings.Join(lines, " / "), 400))
}

func (e *gitError) Unwrap() error { return e.err }

// run executes git with args, feeding stdin, and returns its standard output.
func (g git) run(ctx context.Context, stdin []byte, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, g.timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, g.bin, args...)
	cmd.Dir = g.dir
	cmd.Env = gitEnv()
	ownGroup(cmd)
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	// A hook that leaves a child holding the pipes must not hold us past the timeout.
	cmd.WaitDelay = 2 * time.Second
	err := cmd.Run()
	if err != nil {
		if ctx.Err() != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
			err = fmt.Errorf("timed out after %s: %w", g.timeout, err)
			return nil, &gitError{args: args, err: err, stderr: "timed out after " + g.timeout.String()}
		}
		return nil, &gitError{args: args, err: err, stderr: stderr.String()}
	}
	return stdout.Bytes(), nil
}
