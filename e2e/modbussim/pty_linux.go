package modbussim

import (
	"fmt"
	"os"
	"syscall"

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
	if err := ptytest.MakeRaw(p.slave); err != nil {
		p.close()
		return nil, fmt.Errorf("make %s raw: %w", p.path, err)
	}
	return p, nil
}

// close hangs the terminal up: a port open on its slave fails, as a USB
// adapter's does when pulled.
func (p *pty) close() {
	p.master.Close()
	p.slave.Close()
}
