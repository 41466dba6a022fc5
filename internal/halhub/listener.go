package halhub

import (
	"crypto/tls"
	"errors"
	"net"
	"sort"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/openhal/gateway/openhal"
)

// Accept backs off like net/http's: 5 ms after the first failure, doubling
// up to 1 s, until an accept succeeds.
const (
	acceptBackoffMin = 5 * time.Millisecond
	acceptBackoffMax = time.Second
)

// acceptProbe is how long an accept after a back-off may wait without
// error before the listener counts as accepting again: it could take a
// descriptor, and no peer was waiting.
const acceptProbe = 100 * time.Millisecond

// guardedListener is a listener of the Hub's (spec §2): it admits each
// connection to the budget of connections not yet authenticated, or holds
// it a moment for room and then refuses it (refuse.go); and it outlives
// errors at accept that are not the peer's (EMFILE, ENFILE, ENOBUFS,
// ENOMEM...), backing off and accepting again, while /healthz names it.
// One goroutine accepts (acceptLoop); Accept hands over what it admits,
// and what a wait for room admits later.
type guardedListener struct {
	net.Listener
	name string
	hub  *Hub
	tls  *tls.Config // nil: plain
	// speaksHTTP is set once the Hub's HTTP server serves the listener
	// (HTTPServer's BaseContext): a refused connection is answered 503
	// rather than closed without a byte.
	speaksHTTP atomic.Bool

	start     sync.Once
	conns     chan net.Conn // admitted connections, for Accept
	ended     chan struct{} // closed when acceptLoop ends; err says why
	err       error
	done      chan struct{} // closed by Close: a back-off wait ends
	closeOnce sync.Once

	mu       sync.Mutex
	delay    time.Duration // the current back-off; 0 while accepting
	since    time.Time     // when accept began to fail
	failures int           // failed accepts since then
	probing  bool          // the accept after a back-off has a deadline; accept goroutine only
}

// deadliner is a listener whose Accept can be given a deadline
// (*net.TCPListener, *net.UnixListener).
type deadliner interface{ SetDeadline(time.Time) error }

// Guard returns ln guarded as the Hub's listener called name ("tcp",
// "http", ...), with TLS over the guard when tc is not nil. Accept admits
// each connection to the budget of connections not yet authenticated
// (Limits.MaxUnauthenticated and MaxUnauthenticatedPerPeer; a Unix
// socket's peers by uid), first closing an HTTP keep-alive connection
// that waits idle where the budget is used up; when none does, the
// connection waits up to admitWait for room, and is then refused:
// answered 503 on a listener that HTTPServer serves, closed without a
// byte on others (counted, and logged at most once a minute per peer).
// It returns an error only once ln is closed: an error that is not the
// peer's backs off (5 ms doubling to 1 s) and accepts again, and
// /healthz answers 503 naming "listener <name>" until the listener
// accepts again (a connection, or an accept that waits 100 ms without
// error). Closing the returned listener closes ln and ends a back-off at
// once. Serve the result with ServeLines or HTTPServer.
func (h *Hub) Guard(name string, ln net.Listener, tc *tls.Config) net.Listener {
	g := &guardedListener{Listener: ln, name: name, hub: h, tls: tc,
		conns: make(chan net.Conn), ended: make(chan struct{}), done: make(chan struct{})}
	h.mu.Lock()
	h.guards[g] = struct{}{}
	h.mu.Unlock()
	return g
}

// Accept returns the next connection admitted, or ln's error once ln is
// closed.
func (g *guardedListener) Accept() (net.Conn, error) {
	g.start.Do(func() { go g.acceptLoop() })
	select {
	case c := <-g.conns:
		return c, nil
	case <-g.ended:
		return nil, g.err
	}
}

