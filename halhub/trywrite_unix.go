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
	if t.writeLine == nil {
		t.writeLine = t.writeLineOnce // made once: a method value allocates
	}
	err = t.raw.Write(t.writeLine)
	n, werr := t.wrote, t.werr
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

// writeLineOnce is tryWrite's write(2) of t.line, which RawConn.Write runs
// with the socket locked for writing; the result is left in t.wrote and
// t.werr.
func (t *lineTransport) writeLineOnce(fd uintptr) bool {
	t.wrote, t.werr = syscall.Write(int(fd), t.line)
	return true // never wait for the socket to have room
}
