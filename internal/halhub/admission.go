package halhub

import (
	"errors"
	"net/http"
	"sync"

	"github.com/openhal/gateway/jsonrpc"
	"github.com/openhal/gateway/openhal"
)

// Admission (spec §2) has two stages. A connection accepted on a
// listener from Guard takes a ticket of a peerBudget — the budget of
// connections not yet authenticated — or waits a moment for one and is
// then refused (refuse.go). At hal/initialize,
// once its token is known, it takes a slot of MaxConnections (admins: of
// AdminReserve too), at most MaxConnectionsPerToken of them for one
// token, and gives its ticket back; without a slot it is answered BUSY and
// closed. So a peer without a token holds a ticket at most, never a slot,
// and its tickets are bounded per peer and in all: it cannot keep an
// authenticated client out; and a token holds a bounded share of the
// slots: one agent's leak or flood cannot keep another principal out.
//
// An HTTP keep-alive connection waiting idle between requests holds a
// ticket (or, after an /mcp request, a slot) without using it. Where a
// bound would refuse a newcomer, the longest-idle such connection that
// counts against the same bound is closed first and the newcomer takes its
// place: a browser's pooled connections, a CLI and an agent on one laptop
// are never refused because of idle connections.

// Reasons of a BUSY answer for want of a slot.
const (
	reasonFull      = "full"       // every slot the token's scope may use is taken
	reasonTokenFull = "token_full" // the token holds MaxConnectionsPerToken
)

// Bounds of a peerBudget that a refused connection ran into.
const (
	boundPeer  = "per_peer"
	boundTotal = "total"
)

// peerBudget bounds connections not yet authenticated: at most perPeer
// for one peer, and at most total for all peers together except the
// exempt ones, whose connections count only against their own perPeer.
// One budget serves the network listeners together (peer: the remote
// address), another the Unix socket (peer: the uid, where the gateway's
// own uid and root are exempt: they may read admin.token anyway, so no
// other local user can fill the socket's budget against them).
type peerBudget struct {
	perPeer, total int

	mu     sync.Mutex
	byPeer map[string]map[*ticket]struct{} // the tickets out, by peer
	n      int                             // tickets held by peers that are not exempt

	// changed tells the connections waiting for room (waitForRoom) that
	// there may be some: a ticket was given back, or a connection holding
	// one went idle.
	changed signal
}

// signal wakes whoever waits on it, each time it is notified.
type signal struct {
	mu sync.Mutex
	ch chan struct{}
}

// wait returns a channel closed at the next notify.
func (s *signal) wait() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ch == nil {
		s.ch = make(chan struct{})
	}
	return s.ch
}

// notify wakes the waiters, if any.
func (s *signal) notify() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ch != nil {
		close(s.ch)
		s.ch = nil
	}
}

func newPeerBudget(perPeer, total int) *peerBudget {
	return &peerBudget{perPeer: perPeer, total: total, byPeer: map[string]map[*ticket]struct{}{}}
}

// take returns a ticket for c, one more connection from peer (c may be nil
// in tests). Where peer or everyone has used up the budget, it first
// closes the HTTP keep-alive connection that has waited idle the longest —
// peer's own, or when only the total is used up, anyone's that counts
// toward it — and takes its place; reclaimed counts those closed. It
// returns nil and the bound that refused c when none is idle.
func (b *peerBudget) take(peer string, exempt bool, c *guardedConn) (t *ticket, bound string, reclaimed int) {
	for {
		b.mu.Lock()
		bound = ""
		switch {
		case len(b.byPeer[peer]) >= b.perPeer:
			bound = boundPeer
		case !exempt && b.n >= b.total:
			bound = boundTotal
		}
		if bound == "" {
			t = &ticket{b: b, peer: peer, exempt: exempt, conn: c}
			b.add(t)
			b.mu.Unlock()
			return t, "", reclaimed
		}
		idle := b.longestIdle(peer, bound)
		b.mu.Unlock()
		if idle == nil {
			return nil, bound, reclaimed
		}
		idle.Close() // gives its ticket back before it returns
		reclaimed++
	}
}

// add files t; b.mu is held.
func (b *peerBudget) add(t *ticket) {
	m := b.byPeer[t.peer]
	if m == nil {
		m = map[*ticket]struct{}{}
		b.byPeer[t.peer] = m
	}
	m[t] = struct{}{}
	if !t.exempt {
		b.n++
	}
}

