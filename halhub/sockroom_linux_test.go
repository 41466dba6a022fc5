//go:build linux

package halhub

import (
	"net"
	"testing"
	"time"
)

// A socket whose send queue is empty has room for a small answer; one
// whose peer stopped reading, or an answer too large beside its buffer,
// has none.
func TestSockRoom(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	peer, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer peer.Close()
	c, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if newSockRoom(nil) != nil || newSockRoom(&guardedConn{Conn: &net.UnixConn{}}) != nil {
		t.Error("a room for no connection, or for one that is not TCP")
	}
	r := newSockRoom(&guardedConn{Conn: c})
	if r == nil {
		t.Fatal("no room for a TCP connection")
	}
	if !r.fits(200) {
		t.Errorf("an idle socket (buffer %d) has no room for 200 bytes", r.sndbuf)
	}
	if r.fits(r.sndbuf) {
		t.Errorf("a socket has room for a write as large as its buffer (%d)", r.sndbuf)
	}
	// The peer never reads: fill its receive buffer and ours.
	chunk := make([]byte, 64<<10)
	c.SetWriteDeadline(time.Now().Add(200 * time.Millisecond))
	for {
		if _, err := c.Write(chunk); err != nil {
			break
		}
	}
	if r.fits(200) {
		t.Error("a socket whose peer does not read has room")
	}
}
