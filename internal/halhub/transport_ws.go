package halhub

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"

	"github.com/coder/websocket"
)

// wsTransport carries one message per WebSocket text frame.
type wsTransport struct {
	c    *websocket.Conn
	max  int
	addr string
	buf  []byte // the last message read, reused (a long one's only while they are long)

	// g is the connection under the library, whose cork lets a message be
	// written without waiting (cork.go); nil: none, the writer writes all.
	g *guardedConn
	// corks are the Hub's buffers of the batches corked, lent for one
	// batch: an idle connection holds none.
	corks *sync.Pool
	// writeCorked's, used by one batch at a time (the queue's claim or
	// take).
	batch      [][]byte
	writeBatch func() error
}

// serveWebSocket upgrades GET /hal. Admission is the HTTP connection's:
// it holds its ticket among the connections not yet authenticated from
// accept (HTTPServer) until hal/initialize gives the session a slot. A bad
// bearer token never refuses the upgrade: hal/initialize answers
// UNAUTHORIZED.
func (h *Hub) serveWebSocket(w http.ResponseWriter, r *http.Request) {
	bearer := bearerToken(r)
	tr := &wsTransport{max: h.opt.Limits.InitMessageBytes, addr: hostOf(r.RemoteAddr)}
	g, _ := r.Context().Value(guardedConnKey{}).(*guardedConn)
	if g != nil {
		tr.addr = g.peer
	}
	// A browser sends the Origin of the page that opens the socket: one
	// from another site than the gateway's own (the request's Host) or
	// those configured is refused with 403, so that a web page open in an
	// operator's browser cannot reach the Hub, not even to try tokens.
	// Clients that send no Origin pass. The rule is the Hub's own
	// (CheckOrigin), the same for /mcp; the library's check is off.
	if err := h.CheckOrigin(r); err != nil {
		http.Error(w, err.Error(), http.StatusForbidden)
		return
	}
	s := newSession(h, tr, bearer)
	if g != nil {
		s.ticket = g.ticket
		if raw := rawWriter(g); raw != nil {
			tr.g, tr.corks = g, h.corks
			tr.writeBatch = tr.writeBatchOnce // made once: a method value allocates
			g.useCork(raw)
			s.useTryWriter(tr)
		}
	}
	c, err := websocket.Accept(w, r, &websocket.AcceptOptions{InsecureSkipVerify: true})
	if err != nil {
		return // Accept has answered the client
	}
	tr.setConn(c)
	h.register(s)
	s.serve()
}

// setConn sets the upgraded connection and its read limit. The library's
// limit sits above the Hub's, so that the Hub answers an oversize message
// itself (spec §2).
func (t *wsTransport) setConn(c *websocket.Conn) {
	t.c = c
	t.raiseLimit(t.max)
}

// raiseLimit lets the peer send messages up to maxBytes.
func (t *wsTransport) raiseLimit(maxBytes int) {
	t.max = maxBytes
	t.c.SetReadLimit(int64(maxBytes) + 4096)
}

// errBinaryMessage ends a connection that sent a binary message.
var errBinaryMessage = errors.New("binary WebSocket message")

