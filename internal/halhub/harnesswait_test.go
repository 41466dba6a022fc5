package halhub

import (
	"bufio"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/openhal/gateway/device"
)

// Helpers for the transport, limit, slow-consumer, queue and order tests.

// waitFor polls cond until it holds, failing the test after d. It waits for
// state the Hub does not announce on the wire (a connection forgotten, a
// request no longer in flight).
func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", d, what)
		}
		time.Sleep(time.Millisecond)
	}
}

// waitChan waits for ch to deliver or close, failing the test after 5 s.
func waitChan(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(5 * time.Second):
		t.Fatalf("timed out after 5 s waiting for %s", what)
	}
}

// waitConnections waits until the Hub counts n connections: a connection
// the client saw closed is forgotten a moment later.
func (th *testHub) waitConnections(t *testing.T, n int) {
	t.Helper()
	waitFor(t, 5*time.Second, "the hub to count "+strconv.Itoa(n)+" connections", func() bool { return th.hub.Connections() == n })
}

// waitIdle waits until no connection has a request in flight: an answer
// reaches the client just before the Hub counts it as written.
func (th *testHub) waitIdle(t *testing.T) {
	t.Helper()
	waitFor(t, 5*time.Second, "no request in flight", func() bool {
		for _, s := range th.sessions() {
			if s.inflight.Load() != 0 {
				return false
			}
		}
		return true
	})
}

// sessions returns the Hub's open connections.
func (th *testHub) sessions() []*session {
	th.hub.mu.RLock()
	defer th.hub.mu.RUnlock()
	out := make([]*session, 0, len(th.hub.sessions))
	for s := range th.hub.sessions {
		out = append(out, s)
	}
	return out
}

// queued counts the messages waiting in q, and among them the values.
func (q *outQueue) queued() (all, values int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for n := q.head; n != nil; n = n.next {
		all++
		if n.device != "" {
			values++
		}
	}
	return all, values
}

// request encodes a request with the given id.
func request(id int, method string, params any) string {
	req := map[string]any{"jsonrpc": "2.0", "id": id, "method": method}
	if params != nil {
		req["params"] = params
	}
	return string(mustJSON(req))
}

// answers waits for the answers to ids, in any order; it returns them by
// id. Other messages are kept for next and notification.
func (c *client) answers(ids []int) map[int]msg {
	c.t.Helper()
	want := map[string]int{}
	for _, id := range ids {
		want[strconv.Itoa(id)] = id
	}
	got := map[int]msg{}
	take := func(m msg) bool {
		id, ok := want[string(m.ID)]
		if !ok || m.Method != "" {
			return false
		}
		if _, dup := got[id]; dup {
			c.t.Fatalf("two answers to id %d: %s", id, m.raw)
		}
		got[id] = m
		return true
	}
	kept := c.pending[:0]
	for _, m := range c.pending {
		if !take(m) {
			kept = append(kept, m)
		}
	}
	c.pending = kept
	deadline := time.After(10 * time.Second)
	for len(got) < len(ids) {
		select {
		case m := <-c.in:
			if !take(m) {
				c.pending = append(c.pending, m)
			}
		case <-c.closed:
			c.t.Fatalf("connection closed with %d of %d answers", len(got), len(ids))
		case <-deadline:
			c.t.Fatalf("%d of %d answers within 10 s", len(got), len(ids))
		}
	}
	return got
}

// received returns, without waiting, what has arrived and not been taken.
func (c *client) received() []msg {
	out := append([]msg(nil), c.pending...)
	for {
		select {
		case m := <-c.in:
			c.pending = append(c.pending, m)
			out = append(out, m)
		default:
			return out
		}
	}
}

