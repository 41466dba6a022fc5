package main

import (
	"fmt"
	"os"
	"strconv"
	"syscall"
)

// childAttr makes a child die with halbench: a gateway left running by a
// killed benchmark would hold its ports and disturb the next run.
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}

// watcherNice is the nice value halbench's threads take while its
// watchers read the fan-out (lowerPriority): the lowest priority.
const watcherNice = 19

// lowerPriority gives every thread of halbench the lowest priority, so
// that on a machine it shares with the gateway its 250 watchers take a
// core only when neither the gateway nor the writer wants one: they stand
// for clients elsewhere on the network, whose reading costs the gateway
// nothing. Threads the runtime starts later inherit it. A thread's nice
// value may always be raised, never lowered without privilege: it lasts
// until halbench ends, which is why the fan-out comes last.
func lowerPriority() error {
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return fmt.Errorf("lower halbench's priority: %w", err)
	}
	for _, t := range tasks {
		tid, err := strconv.Atoi(t.Name())
		if err != nil {
			continue
		}
		if err := syscall.Setpriority(syscall.PRIO_PROCESS, tid, watcherNice); err != nil {
			return fmt.Errorf("lower halbench's priority: thread %d: %w", tid, err)
		}
	}
	return nil
}