// read returns the next text message, valid until the next read. A
// binary message is refused with close 1003 (unsupported data), which
// ends the connection (spec §2: messages are text). It reads into a slice
// that grows with the message, at most to one byte past the limit, and
// serves the long messages that follow; a short message lets it go, so
// that a connection holds a long message only while it sends them (as
// the line transport's reader does).
//
// It reads with no context of its own (ctx is the connection's, and the
// session closes the connection when ctx ends, which ends the read): the
// library watches a context that can end with a timer of its own for
// every frame, which a read per request should not pay for.
func (t *wsTransport) read(context.Context) ([]byte, error) {
	typ, r, err := t.c.Reader(context.Background())
	if err != nil {
		return nil, err
	}
	if typ != websocket.MessageText {
		t.c.Close(websocket.StatusUnsupportedData, "messages are JSON text; binary messages are refused")
		return nil, errBinaryMessage
	}
	buf := t.buf[:0]
	for {
		if len(buf) == cap(buf) {
			if len(buf) > t.max {
				return nil, errTooLarge
			}
			grown := make([]byte, len(buf), min(max(2*cap(buf), 512), t.max+1))
			copy(grown, buf)
			buf = grown
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	if len(buf) > t.max {
		return nil, errTooLarge
	}
	t.buf = buf
	if len(buf) <= 4<<10 && cap(buf) > 4<<10 {
		t.buf = nil // a long message's slice, let go at the first short one
	}
	return buf, nil
}

// tryWrite (tryWriter) writes msgs, each in a text frame, with one
// write(2) that never waits (cork.go). What the socket does not take
// stays with the connection, so rest is nil: the writer's next write
// sends it first.
func (t *wsTransport) tryWrite(msgs [][]byte, scratch *[]byte) (rest []byte, all bool, err error) {
	all, err = t.writeCorked(msgs, scratch)
	return nil, all, err
}

// fits (tryWriter) lets the fan-out write unless what a batch left is
// waiting for the writer, or a write is under way.
func (t *wsTransport) fits(int) bool { return t.g.idle() }

// writeCorked writes msgs, each in a text frame, corked: with one write(2)
// that never waits. scratch is the buffer to gather them in (nil: one
// from the Hub's).
func (t *wsTransport) writeCorked(msgs [][]byte, scratch *[]byte) (all bool, err error) {
	if scratch == nil {
		scratch = t.corks.Get().(*[]byte)
		defer t.giveCork(scratch)
	}
	t.batch = msgs
	all, err = t.g.corked(t.writeBatch, scratch)
	t.batch = nil
	return all, err
}

// writeBatchOnce is writeCorked's write of t.batch.
func (t *wsTransport) writeBatchOnce() error { return t.writeEach(t.batch) }

// giveCork gives a buffer back to the Hub's, unless it grew large.
func (t *wsTransport) giveCork(b *[]byte) {
	if cap(*b) > maxPooledCork {
		*b = nil
	}
	t.corks.Put(b)
}

// maxPooledCork is the largest cork buffer kept for the next batch.
const maxPooledCork = 64 << 10

// write writes each message in a text frame, after what a tryWrite left,
// with no context of its own, as read does: closing the connection ends
// a write that waits.
func (t *wsTransport) write(_ context.Context, msgs [][]byte) error {
	if t.g == nil {
		return t.writeEach(msgs)
	}
	if err := t.g.flush(); err != nil {
		return err
	}
	all, err := t.writeCorked(msgs, nil)
	if err == nil && !all {
		err = t.g.flush()
	}
	return err
}

// writeEach writes each message in a text frame. An empty message is
// what a tryWrite left pending, already sent by write's flush: the Hub
// sends no empty message.
func (t *wsTransport) writeEach(msgs [][]byte) error {
	for _, m := range msgs {
		if len(m) == 0 {
			continue
		}
		if err := t.c.Write(context.Background(), websocket.MessageText, m); err != nil {
			return err
		}
	}
	return nil
}

func (t *wsTransport) close() error { return t.c.CloseNow() }

// shutdown sends a close frame (1001, going away) and waits for the
// peer's, within the library's own bound.
func (t *wsTransport) shutdown() error {
	return t.c.Close(websocket.StatusGoingAway, "gateway shutting down")
}
func (t *wsTransport) remote() string { return t.addr }

// bearerToken returns the token of an "Authorization: Bearer" header.
func bearerToken(r *http.Request) string {
	a := r.Header.Get("Authorization")
	if len(a) > 7 && strings.EqualFold(a[:7], "bearer ") {
		return strings.TrimSpace(a[7:])
	}
	return ""
}

// hostOf drops the port: the rate limit of failed tokens is per address.
func hostOf(addr string) string {
	if host, _, err := net.SplitHostPort(addr); err == nil {
		return host
	}
	return addr
}
