//go:build !linux

package main

import "syscall"

// childAttr: only Linux can tie a child's life to its parent's; elsewhere
// halbench relies on stopping its children itself. (The resource figures
// need Linux's /proc anyway.)
func childAttr() *syscall.SysProcAttr { return nil }
