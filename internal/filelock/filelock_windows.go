//go:build windows

package filelock

import "golang.org/x/sys/windows"

// allBytes locks the whole file, however long it grows.
const allBytes = ^uint32(0)

func lock(fd uintptr, mode Mode) error {
	var flags uint32
	if mode == Exclusive {
		flags = windows.LOCKFILE_EXCLUSIVE_LOCK
	}
	return windows.LockFileEx(windows.Handle(fd), flags, 0, allBytes, allBytes, new(windows.Overlapped))
}

func unlock(fd uintptr) error {
	return windows.UnlockFileEx(windows.Handle(fd), 0, allBytes, allBytes, new(windows.Overlapped))
}
