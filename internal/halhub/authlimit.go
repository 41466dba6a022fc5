package halhub

import (
	"sync"
	"time"

	"github.com/openhal/gateway/internal/clock"
)

// overflowPeer is the peer the limiter counts failures under once it
// tracks as many peers as it may: every peer it has no room for shares it.
const overflowPeer = "*"

// sweepEvery is how often, at most, a full limiter looks for peers it
// may forget before it counts a new peer under overflowPeer.
const sweepEvery = time.Second

// authLimits configure an authLimiter.
type authLimits struct {
	failures int           // UNAUTHORIZED answers per window before rate_limited
	window   time.Duration // the sliding window
	peers    int           // peers tracked at most
}

// authLimiter counts UNAUTHORIZED answers per peer (remote address, or
// peer uid on the Unix socket) over a sliding window (spec §3: at most 5
// a minute). Every failure counts, rate-limited ones too, so a peer that
// keeps failing stays limited until it slows down. Its memory is bounded:
// at most `failures` times per peer and `peers` peers; past that, new
// peers share overflowPeer's budget.
//
// The rate-limited answers themselves are counted by the audit's
// coalescer (Hub.auditCounted), not here.
type authLimiter struct {
	lim authLimits
	clk clock.Clock

	mu        sync.Mutex
	peers     map[string]*peerFailures
	lastSweep time.Time
}

// peerFailures is one peer's recent failures, oldest first (at most
// lim.failures).
type peerFailures struct {
	recent []time.Time
}

func newAuthLimiter(lim authLimits, clk clock.Clock) *authLimiter {
	return &authLimiter{lim: lim, clk: clk, peers: map[string]*peerFailures{}}
}

// fail counts one failure of peer and reports whether peer had already
// used up its failures in the window, so that this one is to be answered
// rate_limited.
func (l *authLimiter) fail(peer string) (limited bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.clk.Now()
	pf := l.entry(peer, now)
	limited = len(pf.recent) == l.lim.failures && now.Sub(pf.recent[0]) < l.lim.window
	if len(pf.recent) == l.lim.failures {
		copy(pf.recent, pf.recent[1:])
		pf.recent[len(pf.recent)-1] = now
	} else {
		pf.recent = append(pf.recent, now)
	}
	return limited
}

// entry returns peer's record, making one; when the limiter is full it
// first forgets the peers that have nothing left in the window, and if
// that frees nothing, peer is counted under overflowPeer.
func (l *authLimiter) entry(peer string, now time.Time) *peerFailures {
	if pf, ok := l.peers[peer]; ok {
		return pf
	}
	if len(l.peers) >= l.lim.peers && now.Sub(l.lastSweep) >= sweepEvery {
		l.sweep(now)
	}
	if len(l.peers) >= l.lim.peers {
		peer = overflowPeer
		if pf, ok := l.peers[peer]; ok {
			return pf
		}
	}
	pf := &peerFailures{}
	l.peers[peer] = pf
	return pf
}

// sweep forgets the peers whose failures have all left the window.
func (l *authLimiter) sweep(now time.Time) {
	l.lastSweep = now
	for peer, pf := range l.peers {
		if len(pf.recent) == 0 || now.Sub(pf.recent[len(pf.recent)-1]) >= l.lim.window {
			delete(l.peers, peer)
		}
	}
}

// tracked returns how many peers the limiter remembers.
func (l *authLimiter) tracked() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.peers)
}
