package main

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"syscall"
	"testing"
)

// failingListener fails its first accepts with err, then hands out conn.
type failingListener struct {
	net.Listener
	fails int
	err   error
	conn  net.Conn
}

func (l *failingListener) Accept() (net.Conn, error) {
	if l.fails > 0 {
		l.fails--
		return nil, l.err
	}
	return l.conn, nil
}

// TestCalmListenerWaitsOutEMFILE: a lack of descriptors is waited out inside Accept with
// one log line, not handed to net/http (which logs every failed try); other errors pass.
func TestCalmListenerWaitsOutEMFILE(t *testing.T) {
	var buf bytes.Buffer
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	l := &calmListener{Listener: &failingListener{fails: 4, err: fmt.Errorf("accept4: %w", syscall.EMFILE), conn: a}, log: slog.New(slog.NewTextHandler(&buf, nil))}
	c, err := l.Accept()
	if err != nil || c != a {
		t.Fatalf("Accept after 4 EMFILE: %v %v", c, err)
	}
	if n := strings.Count(buf.String(), "no file descriptor free"); n != 1 {
		t.Errorf("%d log lines for 4 failed accepts, want 1:\n%s", n, buf.String())
	}
	closed := errors.New("use of closed network connection")
	l = &calmListener{Listener: &failingListener{fails: 1, err: closed}, log: slog.New(slog.DiscardHandler)}
	if _, err := l.Accept(); err != closed {
		t.Errorf("another error: %v, want it passed on", err)
	}
}
