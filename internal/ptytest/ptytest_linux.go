// Package ptytest opens pseudo-terminals for tests: the test plays an
// instrument, a Modbus unit or an adapter cable on the master, and the
// code under test opens the slave's path as a serial port
// (go.bug.st/serial opens it like one: baud and framing calls succeed,
// bytes flow both ways, and closing the master makes the port's reads
// fail, as unplugging a USB adapter does).
//
// It is for the project's tests (internal/hw/serialline,
// internal/hw/modbus, e2e/gateway, e2e/modbussim); no promise beyond
// them.
package ptytest

import (
	"errors"
	"fmt"
	"os"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// Open opens a new pseudo-terminal: posix_openpt, unlockpt and ptsname
// by hand, without cgo. It returns the master, which the caller closes,
// and the slave's path (/dev/pts/N).
func Open() (master *os.File, slave string, err error) {
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		return nil, "", fmt.Errorf("open /dev/ptmx: %w", err)
	}
	rc, err := m.SyscallConn()
	if err != nil {
		m.Close()
		return nil, "", fmt.Errorf("open /dev/ptmx: %w", err)
	}
	var n int
	var ierr error
	err = rc.Control(func(fd uintptr) {
		if ierr = unix.IoctlSetPointerInt(int(fd), unix.TIOCSPTLCK, 0); ierr != nil {
			return
		}
		n, ierr = unix.IoctlGetInt(int(fd), unix.TIOCGPTN)
	})
	if err = errors.Join(err, ierr); err != nil {
		m.Close()
		return nil, "", fmt.Errorf("unlock pty: %w", err)
	}
	return m, fmt.Sprintf("/dev/pts/%d", n), nil
}

// OpenT is Open for a test: a machine without pseudo-terminals skips
// the test, another failure fails it, and the master is closed when the
// test ends.
func OpenT(t testing.TB) (master *os.File, slave string) {
	t.Helper()
	m, slave, err := Open()
	switch {
	case errors.Is(err, os.ErrNotExist) || errors.Is(err, os.ErrPermission):
		t.Skipf("no pseudo-terminals here: %v", err)
	case err != nil:
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m, slave
}

// MakeRaw is cfmakeraw: a terminal that passes bytes as they are, with
// no echo, line editing or translation, for a test that plays the far
// end of a line on a pty's slave.
func MakeRaw(f *os.File) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var ierr error
	err = rc.Control(func(fd uintptr) {
		var tio *unix.Termios
		if tio, ierr = unix.IoctlGetTermios(int(fd), unix.TCGETS); ierr != nil {
			return
		}
		tio.Iflag &^= unix.IGNBRK | unix.BRKINT | unix.PARMRK | unix.ISTRIP | unix.INLCR | unix.IGNCR | unix.ICRNL | unix.IXON
		tio.Oflag &^= unix.OPOST
		tio.Lflag &^= unix.ECHO | unix.ECHONL | unix.ICANON | unix.ISIG | unix.IEXTEN
		tio.Cflag &^= unix.CSIZE | unix.PARENB
		tio.Cflag |= unix.CS8
		tio.Cc[unix.VMIN], tio.Cc[unix.VTIME] = 1, 0
		ierr = unix.IoctlSetTermios(int(fd), unix.TCSETS, tio)
	})
	return errors.Join(err, ierr)
}