// acceptLoop accepts until ln is closed, admitting each connection to its
// budget (admitConn): one admitted is handed to Accept; one the budget
// has no room for waits for it apart (waitForRoom) or is refused.
func (g *guardedListener) acceptLoop() {
	defer close(g.ended)
	for {
		c, err := g.Listener.Accept()
		if err == nil {
			g.accepting()
			if gc := g.hub.admitConn(c, g); gc != nil && !g.admitted(gc) {
				g.err = net.ErrClosed
				return
			}
			continue
		}
		if g.isClosed() || errors.Is(err, net.ErrClosed) {
			g.err = err
			return
		}
		var ne net.Error
		switch {
		case g.probing && errors.As(err, &ne) && ne.Timeout():
			g.accepting() // it waited without error: it can accept
		case peersFault(err):
			// That connection is gone; the next may be fine.
		case !g.backOff(err):
			g.err = net.ErrClosed
			return
		default:
			g.probe()
		}
	}
}

// admitted hands gc, under TLS when the listener has it, to Accept. It
// reports false, closing gc, when the listener closed first.
func (g *guardedListener) admitted(gc *guardedConn) bool {
	var c net.Conn = gc
	if g.tls != nil {
		c = tls.Server(gc, g.tls)
	}
	select {
	case g.conns <- c:
		return true
	case <-g.done:
	case <-g.ended:
	}
	gc.Close()
	return false
}

// probe gives the accept after a back-off a short deadline, where the
// listener allows one: an accept that neither fails nor finds a peer
// within it shows that the listener can accept again even if nobody
// connects.
func (g *guardedListener) probe() {
	if d, ok := g.Listener.(deadliner); ok && d.SetDeadline(time.Now().Add(acceptProbe)) == nil {
		g.probing = true
	}
}

// Close closes the listener and ends a back-off wait.
func (g *guardedListener) Close() error {
	g.closeOnce.Do(func() {
		close(g.done)
		g.hub.mu.Lock()
		delete(g.hub.guards, g)
		g.hub.mu.Unlock()
	})
	return g.Listener.Close()
}

func (g *guardedListener) isClosed() bool {
	select {
	case <-g.done:
		return true
	default:
		return false
	}
}

// backOff waits before the next accept, longer at each failure in a row.
// It reports false when the listener was closed meanwhile.
func (g *guardedListener) backOff(err error) bool {
	g.hub.stats.acceptErrors.Add(1)
	g.mu.Lock()
	if g.delay == 0 {
		g.delay, g.since, g.failures = acceptBackoffMin, g.hub.clk.Now(), 0
		g.hub.log.Warn("listener cannot accept; backing off and trying again", "listener", g.name, "err", err)
	} else {
		g.delay = min(2*g.delay, acceptBackoffMax)
	}
	g.failures++
	d := g.delay
	g.mu.Unlock()
	wake := make(chan struct{})
	t := g.hub.clk.AfterFunc(d, func() { close(wake) })
	defer t.Stop()
	select {
	case <-wake:
		return true
	case <-g.done:
		return false
	}
}

// accepting notes that the listener accepts: a back-off is over.
func (g *guardedListener) accepting() {
	if g.probing {
		g.probing = false
		g.Listener.(deadliner).SetDeadline(time.Time{})
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.delay == 0 {
		return
	}
	g.hub.log.Info("listener accepting again", "listener", g.name,
		"failed_for", g.hub.clk.Now().Sub(g.since).Round(time.Millisecond), "failed_accepts", g.failures)
	g.delay = 0
}

// backingOff reports whether the listener is failing to accept.
func (g *guardedListener) backingOff() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.delay != 0
}

// listenersDown returns, sorted, "listener <name>" for each guarded
// listener that is backing off instead of accepting.
func (h *Hub) listenersDown() []string {
	h.mu.RLock()
	var down []string
	for g := range h.guards {
		if g.backingOff() {
			down = append(down, "listener "+g.name)
		}
	}
	h.mu.RUnlock()
	sort.Strings(down)
	return down
}

// peersFault reports whether an accept error is about the one connection
// being accepted (it went away, or a firewall refused it), not about the
// gateway: the next accept may go on at once.
func peersFault(err error) bool {
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return true
	}
	for _, e := range []syscall.Errno{syscall.ECONNABORTED, syscall.ECONNRESET, syscall.EPROTO, syscall.EPERM} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// admitConn takes a ticket for c from the budget of its kind — the Unix
