//go:build unix

package halhub

import (
	"errors"
	"net"
	"syscall"
)

// rawWriter returns the socket under c for tryWrite, or nil when c is not
// one (a TLS connection, an in-memory pipe): those always use the writer.
// A guarded connection's writes are its socket's (guardedConn changes how
// it reads and closes, never how it writes); a TLS connection over one is
// not unwrapped: its bytes must go through TLS.
func rawWriter(c net.Conn) syscall.RawConn {
	if g, ok := c.(*guardedConn); ok {
		c = g.Conn
	}
	sc, ok := c.(syscall.Conn)
	if !ok {
		return nil
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return nil
	}
	return rc
}

// tryWrite writes msg and its newline with one write(2) on the
// non-blocking socket, without waiting for room (tryWriter).
func (t *lineTransport) tryWrite(msg []byte) (rest []byte, all bool, err error) {
	t.line = append(append(t.line[:0], msg...), '\n')
	var n int
	var werr error
	err = t.raw.Write(func(fd uintptr) bool {
		n, werr = syscall.Write(int(fd), t.line)
		return true // never wait for the socket to have room
	})
	if err == nil && werr != nil && !errors.Is(werr, syscall.EAGAIN) && !errors.Is(werr, syscall.EINTR) {
		err = werr
	}
	if err != nil {
		return nil, false, err
	}
	n = max(n, 0)
	if n == len(t.line) {
		return nil, true, nil
	}
	// write frames what is left of msg with the newline not yet sent.
	return msg[min(n, len(msg)):], false, nil
}
