//go:build unix

package halhub

import (
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

// tryWrite writes msgs, each with its newline, with one write(2) on the
// non-blocking socket, without waiting for room (tryWriter). What the
// socket does not take is returned as one message without its last
// newline, copied out of the batch's buffer: write frames it whole.
func (t *lineTransport) tryWrite(msgs [][]byte, scratch *[]byte) (rest []byte, all bool, err error) {
	if scratch == nil {
		scratch = &t.line
	}
	b := (*scratch)[:0]
	for _, m := range msgs {
		b = append(append(b, m...), '\n')
	}
	*scratch = b
	n, err := t.rw.now(b)
	if err != nil {
		return nil, false, err
	}
	if n == len(b) {
		return nil, true, nil
	}
	return append([]byte(nil), b[n:len(b)-1]...), false, nil
}

// fits is always true: a line transport writes what the socket takes and
// leaves the rest to the writer.
func (t *lineTransport) fits(int) bool { return true }