// dialWSResponse dials /hal and returns the handshake's response as well,
// for the tests that expect a refusal.
func (th *testHub) dialWSResponse(bearer string) (*websocket.Conn, *http.Response, error) {
	h := http.Header{}
	if bearer != "" {
		h.Set("Authorization", "Bearer "+bearer)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return websocket.Dial(ctx, th.wsURL, &websocket.DialOptions{HTTPHeader: h})
}

// rawConn is a TCP connection the test reads by hand, line by line, so
// that it can stop reading altogether (a stalled client).
type rawConn struct {
	t  *testing.T
	c  *net.TCPConn
	br *bufio.Reader
}

// dialRaw connects and initializes with tok. A rcvbuf above zero sets the
// socket's receive buffer before it connects (so that the window it
// offers is small from the start), for a client that stops reading and
// should fill its socket soon.
func (th *testHub) dialRaw(t *testing.T, tok string, rcvbuf int) *rawConn {
	t.Helper()
	var d net.Dialer
	if rcvbuf > 0 {
		d.Control = func(_, _ string, rc syscall.RawConn) error {
			var err error
			if cerr := rc.Control(func(fd uintptr) {
				err = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, rcvbuf)
			}); cerr != nil {
				return cerr
			}
			return err
		}
	}
	c, err := d.Dial("tcp", th.tcpAddr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	tc := c.(*net.TCPConn)
	rc := &rawConn{t: t, c: tc, br: bufio.NewReaderSize(c, 64<<10)}
	rc.send(request(1, "hal/initialize", map[string]any{"protocolVersion": "0.1", "clientInfo": map[string]string{"name": "stalled", "version": "1"}, "token": tok}))
	if m := rc.next(); m.Error != nil || string(m.ID) != "1" {
		t.Fatalf("initialize: %s", m.raw)
	}
	rc.send(`{"jsonrpc":"2.0","method":"hal/initialized"}`)
	rc.send(request(2, "hal/ping", nil))
	if m := rc.next(); m.Error != nil || string(m.ID) != "2" {
		t.Fatalf("ping: %s", m.raw)
	}
	return rc
}

func (rc *rawConn) send(s string) {
	rc.t.Helper()
	if _, err := rc.c.Write([]byte(s + "\n")); err != nil {
		rc.t.Fatalf("send: %v", err)
	}
}

// next reads one message within 5 s.
func (rc *rawConn) next() msg {
	rc.t.Helper()
	m, err := rc.read(5 * time.Second)
	if err != nil {
		rc.t.Fatalf("read: %v", err)
	}
	return m
}

// read reads one message; err is the connection's end or the deadline.
func (rc *rawConn) read(d time.Duration) (msg, error) {
	line, err := rc.readLine(d)
	if err != nil {
		return msg{}, err
	}
	var m msg
	if err := json.Unmarshal(line, &m); err != nil {
		rc.t.Fatalf("hub sent bad JSON %q: %v", line, err)
	}
	m.raw = string(line)
	return m, nil
}

// readLine reads one line without its '\n'; it is valid until the next
// read.
func (rc *rawConn) readLine(d time.Duration) ([]byte, error) {
	rc.c.SetReadDeadline(time.Now().Add(d))
	line, err := rc.br.ReadSlice('\n')
	if err != nil {
		return nil, err
	}
	return line[:len(line)-1], nil
}

// numberDevice is a writable number device that records what it is given.
func numberDevice(id string) writerDevice {
	return writerDevice{&testDevice{desc: device.Descriptor{ID: id, Kind: device.KindPWM, Source: "board", Access: device.AccessReadWrite, Risk: device.RiskLow, Schema: device.Schema{Type: device.TypeNumber}}}}
}

// initWith sends hal/initialize with tok in params (none if empty) and
// returns the answer.
func (c *client) initWith(tok string) msg {
	c.t.Helper()
	p := map[string]any{"protocolVersion": "0.1", "clientInfo": map[string]string{"name": "test", "version": "1"}}
	if tok != "" {
		p["token"] = tok
	}
	return c.call("hal/initialize", p)
}

// lastBeforeClose waits for the next message, also when the Hub closes the
// connection right after sending it (next may see the close first: a
// select picks either ready case).
func (c *client) lastBeforeClose() msg {
	c.t.Helper()
	if len(c.pending) > 0 {
		m := c.pending[0]
		c.pending = c.pending[1:]
		return m
	}
	select {
	case m := <-c.in:
		return m
	case <-c.closed:
		select {
		case m := <-c.in: // delivered before the reader saw the end
			return m
		default:
			c.t.Fatal("connection closed without a message")
		}
	case <-time.After(5 * time.Second):
		c.t.Fatal("no message within 5 s")
	}
	return msg{}
}
