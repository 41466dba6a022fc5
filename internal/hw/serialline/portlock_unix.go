//go:build unix

package serialline

import (
	"errors"
	"fmt"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// lockPort takes the gateway's lock of a serial port: an advisory lock
// (flock) of its device, which every program of the gateway takes
// before it opens the port (Open: the line devices, the Modbus lines,
// `gateway modbus scan`). The port's own exclusive mode (TIOCEXCL) keeps
// other users out, but not root: without the lock, `sudo gateway modbus
// scan` beside a running gateway would share its RS-485 line, and each
// would take the other's answers. The lock goes with the returned file.
func lockPort(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOCTTY|syscall.O_NONBLOCK, 0)
	if errors.Is(err, syscall.EBUSY) {
		return nil, ErrBusy // held in exclusive mode by another user's program
	}
	var pe *os.PathError
	if errors.As(err, &pe) {
		return nil, pe.Err // Open says which port
	}
	if err != nil {
		return nil, err
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, ErrBusy
		}
		return nil, fmt.Errorf("lock: %w", err)
	}
	return f, nil
}
