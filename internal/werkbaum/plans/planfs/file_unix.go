//go:build unix

package planfs

import "syscall"

// openNoFollow makes an open fail on a symlink in the last path element.
const openNoFollow = syscall.O_NOFOLLOW | syscall.O_NONBLOCK

// renameOverOpenFile: a file may be renamed over while this process holds it open, so a
// write keeps the file it checked open across its rename (keepSaveInPlace).
const renameOverOpenFile = true
