//go:build unix

package voice

import (
	"os/exec"
	"syscall"
)

// setProcessGroup starts the process as the leader of a new process group, so that
// killProcessGroup reaches the children of shell scripts and wrappers too, and, where the
// kernel offers it, asks for the process to be killed when talkd dies without cleaning
// up (see setParentDeathSignal).
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	setParentDeathSignal(cmd.SysProcAttr)
}

// killProcessGroup kills the process and everything in its group. After the leader has
// exited, ESRCH (nothing left) is the normal case and not an error.
// The leader may have exited already (exited); the group is killed all the same.
func killProcessGroup(cmd *exec.Cmd, exited bool) {
	if cmd.Process == nil {
		return
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
}
