//go:build !unix && !windows

package voice

import "os/exec"

// setProcessGroup relies on exec's default kill on platforms without process groups.
func setProcessGroup(cmd *exec.Cmd) {}

// killProcessGroup kills the process itself on platforms without process groups.
func killProcessGroup(cmd *exec.Cmd, exited bool) {
	if cmd.Process != nil && !exited {
		_ = cmd.Process.Kill()
	}
}
