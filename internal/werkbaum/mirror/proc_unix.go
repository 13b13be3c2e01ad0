//go:build unix

package mirror

import (
	"os/exec"
	"syscall"
)

// ownGroup starts git as the leader of a new process group and makes the timeout kill
// the whole group, so a hook that hangs (and whatever it started) ends with git.
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		if cmd.Process == nil {
			return nil
		}
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
