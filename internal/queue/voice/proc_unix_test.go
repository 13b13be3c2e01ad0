//go:build unix

package voice

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestRunProcStderrFloodBounded checks that an engine flooding stderr neither blocks nor
// bloats the error message.
func TestRunProcStderrFloodBounded(t *testing.T) {
	bin := t.TempDir()
	flood := writeScript(t, bin, "flood", `i=0
while [ $i -lt 2000 ]; do echo "error line $i: the quick brown fox jumps over the lazy dog again and again" >&2; i=$((i+1)); done
exit 2`)
	_, err := runProc(context.Background(), procSpec{argv: []string{flood}, timeout: 10 * time.Second})
	if err == nil {
		t.Fatal("want an error for exit status 2")
	}
	msg := err.Error()
	if !strings.Contains(msg, "exit status 2") || !strings.Contains(msg, "error line 0") || !strings.Contains(msg, "more bytes not kept") {
		t.Errorf("error should name the status, the first stderr and the cut: %q", msg)
	}
	if len(msg) > 500 {
		t.Errorf("error message is %d bytes, want it bounded", len(msg))
	}
}

func TestBoundedBufferKeepsHead(t *testing.T) {
	b := &boundedBuffer{max: 8}
	for _, s := range []string{"abc", "defgh", "ijk"} {
		if n, err := b.Write([]byte(s)); n != len(s) || err != nil {
			t.Fatalf("Write(%q) = %d, %v", s, n, err)
		}
	}
	if b.String() != "abcdefgh" || b.dropped != 3 {
		t.Errorf("kept %q, dropped %d", b.String(), b.dropped)
	}
}

// TestRunProcGrandchildHoldingPipe checks that an engine whose background child keeps
// stdout open does not hold the caller past the wait delay, and the child is reaped.
func TestRunProcGrandchildHoldingPipe(t *testing.T) {
	bin := t.TempDir()
	pids := bin + "/pids"
	s := writeScript(t, bin, "leaky", `sleep 300 &
echo $! > "`+pids+`"
exit 0`)
	if _, err := runProc(context.Background(), procSpec{argv: []string{s}, timeout: 10 * time.Second}); err != nil {
		t.Fatalf("clean exit must not fail: %v", err)
	}
	waitGone(t, readPIDs(t, pids, 1)[0])
}
