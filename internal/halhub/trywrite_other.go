//go:build !unix

package halhub

import (
	"net"
	"syscall"
)

// rawWriter returns nil: without unix's non-blocking write(2), every
// answer goes through the writer goroutine.
func rawWriter(net.Conn) syscall.RawConn { return nil }

// tryWrite is never called: serveLine sets no tryWriter without a socket.
func (t *lineTransport) tryWrite([][]byte, *[]byte) ([]byte, bool, error) {
	return nil, false, nil
}

func (t *lineTransport) fits(int) bool { return false }
