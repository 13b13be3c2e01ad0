//go:build !linux

package api

import (
	"log/slog"
	"net"
)

// connWatcher notices a parked poll's client leaving on Linux (epoll); elsewhere a client
// that leaves is noticed when its answer is written, at the latest after the clamped wait.
type connWatcher struct{}

func newConnWatcher(*slog.Logger) *connWatcher { return &connWatcher{} }

func (*connWatcher) watch(net.Conn, func()) (unwatch func()) { return func() {} }
