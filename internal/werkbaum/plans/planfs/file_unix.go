//go:build unix

package planfs

import "syscall"

// openNoFollow makes an open fail on a symlink in the last path element.
const openNoFollow = syscall.O_NOFOLLOW | syscall.O_NONBLOCK
