//go:build unix

package filelock

import "golang.org/x/sys/unix"

func lock(fd uintptr, mode Mode) error {
	how := unix.LOCK_SH
	if mode == Exclusive {
		how = unix.LOCK_EX
	}
	return flock(fd, how)
}

func unlock(fd uintptr) error { return flock(fd, unix.LOCK_UN) }

// flock applies how, again when a signal interrupts the wait.
func flock(fd uintptr, how int) error {
	for {
		if err := unix.Flock(int(fd), how); err != unix.EINTR {
			return err
		}
	}
}
