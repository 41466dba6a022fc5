package modbussim

import (
	"errors"
	"fmt"
	"os"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/openhal/gateway/internal/ptytest"
)

// pty is a pseudo-terminal whose slave the relay holds open itself.
//
// Why hold the slave: once every descriptor of a pty's slave is closed, a
// read on the master fails with EIO, at once and again and again, until
// the slave is opened anew — which the relay could only learn by polling.
// The gateway closes and reopens its port (after a fault, or a test's
// second run of mbpoll), so the relay keeps one descriptor of the slave
// and a read on the master just waits.
type pty struct {
	master *os.File
	slave  *os.File
	path   string // /dev/pts/N
}

// openPTY opens a pseudo-terminal (package ptytest), then the slave,
// made raw so that nothing
// written before the port is opened is echoed back or translated.
func openPTY() (*pty, error) {
	m, path, err := ptytest.Open()
	if err != nil {
		return nil, err
	}
	p := &pty{master: m, path: path}
	if p.slave, err = os.OpenFile(p.path, os.O_RDWR|syscall.O_NOCTTY, 0); err != nil {
		m.Close()
		return nil, fmt.Errorf("open pty slave: %w", err)
	}
	if err := makeRaw(p.slave); err != nil {
		p.close()
		return nil, fmt.Errorf("make %s raw: %w", p.path, err)
	}
	return p, nil
}

// makeRaw is cfmakeraw.
func makeRaw(f *os.File) error {
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

// close hangs the terminal up: a port open on its slave fails, as a USB
// adapter's does when pulled.
func (p *pty) close() {
	p.master.Close()
	p.slave.Close()
}