// longestIdle returns the connection that has waited idle between HTTP
// requests the longest among those whose tickets count against bound —
// peer's for boundPeer, those of peers not exempt for boundTotal — or nil
// when none waits idle; b.mu is held. At most perPeer or total tickets
// are looked at.
func (b *peerBudget) longestIdle(peer, bound string) *guardedConn {
	var best *guardedConn
	var bestTick uint64
	consider := func(tickets map[*ticket]struct{}) {
		for t := range tickets {
			if t.exempt && bound == boundTotal || t.conn == nil {
				continue
			}
			if tick := t.conn.idleTick.Load(); tick != 0 && (best == nil || tick < bestTick) {
				best, bestTick = t.conn, tick
			}
		}
	}
	if bound == boundPeer {
		consider(b.byPeer[peer])
		return best
	}
	for _, tickets := range b.byPeer {
		consider(tickets)
	}
	return best
}

func (b *peerBudget) give(t *ticket) {
	b.mu.Lock()
	m := b.byPeer[t.peer]
	delete(m, t)
	if len(m) == 0 {
		delete(b.byPeer, t.peer) // the map holds live peers only
	}
	if !t.exempt {
		b.n--
	}
	b.mu.Unlock()
	b.changed.notify()
}

// held returns how many tickets are out.
func (b *peerBudget) held() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := 0
	for _, m := range b.byPeer {
		n += len(m)
	}
	return n
}

// ticket is one connection's place in a peerBudget. It is given back
// once, when the connection authenticates or when it closes, whichever
// comes first; a nil ticket (a connection from a listener that is not
// guarded) gives back nothing.
type ticket struct {
	b      *peerBudget
	peer   string
	exempt bool
	conn   *guardedConn // the connection holding it, which take may close when idle
	once   sync.Once
}

func (t *ticket) release() {
	if t == nil {
		return
	}
	t.once.Do(func() { t.b.give(t) })
}

// takeSlot gives a connection of principal p one of the Hub's slots, or
// returns why it cannot: reasonTokenFull when p's token (by its entry's
// name, unique among the tokens) holds MaxConnectionsPerToken slots,
// reasonFull when every slot p's scope may use is taken. First, HTTP
// connections that hold a slot (AdmitHTTP) and wait idle between
// requests are closed, the longest idle first — p's token's own for
// token_full, anyone's for full — when enough of them are to make room.
// taken runs under h.mu once the slot is p's, to mark who holds it.
func (h *Hub) takeSlot(p openhal.Principal, taken func()) string {
	for {
		h.mu.Lock()
		reason, over := h.slotsOver(p)
		if reason == "" {
			h.slots++
			h.tokenSlots[p.Name]++
			taken()
			h.mu.Unlock()
			return ""
		}
		token := p.Name
		if reason == reasonFull {
			token = ""
		}
		idle := h.idleHTTPSlots(token, over)
		h.mu.Unlock()
		if idle == nil {
			if reason == reasonFull {
				h.stats.full.Add(1)
			} else {
				h.stats.tokenFull.Add(1)
			}
			return reason
		}
		for _, c := range idle {
			c.Close() // gives its slot back before it returns
			h.stats.idleReclaimed.Add(1)
		}
	}
}

// slotsOver returns why p gets no slot now, and how many slots must be
// given back before it does; "" when one is free; h.mu is held. The
// token's bound is looked at first: it is the one its client can act on.
func (h *Hub) slotsOver(p openhal.Principal) (reason string, over int) {
	lim := h.opt.Limits
	if n := h.tokenSlots[p.Name]; n >= lim.MaxConnectionsPerToken {
		return reasonTokenFull, n - lim.MaxConnectionsPerToken + 1
	}
	most := lim.MaxConnections
	if p.Scope == openhal.ScopeAdmin {
		most += lim.AdminReserve
	}
	if h.slots >= most {
		return reasonFull, h.slots - most + 1
	}
	return "", 0
}

