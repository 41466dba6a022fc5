package halhub

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"

	"github.com/coder/websocket"
)

// wsTransport carries one message per WebSocket text frame.
type wsTransport struct {
	c    *websocket.Conn
	max  int
	addr string
	buf  []byte // the last message read, reused while messages are long
}

// serveWebSocket upgrades GET /hal. Admission is decided before the
// upgrade, so that a refused client gets HTTP 503; a bad bearer token
// never refuses the upgrade: hal/initialize answers UNAUTHORIZED.
func (h *Hub) serveWebSocket(w http.ResponseWriter, r *http.Request) {
	bearer := bearerToken(r)
	tr := &wsTransport{max: h.opt.Limits.MaxMessageBytes, addr: hostOf(r.RemoteAddr)}
	s := newSession(h, tr, bearer)
	if !h.admit(s) {
		http.Error(w, "too many connections", http.StatusServiceUnavailable)
		return
	}
	if s.reserveOnly && !h.isAdminToken(bearer) {
		h.stats.refused.Add(1)
		h.forget(s)
		http.Error(w, "too many connections", http.StatusServiceUnavailable)
		return
	}
	c, err := websocket.Accept(w, r, &websocket.AcceptOptions{
		// A token is needed for anything, and a browser cannot attach one
		// by itself (no cookies are used), so the origin protects nothing
		// here: browser consoles from any origin may connect.
		InsecureSkipVerify: true,
	})
	if err != nil {
		h.forget(s)
		return // Accept has answered the client
	}
	// The library's limit sits above the Hub's, so that the Hub answers
	// an oversize message itself (spec §2).
	c.SetReadLimit(int64(tr.max) + 4096)
	tr.c = c
	s.serve()
}

// read returns the next message, valid until the next read. It reads
// into a slice that grows with the message, at most to one byte past the
// limit, and serves the long messages that follow; a short message lets
// it go, so that a connection holds a long message only while it sends
// them (as the line transport's reader does).
func (t *wsTransport) read(ctx context.Context) ([]byte, error) {
	_, r, err := t.c.Reader(ctx)
	if err != nil {
		return nil, err
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
	if len(buf) <= 4<<10 {
		t.buf = nil
	}
	return buf, nil
}

func (t *wsTransport) write(ctx context.Context, msgs [][]byte) error {
	for _, m := range msgs {
		if err := t.c.Write(ctx, websocket.MessageText, m); err != nil {
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
