package main

import (
	"errors"
	"log/slog"
	"net"
	"syscall"
	"time"
)

// calmListener waits out a lack of file descriptors in Accept itself, saying so at most
// once a second. net/http's Serve does wait too, but logs every failed accept: a flood of
// connections against the descriptor limit wrote ~10,000 "too many open files" lines.
// A connection not accepted yet waits in the kernel's queue and is accepted as soon as a
// descriptor is free (an answered poll, a refused one, a finished request).
type calmListener struct {
	net.Listener
	log *slog.Logger

	// Accept is called from Serve's one goroutine: no lock.
	lastSaid time.Time
	unsaid   int // failed accepts since the last line
}

// Accept returns the next connection, or any error but a lack of descriptors.
func (l *calmListener) Accept() (net.Conn, error) {
	delay := 5 * time.Millisecond
	for {
		c, err := l.Listener.Accept()
		if err == nil || !(errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE)) {
			return c, err
		}
		l.unsaid++
		if now := time.Now(); now.Sub(l.lastSaid) >= time.Second {
			l.log.Warn("talkd has no file descriptor free for a new connection; it waits for one (raise ulimit -n, or lower server.max_parked_polls)",
				"failed_accepts", l.unsaid, "err", err)
			l.lastSaid, l.unsaid = now, 0
		}
		time.Sleep(delay)
		delay = min(2*delay, 100*time.Millisecond)
	}
}
