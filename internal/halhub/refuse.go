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

// A connection that the budget of connections not yet authenticated has
// no room for (its peer's, or everyone's, none of their connections
// waiting idle) waits up to admitWait for room: the connections that fill
// the budget without waiting idle are in a request, or WebSockets before
// hal/initialize, and most are done within milliseconds (a browser
// loading a page, ten CLI calls at once). Once one is done — it goes idle,
// authenticates or closes — the waiting connection takes its place and is
// handed to Accept. Past admitWait it is refused: counted, logged at most
// once a minute per peer, and closed; on a listener that speaks HTTP it
// is first answered 503 Service Unavailable with Retry-After, so that a
// browser or a CLI sees why rather than a reset; the other listeners have
// no message to send before hal/initialize and close it without a byte.
// At most maxHeld connections wait or are answered at once, at most
// maxHeldPerPeer of one peer: past those a connection is refused at once,
// closed without an answer, so that a flood costs a bounded number of
// goroutines and one peer's flood does not take every other peer's wait.

// admitWait is how long a connection past its budget waits for room.
const admitWait = time.Second

// refusedRetryAfter is the Retry-After of the 503, in seconds: the
// connections that fill an address's budget without waiting idle last
// seconds at most (10 s before the Hub closes them).
const refusedRetryAfter = 2

// refuseWithin bounds the whole answer to one refused connection: the TLS
// handshake on an HTTPS listener, reading the request's head (a client
// takes an answer that comes before its request for a broken
// connection), the 503, and reading what the client still sends until it
// closes (so that the close does not reset the connection, losing the
// answer on the way).
const refuseWithin = time.Second

// maxHeld bounds the connections past their budget held at once, each by
// a goroutine, waiting for room or answered 503: under a flood each costs
// at most admitWait, refuseWithin and 64 KiB read. maxHeldPerPeer bounds
// one peer's share.
const (
	maxHeld        = 16
	maxHeldPerPeer = 4
)

// refuseReadMax bounds what is read from a refused connection.
const refuseReadMax = 64 << 10

// refuseLogEvery is how often, at most, refusals from one peer are
// logged; refuseLogPeers bounds the peers remembered for it.
const (
	refuseLogEvery = time.Minute
	refuseLogPeers = 1024
)

// refuser holds the connections past their budget, and answers and logs
// those refused.
type refuser struct {
	answer []byte // the 503, whole

	mu     sync.Mutex
	held   int                     // connections held, waiting or answered
	byPeer map[string]int          // of them, by peer
	logged map[string]*refusalNote // by peer
}

// refusalNote is when a peer's refusals were last logged, and how many
// came since.
type refusalNote struct {
	at    time.Time
	since int
}

func newRefuser() *refuser {
	return &refuser{answer: busyAnswer(), byPeer: map[string]int{}, logged: map[string]*refusalNote{}}
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

// hold takes one of the places of connections held past their budget for
// peer, or reports false when peer or everyone has used theirs up.
func (r *refuser) hold(peer string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.held >= maxHeld || r.byPeer[peer] >= maxHeldPerPeer {
		return false
	}
	r.held++
	r.byPeer[peer]++
	return true
}

// let gives back a place hold took.
func (r *refuser) let(peer string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.held--
	if r.byPeer[peer]--; r.byPeer[peer] <= 0 {
		delete(r.byPeer, peer)
	}
}

// waitForRoom holds gc, which budget (bound) has no room for, on a
// goroutine of its own, until gc gets a ticket — then listener g's
// Accept returns it — or admitWait passes — then it is refused. With no
// place to hold it, gc is refused at once.
func (h *Hub) waitForRoom(gc *guardedConn, g *guardedListener, budget *peerBudget, exempt bool, bound string) {
	if !h.refusals.hold(gc.peer) {
		h.refuse(gc.Conn, g, gc.peer, bound, false)
		return
	}
	go func() {
		defer h.refusals.let(gc.peer)
		expired := make(chan struct{})
		timer := h.clk.AfterFunc(admitWait, func() { close(expired) })
		defer timer.Stop()
		for {
			changed := budget.changed.wait() // before the try: no wake-up is missed
			if bound = h.takeTicket(gc, budget, exempt); bound == "" {
				h.stats.waited.Add(1)
				g.admitted(gc)
				return
			}
			select {
			case <-changed:
			case <-expired:
				h.refuse(gc.Conn, g, gc.peer, bound, true)
				return
			case <-g.done:
				gc.Conn.Close()
				return
			}
		}
	}()
}

// refuse closes c, which bound has no room for, at listener g: counted,
// logged, and on a listener that speaks HTTP after the 503 when the
// caller holds a place for it (held), answered by the caller's goroutine.
func (h *Hub) refuse(c net.Conn, g *guardedListener, peer, bound string, held bool) {
	h.stats.refused.Add(1)
	h.logRefusal(g.name, peer, bound)
	if !held || !g.speaksHTTP.Load() {
		c.Close()
		return
	}
	answerBusy(c, g.tls, h.refusals.answer, func() { h.stats.refusedBusy.Add(1) })
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
