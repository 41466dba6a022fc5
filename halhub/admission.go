package halhub

import (
	"net/http"
	"sync"

	"github.com/openhal/gateway/openhal"
)

// Admission (spec §2) has two stages. A connection accepted on a
// listener from Guard takes a ticket of a peerBudget — the budget of
// connections not yet authenticated — or is closed at once. At
// hal/initialize, once its token is known, it takes a slot of
// MaxConnections (admins: of AdminReserve too) and gives its ticket back;
// without a slot it is answered BUSY and closed. So a peer without a token
// holds a ticket at most, never a slot, and its tickets are bounded per
// peer and in all: it cannot keep an authenticated client out.

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
	byPeer map[string]int
	n      int // tickets held by peers that are not exempt
}

func newPeerBudget(perPeer, total int) *peerBudget {
	return &peerBudget{perPeer: perPeer, total: total, byPeer: map[string]int{}}
}

// take returns a ticket for one more connection from peer, or nil when
// peer or everyone has used up the budget.
func (b *peerBudget) take(peer string, exempt bool) *ticket {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.byPeer[peer] >= b.perPeer || (!exempt && b.n >= b.total) {
		return nil
	}
	b.byPeer[peer]++
	if !exempt {
		b.n++
	}
	return &ticket{b: b, peer: peer, exempt: exempt}
}

func (b *peerBudget) give(peer string, exempt bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.byPeer[peer]--; b.byPeer[peer] <= 0 {
		delete(b.byPeer, peer) // the map holds live peers only
	}
	if !exempt {
		b.n--
	}
}

// held returns how many tickets are out.
func (b *peerBudget) held() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := 0
	for _, k := range b.byPeer {
		n += k
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
	once   sync.Once
}

func (t *ticket) release() {
	if t == nil {
		return
	}
	t.once.Do(func() { t.b.give(t.peer, t.exempt) })
}

// takeSlot gives an authenticated session its slot: one of
// MaxConnections, or for an admin token one of AdminReserve more. It
// reports false when none is free (the caller answers BUSY "full").
func (h *Hub) takeSlot(s *session, scope openhal.Scope) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.takeSlotLocked(scope) {
		return false
	}
	s.slotted = true
	return true
}

// takeSlotLocked takes one of the slots scope may use, counting a refusal;
// h.mu is held.
func (h *Hub) takeSlotLocked(scope openhal.Scope) bool {
	lim := h.opt.Limits
	most := lim.MaxConnections
	if scope == openhal.ScopeAdmin {
		most += lim.AdminReserve
	}
	if h.slots >= most {
		h.stats.full.Add(1)
		return false
	}
	h.slots++
	return true
}

// AdmitHTTP admits the HTTP connection of r as authenticated, for an
// endpoint besides /hal whose requests carry a token the caller has
// verified (/mcp, whose event streams stay open): as hal/initialize does
// for a WebSocket, the connection gives back its ticket of the budget of
// connections not yet authenticated and takes one of the Hub's slots (an
// admin token's may be of the reserve), held until it closes. Otherwise
// an agent's open streams would use up its address's budget, and lock out
// the operator on the same machine, at accept. It reports false when no
// slot is free (the caller answers busy). A connection admitted already,
// or from a listener that is not guarded, passes.
func (h *Hub) AdmitHTTP(r *http.Request, scope openhal.Scope) bool {
	g, _ := r.Context().Value(guardedConnKey{}).(*guardedConn)
	if g == nil {
		return true
	}
	return g.admit(h, scope)
}

// giveSlot gives back the slot of an HTTP connection that closed
// (AdmitHTTP).
func (h *Hub) giveSlot() {
	h.mu.Lock()
	h.slots--
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
// ticket.
func (h *Hub) forget(s *session) {
	h.mu.Lock()
	delete(h.sessions, s)
	h.stats.messagesIn.Add(s.messagesIn.Load())
	h.stats.requests.Add(s.requests.Load())
	if s.slotted {
		s.slotted = false
		h.slots--
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
