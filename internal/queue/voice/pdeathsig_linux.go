package voice

import "syscall"

// setParentDeathSignal makes the kernel SIGKILL the engine or player when talkd dies,
// also by SIGKILL or a crash, when no Close can kill its process group: without it an
// engine started just before would run on, orphaned, until it ended by itself.
//
// Linux sends the signal when the thread that started the child exits, not the whole
// process. Go's runtime keeps its threads for the life of the process; the one exception
// is a goroutine that ends while locked with runtime.LockOSThread, whose thread is
// destroyed. Processes are started from ordinary, unlocked goroutines here, so no
// LockOSThread is needed (it would, on the contrary, make the thread end with the
// goroutine and kill the child early). The signal reaches the started process only, not
// its children: an engine that is a shell script leaves its own children to their end
// (they are reparented); engines and players started directly are covered.
func setParentDeathSignal(attr *syscall.SysProcAttr) {
	attr.Pdeathsig = syscall.SIGKILL
}
