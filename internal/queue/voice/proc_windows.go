//go:build windows

package voice

import (
	"os/exec"
	"strconv"
)

// setProcessGroup needs no setup on Windows; killProcessGroup walks the tree instead.
func setProcessGroup(cmd *exec.Cmd) {}

// killProcessGroup kills the process tree with taskkill /T, since Windows has no process
// groups that a single signal reaches. Once the leader has exited its tree can no longer
// be found by parent id, and nothing is done.
func killProcessGroup(cmd *exec.Cmd, exited bool) {
	if cmd.Process == nil || exited {
		return
	}
	_ = exec.Command("taskkill", "/T", "/F", "/PID", strconv.Itoa(cmd.Process.Pid)).Run()
	_ = cmd.Process.Kill()
}
