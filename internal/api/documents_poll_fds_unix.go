//go:build unix

package api

import "syscall"

// pollDescriptorBudget is how many polls may be parked so that a quarter of the process's
// file descriptor limit stays free for everything else: /healthz, writes (the plan file,
// its temp file, the state database), /mcp, git, the speech engines, and the connections
// of polls being refused. The Go runtime has raised the soft limit to the hard one at
// start; 0 means no bound is known.
func pollDescriptorBudget() int {
	var l syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l); err != nil || l.Cur == 0 || l.Cur > 1<<30 {
		return 0
	}
	return int(l.Cur - l.Cur/4)
}
