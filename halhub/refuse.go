package halhub

import (
	"bytes"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"time"
)

// A connection that admission refuses (no ticket left for its peer, or in
// all, and none of their connections waiting idle) is counted, logged at
// most once a minute per peer, and closed. On a listener that speaks HTTP
// it is first answered 503 Service Unavailable with Retry-After, so that a
// browser or a CLI sees why rather than a reset; the other listeners have
// no message to send before hal/initialize and close it without a byte.

// refusedRetryAfter is the Retry-After of the 503, in seconds: the
// connections that fill an address's budget without waiting idle are
// in a request, or WebSockets before hal/initialize, which last seconds
// at most (10 s before the Hub closes them).
const refusedRetryAfter = 2

// refuseWithin bounds the whole answer to one refused connection: the TLS
// handshake on an HTTPS listener, reading the request's head (a client
// takes an answer that comes before its request for a broken
// connection), the 503, and reading what the client still sends until it
// closes (so that the close does not reset the connection, losing the
// answer on the way).
const refuseWithin = time.Second

// maxRefusing bounds the goroutines answering refused connections at
// once: under a flood each costs at most refuseWithin and 64 KiB read,
// and the connections past them are closed without an answer.
const maxRefusing = 16

// refuseReadMax bounds what is read from a refused connection.
const refuseReadMax = 64 << 10

// refuseLogEvery is how often, at most, refusals from one peer are
// logged; refuseLogPeers bounds the peers remembered for it.
const (
	refuseLogEvery = time.Minute
	refuseLogPeers = 1024
)

// refuser answers and logs refused connections.
type refuser struct {
	answering chan struct{} // a token per goroutine answering
	answer    []byte        // the 503, whole

	mu     sync.Mutex
	logged map[string]*refusalNote // by peer
}

// refusalNote is when a peer's refusals were last logged, and how many
// came since.
type refusalNote struct {
	at    time.Time
	since int
}

func newRefuser() *refuser {
	return &refuser{answering: make(chan struct{}, maxRefusing), answer: busyAnswer(), logged: map[string]*refusalNote{}}
}

// busyAnswer is the 503 of a refused HTTP connection: with the security
// headers, Retry-After, and a page that tries again by itself after as
// long (a browser shows it when the console's page itself is refused;
// the policy allows no script, and a refresh needs none).
func busyAnswer() []byte {
	body := fmt.Sprintf(`<!doctype html>
<meta charset="utf-8">
<meta http-equiv="refresh" content="%d">
<title>Gateway busy</title>
<p>The gateway is busy: as many connections from this address are opening as it takes at once, and none of them is idle. This page tries again in %d seconds.</p>
`, refusedRetryAfter, refusedRetryAfter)
	var b strings.Builder
	b.WriteString("HTTP/1.1 503 Service Unavailable\r\n")
	fmt.Fprintf(&b, "Retry-After: %d\r\n", refusedRetryAfter)
	b.WriteString("Content-Type: text/html; charset=utf-8\r\n")
	fmt.Fprintf(&b, "Content-Length: %d\r\n", len(body))
	b.WriteString("Cache-Control: no-store\r\nConnection: close\r\n")
	for _, kv := range securityHeaders {
		fmt.Fprintf(&b, "%s: %s\r\n", kv[0], kv[1])
	}
	b.WriteString("\r\n")
	b.WriteString(body)
	return []byte(b.String())
}

// refuse closes c, refused by bound at listener g: on a listener that
// speaks HTTP after the 503, written in the background when one of
// maxRefusing goroutines is free.
func (h *Hub) refuse(c net.Conn, g *guardedListener, peer, bound string) {
	h.logRefusal(g.name, peer, bound)
	if !g.speaksHTTP.Load() {
		c.Close()
		return
	}
	select {
	case h.refusals.answering <- struct{}{}:
	default:
		c.Close()
		return
	}
	go func() {
		defer func() { <-h.refusals.answering }()
		answerBusy(c, g.tls, h.refusals.answer, func() { h.stats.refusedBusy.Add(1) })
	}()
}

// answerBusy reads the head of a request from c (after a TLS handshake
// when tc is not nil) and answers it with answer, calling written once it
// is written; then it ends its side, reads what the client still sends
// until the client closes, and closes c, all within refuseWithin. A
// client that sends no request head in time gets no answer.
func answerBusy(c net.Conn, tc *tls.Config, answer []byte, written func()) {
	defer c.Close()
	c.SetDeadline(time.Now().Add(refuseWithin))
	conn := c
	if tc != nil {
		tlsConn := tls.Server(c, tc)
		if tlsConn.Handshake() != nil {
			return
		}
		conn = tlsConn
	}
	if !readHead(conn) {
		return
	}
	if _, err := conn.Write(answer); err != nil {
		return
	}
	written()
	if cw, ok := conn.(interface{ CloseWrite() error }); ok {
		cw.CloseWrite()
	}
	io.Copy(io.Discard, io.LimitReader(conn, refuseReadMax))
}

// headEnd ends an HTTP request's head.
var headEnd = []byte("\r\n\r\n")

// readHead reads from r until the end of a request's head has passed, and
// reports whether it has before an error (the deadline) or refuseReadMax
// bytes.
func readHead(r io.Reader) bool {
	buf := make([]byte, 4<<10)
	var tail []byte // the last bytes read, where headEnd may begin
	for read := 0; read < refuseReadMax; {
		n, err := r.Read(buf)
		read += n
		tail = append(tail, buf[:n]...)
		if bytes.Contains(tail, headEnd) {
			return true
		}
		tail = tail[max(0, len(tail)-len(headEnd)+1):]
		if err != nil {
			return false
		}
	}
	return false
}

// logRefusal logs a refusal from peer, at most once every refuseLogEvery
// for one peer, with how many came since the last line. Past
// refuseLogPeers peers at once, a new one goes unlogged (the metrics still
// count it).
func (h *Hub) logRefusal(listener, peer, bound string) {
	r := h.refusals
	now := h.clk.Now()
	r.mu.Lock()
	note := r.logged[peer]
	if note == nil {
		if len(r.logged) >= refuseLogPeers {
			for p, n := range r.logged {
				if now.Sub(n.at) >= refuseLogEvery {
					delete(r.logged, p)
				}
			}
		}
		if len(r.logged) >= refuseLogPeers {
			r.mu.Unlock()
			return
		}
		note = &refusalNote{}
		r.logged[peer] = note
	} else if now.Sub(note.at) < refuseLogEvery {
		note.since++
		r.mu.Unlock()
		return
	}
	since := note.since
	note.at, note.since = now, 0
	r.mu.Unlock()

	lim := h.opt.Limits
	msg, limit := "connection refused: its peer has as many connections not yet authenticated as one peer may, none of them idle", lim.MaxUnauthenticatedPerPeer
	if bound == boundTotal {
		msg, limit = "connection refused: the peers together have as many connections not yet authenticated as the gateway takes, none of them idle", lim.MaxUnauthenticated
	}
	h.log.Warn(msg, "remote", peer, "listener", listener, "limit", limit, "refused_since_last_line", since)
}
