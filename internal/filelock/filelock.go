// Package filelock takes advisory whole-file locks that other processes
// see: flock(2) on Unix, LockFileEx on Windows. The token store and the
// audit log lock a file beside their data so that a CLI command and the
// running gateway never write at the same time.
//
// A lock belongs to the open file: closing the file releases it.
package filelock

import "os"

// Mode is what a lock lets others do meanwhile.
type Mode int

const (
	// Shared lets others take shared locks too (readers).
	Shared Mode = iota
	// Exclusive keeps every other lock out (writers).
	Exclusive
)

// Lock waits until f is locked in mode.
func Lock(f *os.File, mode Mode) error {
	return control(f, func(fd uintptr) error { return lock(fd, mode) })
}

// Unlock releases a lock taken on f.
func Unlock(f *os.File) error {
	return control(f, unlock)
}

// control runs op on f's descriptor while f cannot be closed under it.
func control(f *os.File, op func(fd uintptr) error) error {
	raw, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var opErr error
	if err := raw.Control(func(fd uintptr) { opErr = op(fd) }); err != nil {
		return err
	}
	return opErr
}
