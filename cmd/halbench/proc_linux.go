package main

import "syscall"

// childAttr makes a child die with halbench: a gateway left running by a
// killed benchmark would hold its ports and disturb the next run.
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
