package api

import (
	"errors"
	"log/slog"
	"net"
	"sync"
	"syscall"
)

// connWatcher notices a parked poll's client leaving (FIN or RST) while nothing reads its
// connection, so that the connection's descriptor is freed at once instead of when the
// poll's answer fails to reach it (up to the clamped wait later). A goroutine per poll
// blocked in a read would do the same at a few KB each, undoing what parking saves; one
// epoll instance watches every parked connection instead, for the peer's hang-up only
// (EPOLLRDHUP, and EPOLLHUP and EPOLLERR, which epoll always reports), not for data: a
// pipelining client's next request is no reason to end its poll. One goroutine waits on
// it while any connection is watched and ends (within 10 s) when none is.
type connWatcher struct {
	log *slog.Logger

	mu      sync.Mutex
	epfd    int // -1 while no goroutine waits
	next    uint64
	watched map[uint64]func()
	failed  bool // epoll could not be set up; said once in the log
}

func newConnWatcher(log *slog.Logger) *connWatcher {
	return &connWatcher{log: log, epfd: -1, watched: map[uint64]func(){}}
}

// watch calls gone (once, from the watcher's goroutine: it must be quick) when conn's
// peer hangs up. The returned unwatch forgets conn; call it before conn is closed. A
// connection that cannot be watched (not a file descriptor, no epoll) is simply not
// watched.
func (w *connWatcher) watch(conn net.Conn, gone func()) (unwatch func()) {
	sc, ok := conn.(syscall.Conn)
	if !ok {
		return func() {}
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return func() {}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.epfd < 0 {
		fd, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
		if err != nil {
			if !w.failed {
				w.failed = true
				w.log.Warn("document feed: parked polls are not watched for clients that leave", "err", err)
			}
			return func() {}
		}
		w.epfd = fd
		go w.run(fd)
	}
	w.next++
	tok := w.next
	// The token, not the descriptor, names the connection in the event: a descriptor
	// number is reused as soon as the connection is closed.
	ev := syscall.EpollEvent{Events: syscall.EPOLLRDHUP | syscall.EPOLLONESHOT, Fd: int32(uint32(tok)), Pad: int32(uint32(tok >> 32))}
	var cerr error
	if err := rc.Control(func(fd uintptr) { cerr = syscall.EpollCtl(w.epfd, syscall.EPOLL_CTL_ADD, int(fd), &ev) }); err != nil || cerr != nil {
		return func() {}
	}
	w.watched[tok] = gone
	return func() {
		w.mu.Lock()
		delete(w.watched, tok)
		w.mu.Unlock()
	}
}

// run waits for hang-ups on epfd until no connection is watched (it looks every 10 s
// while one is, so a parked poll costs no wake-up of its own), then closes epfd.
func (w *connWatcher) run(epfd int) {
	var events [64]syscall.EpollEvent
	for {
		n, err := syscall.EpollWait(epfd, events[:], 10_000)
		if err != nil && !errors.Is(err, syscall.EINTR) {
			w.log.Warn("document feed: watching parked polls failed", "err", err)
		}
		var gone []func()
		w.mu.Lock()
		for _, ev := range events[:max(n, 0)] {
			tok := uint64(uint32(ev.Fd)) | uint64(uint32(ev.Pad))<<32
			if f, ok := w.watched[tok]; ok {
				delete(w.watched, tok)
				gone = append(gone, f)
			}
		}
		done := len(w.watched) == 0 || (err != nil && !errors.Is(err, syscall.EINTR))
		if done {
			w.epfd = -1
			_ = syscall.Close(epfd)
		}
		w.mu.Unlock()
		for _, f := range gone {
			f()
		}
		if done {
			return
		}
	}
}
