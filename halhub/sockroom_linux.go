//go:build linux

package halhub

import (
	"net"
	"syscall"

	"golang.org/x/sys/unix"
)

// sockRoom tells whether a write goes into a TCP socket at once: for the
// WebSocket transport, whose library has no write that gives up instead
// of waiting, the reader writes an answer itself only when the socket's
// send queue is empty (everything sent before was sent and acknowledged:
// SIOCOUTQ) and the answer is small beside the socket's buffer. Then the
// kernel takes it whole without waiting for the client, and the reader
// never waits on a client that does not read; otherwise the writer
// goroutine writes it.
type sockRoom struct {
	raw    syscall.RawConn
	sndbuf int // SO_SNDBUF when the connection was made; it only grows
	outq   int // the last look's SIOCOUTQ; -1 when it failed
	look   func(fd uintptr)
}

// newSockRoom returns the room of the TCP socket under c (a guarded
// connection's, through TLS too: the check is on the socket), or nil.
func newSockRoom(g *guardedConn) *sockRoom {
	if g == nil {
		return nil
	}
	tc, ok := g.Conn.(*net.TCPConn)
	if !ok {
		return nil
	}
	raw, err := tc.SyscallConn()
	if err != nil {
		return nil
	}
	r := &sockRoom{raw: raw}
	raw.Control(func(fd uintptr) {
		r.sndbuf, err = unix.GetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_SNDBUF)
	})
	if err != nil || r.sndbuf <= 0 {
		return nil
	}
	r.look = r.lookOnce // made once: a method value allocates
	return r
}

func (r *sockRoom) lookOnce(fd uintptr) {
	n, err := unix.IoctlGetInt(int(fd), unix.SIOCOUTQ)
	if err != nil {
		n = -1
	}
	r.outq = n
}

// fits reports whether a frame of about n bytes goes into the socket now:
// its send queue is empty and n is at most a quarter of its buffer (the
// kernel counts a write's overhead against the buffer too).
func (r *sockRoom) fits(n int) bool {
	if r.raw.Control(r.look) != nil {
		return false
	}
	return r.outq == 0 && n+wsFrameOverhead <= r.sndbuf/4
}

// wsFrameOverhead bounds what a frame adds to its message: a header of at
// most 14 bytes, and a TLS record's own under wss.
const wsFrameOverhead = 64