// idleHTTPSlots returns the n HTTP connections holding a slot of token
// (any token for "") that have waited idle between requests the longest,
// or nil when fewer than n wait idle; h.mu is held.
func (h *Hub) idleHTTPSlots(token string, n int) []*guardedConn {
	var idle []*guardedConn
	for c := range h.httpSlots {
		if c.idleTick.Load() != 0 && (token == "" || c.slotToken == token) {
			idle = append(idle, c)
		}
	}
	if len(idle) < n {
		return nil
	}
	// Usually n is 1: a pass for each is cheaper than a sort.
	for i := range n {
		oldest := i
		for j := i + 1; j < len(idle); j++ {
			if idle[j].idleTick.Load() < idle[oldest].idleTick.Load() {
				oldest = j
			}
		}
		idle[i], idle[oldest] = idle[oldest], idle[i]
	}
	return idle[:n]
}

// giveSlotLocked gives back a slot of token; h.mu is held.
func (h *Hub) giveSlotLocked(token string) {
	h.slots--
	if h.tokenSlots[token]--; h.tokenSlots[token] <= 0 {
		delete(h.tokenSlots, token) // the map holds tokens with slots only
	}
}

// errBusy is the BUSY answer of a connection that got no slot for
// principal p (reason as takeSlot's).
func (h *Hub) errBusy(reason string, p openhal.Principal) *jsonrpc.Error {
	lim := h.opt.Limits
	if reason == reasonTokenFull {
		return errorf(openhal.CodeBusy, reasonTokenFull,
			"token %q holds all %d connections one token may (hub.limits.maxConnectionsPerToken); close one, or give each client a token of its own",
			p.Name, lim.MaxConnectionsPerToken)
	}
	return errorf(openhal.CodeBusy, reasonFull, "all %d connections are taken (and the %d kept for admin tokens); try again later",
		lim.MaxConnections, lim.AdminReserve)
}

// AdmitHTTP admits the HTTP connection of r as authenticated by principal
// p, for an endpoint besides /hal whose requests carry a token the caller
// has verified (/mcp, whose event streams stay open): as hal/initialize
// does for a WebSocket, the connection gives back its ticket of the
// budget of connections not yet authenticated and takes one of the Hub's
// slots, counted against p's token (an admin token's may be of the
// reserve), held until it closes. Otherwise an agent's open streams would
// use up its address's budget, and lock out the operator on the same
// machine, at accept. It returns an error saying which bound refused it
// when it gets no slot (the caller answers busy). A connection admitted
// already, or from a listener that is not guarded, passes.
func (h *Hub) AdmitHTTP(r *http.Request, p openhal.Principal) error {
	g, _ := r.Context().Value(guardedConnKey{}).(*guardedConn)
	if g == nil {
		return nil
	}
	if reason := g.admit(h, p); reason != "" {
		return errors.New(h.errBusy(reason, p).Message)
	}
	return nil
}

// giveHTTPSlot gives back the slot of an HTTP connection that closed
// (AdmitHTTP).
func (h *Hub) giveHTTPSlot(c *guardedConn, token string) {
	h.mu.Lock()
	delete(h.httpSlots, c)
	h.giveSlotLocked(token)
	h.mu.Unlock()
}

// register adds a session to those the Hub closes, revokes and shuts
// down. Admission happened before (a ticket at accept) or happens later
// (a slot at hal/initialize).
func (h *Hub) register(s *session) {
	h.mu.Lock()
	h.sessions[s] = struct{}{}
	h.mu.Unlock()
}

// forget removes a session that ended and gives back its slot and its
// ticket. The session's reader, which took the slot at hal/initialize and
// set its entry just after, has returned: the entry names the token the
// slot counts against.
func (h *Hub) forget(s *session) {
	s.mu.Lock()
	token := s.entry.Name
	s.mu.Unlock()
	h.mu.Lock()
	delete(h.sessions, s)
	h.stats.messagesIn.Add(s.messagesIn.Load())
	h.stats.requests.Add(s.requests.Load())
	if s.slotted {
		s.slotted = false
		h.giveSlotLocked(token)
	}
	h.mu.Unlock()
	s.ticket.release()
	if h.opt.OnSessions != nil {
		h.opt.OnSessions()
	}
}

// Unauthenticated returns how many connections hold a ticket of the
// budget of connections not yet authenticated (HTTP connections
// included), on the network listeners and on the Unix socket.
func (h *Hub) Unauthenticated() (network, unix int) {
	return h.netBudget.held(), h.unixBudget.held()
}

// mostTokenSlots returns how many slots the token holding the most holds.
func (h *Hub) mostTokenSlots() int {
	h.mu.RLock()
	defer h.mu.RUnlock()
	most := 0
	for _, n := range h.tokenSlots {
		most = max(most, n)
	}
	return most
}
