//go:build unix && !linux

package voice

import "syscall"

// setParentDeathSignal does nothing where the kernel has no parent-death signal that Go
// exposes portably (macOS, the BSDs): an engine orphaned by a crash of talkd runs to its
// own end there.
func setParentDeathSignal(*syscall.SysProcAttr) {}
