package gateway_test

import (
	"errors"
	"fmt"
	"os"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// openPTMX opens a pseudo-terminal (posix_openpt, unlockpt and ptsname by
// hand) and returns its master, closed when the test ends, and the path
// of its slave. Without pseudo-terminals the test is skipped.
func openPTMX(t testing.TB) (master *os.File, slave string) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	t.Cleanup(func() { m.Close() })
	rc, err := m.SyscallConn()
	if err != nil {
		t.Fatal(err)
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
		t.Fatalf("unlock pty: %v", err)
	}
	return m, fmt.Sprintf("/dev/pts/%d", n)
}
