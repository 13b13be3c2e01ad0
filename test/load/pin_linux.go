package main

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"syscall"
	"unsafe"
)

// pinSelf confines every thread of this process to cpu (threads started later inherit
// it) and sets GOMAXPROCS to 1 to match, so the generator stays off the servers' core.
func pinSelf(cpu int) error {
	if runtime.NumCPU() < 2 || cpu >= 1024 {
		return fmt.Errorf("-pin needs 2 CPUs (this machine has %d)", runtime.NumCPU())
	}
	var mask [1024 / 64]uint64
	mask[cpu/64] = 1 << (cpu % 64)
	runtime.GOMAXPROCS(1)
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return fmt.Errorf("list own threads: %w", err)
	}
	for _, t := range tasks {
		tid, err := strconv.Atoi(t.Name())
		if err != nil {
			continue
		}
		_, _, errno := syscall.RawSyscall(syscall.SYS_SCHED_SETAFFINITY, uintptr(tid), unsafe.Sizeof(mask), uintptr(unsafe.Pointer(&mask)))
		if errno != 0 && errno != syscall.ESRCH { // ESRCH: the thread has exited meanwhile
			return fmt.Errorf("pin thread %d to CPU %d: %w", tid, cpu, errno)
		}
	}
	return nil
}
