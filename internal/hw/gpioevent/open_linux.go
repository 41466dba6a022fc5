//go:build linux

package gpioevent

import (
	"fmt"
	"os"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Open requests the line at offset of the chip at path (/dev/gpiochipN)
// as an input with cfg, and returns it ready to Read.
func Open(path string, offset int, cfg Config) (*Line, error) {
	req, err := cfg.request(offset)
	if err != nil {
		return nil, err
	}
	name := fmt.Sprintf("%s:%d", path, offset)
	chip, err := unix.Open(path, unix.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("gpioevent: open %s: %w", path, err)
	}
	// The line's file outlives the chip's: the request holds the line.
	defer unix.Close(chip)
	_, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(chip), getLineIoctl, uintptr(unsafe.Pointer(&req[0])))
	if errno != 0 {
		return nil, fmt.Errorf("gpioevent: request %s (edge %v, pull %v, debounce %v): %w", name, cfg.Edge, cfg.Bias, cfg.Debounce, errno)
	}
	fd := requestFD(&req)
	unix.CloseOnExec(fd)
	// Non-blocking, so that os.NewFile puts it in the runtime poller:
	// a Read parks until the kernel says the file is readable, and
	// Close wakes it.
	if err := unix.SetNonblock(fd, true); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("gpioevent: %s: %w", name, err)
	}
	return &Line{f: os.NewFile(uintptr(fd), name), name: name, now: monotonic, buf: make([]byte, maxBatch*eventSize)}, nil
}

// monotonic reads CLOCK_MONOTONIC.
func monotonic() time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		panic(fmt.Sprintf("gpioevent: CLOCK_MONOTONIC: %v", err)) // cannot fail on Linux
	}
	return time.Duration(ts.Nano())
}
