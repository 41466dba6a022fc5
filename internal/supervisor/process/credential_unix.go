//go:build unix

package process

import "syscall"

// Credential is the user and groups an adapter runs as: the kernel's own
// type where there is one.
type Credential = syscall.Credential