// socket's by peer uid, the network's by remote address — and returns c
// holding it. Without one, c waits for room apart (waitForRoom, for
// listener g) and admitConn returns nil.
func (h *Hub) admitConn(c net.Conn, g *guardedListener) *guardedConn {
	budget, peer, exempt := h.netBudget, hostOf(c.RemoteAddr().String()), false
	if uc, ok := innermost(c).(*net.UnixConn); ok {
		budget = h.unixBudget
		peer, exempt = unixPeer(uc)
	}
	gc := &guardedConn{Conn: c, peer: peer}
	bound := h.takeTicket(gc, budget, exempt)
	if bound == "" {
		return gc
	}
	h.waitForRoom(gc, g, budget, exempt, bound)
	return nil
}

// takeTicket gives gc a ticket of budget, closing an idle keep-alive
// connection to make room if it must (peerBudget.take), or returns the
// bound that has no room.
func (h *Hub) takeTicket(gc *guardedConn, budget *peerBudget, exempt bool) (bound string) {
	t, bound, reclaimed := budget.take(gc.peer, exempt, gc)
	if reclaimed > 0 {
		h.stats.idleReclaimed.Add(uint64(reclaimed))
	}
	gc.ticket = t
	return bound
}

// guardedConn is a connection admitted by a guardedListener. Closing it
// gives its ticket back (if authentication has not already), and the
// Hub's slot an HTTP connection took (AdmitHTTP).
type guardedConn struct {
	net.Conn
	peer   string // the budget's key: remote address, or "uid:N"
	ticket *ticket

	// idleTick is non-zero while the connection waits idle between HTTP
	// requests (ConnState): a number from Hub.idleTicks, so that the
	// lowest went idle first and is closed first to make room.
	idleTick     atomic.Uint64
	readTimedOut atomic.Bool // a read hit its deadline

	mu        sync.Mutex
	slotHub   *Hub   // whose slot c holds (AdmitHTTP), until closed
	slotToken string // the token that slot counts against; written under slotHub.mu too
	closed    bool

	cork cork // a WebSocket's, for the fan-out (cork.go)
}

// admit gives c one of h's slots for principal p in place of its ticket
// (Hub.AdmitHTTP), or returns why it cannot (takeSlot's reason).
func (c *guardedConn) admit(h *Hub, p openhal.Principal) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.slotHub != nil || c.closed {
		return "" // admitted already; or closed, its request ending
	}
	// c is not among h.httpSlots yet: takeSlot never closes it, so
	// holding c.mu meanwhile is safe.
	reason := h.takeSlot(p, func() {
		c.slotHub, c.slotToken = h, p.Name
		h.httpSlots[c] = struct{}{}
	})
	if reason != "" {
		return reason
	}
	c.ticket.release()
	return ""
}

func (c *guardedConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if err != nil {
		c.noteTimeout(err)
	}
	return n, err
}

// noteTimeout records a read that hit its deadline. It is a function of
// its own so that the error's target escapes to the heap only on an
// error, not on every read.
func (c *guardedConn) noteTimeout(err error) {
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		c.readTimedOut.Store(true)
	}
}

func (c *guardedConn) Close() error {
	c.mu.Lock()
	h, token := c.slotHub, c.slotToken
	c.slotHub, c.closed = nil, true
	c.mu.Unlock()
	if h != nil {
		h.giveHTTPSlot(c, token)
	}
	c.ticket.release()
	return c.Conn.Close()
}

// netConner is a connection over another one (*tls.Conn).
type netConner interface{ NetConn() net.Conn }

// guardedOf returns the guardedConn c is or runs over, or nil.
func guardedOf(c net.Conn) *guardedConn {
	for c != nil {
		if g, ok := c.(*guardedConn); ok {
			return g
		}
		nc, ok := c.(netConner)
		if !ok {
			return nil
		}
		c = nc.NetConn()
	}
	return nil
}

// innermost returns the connection at the bottom of c (a TLS connection's
// socket).
func innermost(c net.Conn) net.Conn {
	for {
		nc, ok := c.(netConner)
		if !ok {
			return c
		}
		c = nc.NetConn()
	}
}
