package halhub

import (
	"io"
	"net"
	"strings"
	"sync/atomic"
	"testing"
)

// countingConn counts the writes that reach the socket.
type countingConn struct {
	net.Conn
	writes atomic.Int32
}

func (c *countingConn) Write(p []byte) (int, error) {
	c.writes.Add(1)
	return c.Conn.Write(p)
}

// tcpPair returns the two ends of a loopback TCP connection.
func tcpPair(t *testing.T) (server, client net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	client, err = net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	server, err = ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { server.Close(); client.Close() })
	return server, client
}

// A corked batch reaches the socket in one write of its own, in order,
// with a write made meanwhile by someone else (a pong) in its place;
// uncorked, every write is the connection's.
func TestCork(t *testing.T) {
	server, client := tcpPair(t)
	cc := &countingConn{Conn: server}
	g := &guardedConn{Conn: cc}
	g.Write([]byte("before "))
	g.useCork(rawWriter(server))
	var scratch []byte
	all, err := g.corked(func() error {
		for _, m := range []string{"one ", "two ", "pong ", "three"} {
			if _, err := g.Write([]byte(m)); err != nil {
				return err
			}
		}
		return nil
	}, &scratch)
	if err != nil || !all {
		t.Fatalf("corked batch: all %v, err %v; want all written", all, err)
	}
	if n := cc.writes.Load(); n != 1 {
		t.Errorf("the corked batch went through the connection's Write: %d writes, want only the one before", n)
	}
	g.Write([]byte(" after"))
	server.Close()
	got, err := io.ReadAll(client)
	if err != nil {
		t.Fatal(err)
	}
	if want := "before one two pong three after"; string(got) != want {
		t.Errorf("the peer read %q, want %q", got, want)
	}
}

// What a client that does not read leaves of a corked batch is pending:
// the fan-out keeps off (idle), a second corked batch is refused, and
// whatever is written next goes after it, once the client reads.
func TestCorkPendingGoesFirst(t *testing.T) {
	server, client := tcpPair(t)
	server.(*net.TCPConn).SetWriteBuffer(64 << 10)
	client.(*net.TCPConn).SetReadBuffer(64 << 10)
	g := &guardedConn{Conn: server}
	g.useCork(rawWriter(server))
	batch := strings.Repeat("b", 16<<20) // far more than the socket buffers hold
	var scratch []byte
	all, err := g.corked(func() error { _, err := g.Write([]byte(batch)); return err }, &scratch)
	if err != nil || all {
		t.Fatalf("a batch larger than the socket's buffers: all %v, err %v; want some left pending", all, err)
	}
	if g.idle() {
		t.Error("idle with a batch pending")
	}
	if _, err := g.corked(func() error { return nil }, &scratch); err == nil {
		t.Error("a second corked batch while one is pending: no error")
	}
	wrote := make(chan error, 1)
	go func() { _, err := g.Write([]byte("pong")); wrote <- err }()
	got := make(chan []byte, 1)
	go func() { b, _ := io.ReadAll(client); got <- b }()
	if err := <-wrote; err != nil {
		t.Fatal(err)
	}
	if !g.idle() {
		t.Error("not idle once the pending batch was written")
	}
	server.Close()
	if b := <-got; string(b) != batch+"pong" {
		t.Errorf("the peer read %d bytes ending %q, want the batch, then the pong", len(b), b[max(0, len(b)-8):])
	}
}
