package halclient_test

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openhal/gateway/internal/halhub"
	"github.com/openhal/gateway/internal/halhub/hubtest"
)

// The client's tests run against the gateway's real Hub (package halhub),
// over real loopback TCP, WebSocket and Unix sockets, serving a small bench
// of devices from a real device.Registry (package halhub/hubtest). A test
// fakes only what that Hub cannot do at all, in the test itself.

// testHub is a hubtest.Bench whose listeners are tapped by a wire, so that
// a test sees what the client sent; down also cuts the connections, as a
// network that goes away.
type testHub struct {
	*hubtest.Bench
	wire *wire
}

// newTestHub starts a Hub over the bench, listening nowhere yet (see
// Listen). configure may change its options.
func newTestHub(t *testing.T, configure ...func(*halhub.Options)) *testHub {
	t.Helper()
	w := newWire()
	opts := []hubtest.Option{hubtest.WrapListener(func(transport string, ln net.Listener) net.Listener {
		return &wireListener{Listener: ln, w: w, ws: transport == "ws"}
	})}
	for _, c := range configure {
		opts = append(opts, hubtest.Configure(c))
	}
	h := &testHub{Bench: hubtest.New(t, opts...), wire: w}
	// Runs before the Bench's own cleanup closes the Hub, as down did.
	t.Cleanup(h.down)
	return h
}

// down takes the Hub off the network: its listeners close and every
// connection is cut. The Hub itself runs on.
func (h *testHub) down() {
	h.Down()
	h.wire.cut()
}

// restart cuts every connection and starts a new Hub, with a new bootId
// and a new bench, on the same addresses and with the same tokens.
func (h *testHub) restart() {
	h.down()
	h.Restart()
}

// wire sees what clients send to the Hub: it hands each connection to the
// Hub unchanged, and splits a copy of the bytes the Hub reads into
// messages (lines, or the text frames after a WebSocket upgrade), so that a
// test can check what the client sent and when a connection ended.
type wire struct {
	mu      sync.Mutex
	conns   []*wireConn
	changed chan struct{}
}

func newWire() *wire { return &wire{changed: make(chan struct{})} }

// connSeen is what the Hub received on one connection.
type connSeen struct {
	bearer string        // the WebSocket upgrade's bearer token
	msgs   []wireMessage // in order
	ended  bool
}

type wireMessage struct {
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

func (c connSeen) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "{bearer %q, ended %v:", c.bearer, c.ended)
	for _, m := range c.msgs {
		fmt.Fprintf(&b, " %s %s", m.Method, m.Params)
	}
	return b.String() + "}"
}

// count returns how many messages named method arrived.
func (c connSeen) count(method string) int {
	n := 0
	for _, m := range c.msgs {
		if m.Method == method {
			n++
		}
	}
	return n
}

// waitFor waits until ok holds for the connections seen so far, in the
// order they were accepted, or fails the test after 10 s.
func (w *wire) waitFor(t *testing.T, what string, ok func([]connSeen) bool) []connSeen {
	t.Helper()
	deadline := time.NewTimer(10 * time.Second)
	defer deadline.Stop()
	for {
		w.mu.Lock()
		seen := make([]connSeen, len(w.conns))
		for i, c := range w.conns {
			seen[i] = connSeen{bearer: c.bearer, msgs: append([]wireMessage(nil), c.msgs...), ended: c.ended}
		}
		ch := w.changed
		w.mu.Unlock()
		if ok(seen) {
			return seen
		}
		select {
		case <-ch:
		case <-deadline.C:
			t.Fatalf("waited 10 s for %s; seen %v", what, seen)
		}
	}
}

// allEnded reports whether every connection has ended.
func allEnded(seen []connSeen) bool {
	for _, c := range seen {
		if !c.ended {
			return false
		}
	}
	return true
}

// changedLocked wakes waitFor; w.mu is held.
func (w *wire) changedLocked() {
	close(w.changed)
	w.changed = make(chan struct{})
}

// cut closes every connection under the Hub, as a network that goes away.
func (w *wire) cut() {
	w.mu.Lock()
	conns := append([]*wireConn(nil), w.conns...)
	w.mu.Unlock()
	for _, c := range conns {
		c.Close()
	}
}

type wireListener struct {
	net.Listener
	w  *wire
	ws bool
}

func (l *wireListener) Accept() (net.Conn, error) {
	nc, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	c := &wireConn{Conn: nc, w: l.w, ws: l.ws}
	l.w.mu.Lock()
	l.w.conns = append(l.w.conns, c)
	l.w.changedLocked()
	l.w.mu.Unlock()
	return c, nil
}

// wireConn is one connection as the Hub sees it. Fields other than Conn
// and ws are guarded by w.mu.
type wireConn struct {
	net.Conn
	w  *wire
	ws bool

	buf      []byte // read, not yet split into messages
	upgraded bool   // the WebSocket upgrade request has been read
	bearer   string
	msgs     []wireMessage
	ended    bool
}

func (c *wireConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 {
		c.w.mu.Lock()
		c.buf = append(c.buf, p[:n]...)
		c.split()
		c.w.changedLocked()
		c.w.mu.Unlock()
	}
	return n, err
}

func (c *wireConn) Close() error {
	c.w.mu.Lock()
	c.ended = true
	c.w.changedLocked()
	c.w.mu.Unlock()
	return c.Conn.Close()
}

// split takes whole messages off buf.
func (c *wireConn) split() {
	for {
		var msg []byte
		switch {
		case !c.ws:
			i := bytes.IndexByte(c.buf, '\n')
			if i < 0 {
				return
			}
			msg, c.buf = c.buf[:i], c.buf[i+1:]
		case !c.upgraded:
			i := bytes.Index(c.buf, []byte("\r\n\r\n"))
			if i < 0 {
				return
			}
			if r, err := http.ReadRequest(bufio.NewReader(bytes.NewReader(c.buf[:i+4]))); err == nil {
				c.bearer = strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
			}
			c.buf, c.upgraded = c.buf[i+4:], true
			continue
		default:
			op, payload, n := clientFrame(c.buf)
			if n == 0 {
				return
			}
			c.buf = c.buf[n:]
			if op != 1 { // not a text frame: close, ping, pong
				continue
			}
			msg = payload
		}
		var m wireMessage
		json.Unmarshal(msg, &m) // a message that is not JSON counts, unnamed
		c.msgs = append(c.msgs, m)
	}
}

// clientFrame decodes the WebSocket frame (RFC 6455 §5.2) at the start of
// b, as a client sends it: masked, and whole, since this client sends each
// message in one frame. n is 0 until the frame is complete.
func clientFrame(b []byte) (opcode byte, payload []byte, n int) {
	if len(b) < 2 {
		return 0, nil, 0
	}
	size, i := uint64(b[1]&0x7f), 2
	switch size {
	case 126:
		if len(b) < 4 {
			return 0, nil, 0
		}
		size, i = uint64(binary.BigEndian.Uint16(b[2:])), 4
	case 127:
		if len(b) < 10 {
			return 0, nil, 0
		}
		size, i = binary.BigEndian.Uint64(b[2:]), 10
	}
	var mask []byte
	if b[1]&0x80 != 0 {
		if len(b) < i+4 {
			return 0, nil, 0
		}
		mask, i = b[i:i+4], i+4
	}
	if uint64(len(b)-i) < size {
		return 0, nil, 0
	}
	payload = append([]byte(nil), b[i:i+int(size)]...)
	for j := range payload {
		if mask != nil {
			payload[j] ^= mask[j%4]
		}
	}
	return b[0] & 0x0f, payload, i + int(size)
}
