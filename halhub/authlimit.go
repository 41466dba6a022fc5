package halhub

import (
	"sort"
	"sync"
	"time"

	"gateway/clock"
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

// peerCount is how many rate-limited answers one peer got.
type peerCount struct {
	peer string
	n    int
}

// authLimiter counts UNAUTHORIZED answers per peer (remote address, or
// peer uid on the Unix socket) over a sliding window (spec §3: at most 5
// a minute). Every failure counts, rate-limited ones too, so a peer that
// keeps failing stays limited until it slows down. Its memory is bounded:
// at most `failures` times per peer and `peers` peers; past that, new
// peers share overflowPeer's budget.
//
// Rate-limited answers are counted, not recorded one by one: a timer on
// the Hub's clock, armed only while there are counts, hands them to
// record once a window, one count per peer; the tick after a flood ends
// records its tail and disarms. close records what is left.
type authLimiter struct {
	lim    authLimits
	clk    clock.Clock
	record func([]peerCount)

	mu        sync.Mutex
	peers     map[string]*peerFailures
	timer     clock.Timer // armed while some peer has limited > 0
	lastSweep time.Time
	closed    bool
}

// peerFailures is one peer's recent failures, oldest first (at most
// lim.failures), and its rate-limited answers not yet recorded.
type peerFailures struct {
	recent  []time.Time
	limited int
}

func newAuthLimiter(lim authLimits, clk clock.Clock, record func([]peerCount)) *authLimiter {
	return &authLimiter{lim: lim, clk: clk, record: record, peers: map[string]*peerFailures{}}
}

// fail counts one failure of peer and reports whether peer had already
// used up its failures in the window, so that this one is to be answered
// rate_limited (and is counted for the audit).
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
	if limited {
		pf.limited++
		if l.timer == nil && !l.closed {
			l.timer = l.clk.AfterFunc(l.lim.window, l.tick)
		}
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

// sweep forgets the peers whose failures have all left the window and
// whose rate-limited answers are recorded.
func (l *authLimiter) sweep(now time.Time) {
	l.lastSweep = now
	for peer, pf := range l.peers {
		if pf.limited == 0 && (len(pf.recent) == 0 || now.Sub(pf.recent[len(pf.recent)-1]) >= l.lim.window) {
			delete(l.peers, peer)
		}
	}
}

// tick records the counts of the window that ended, and stays armed for
// one more window if there were any: a flood still going on is recorded
// again a window later, and one that ended has its tail recorded by the
// last tick.
func (l *authLimiter) tick() {
	l.mu.Lock()
	counts := l.takeCounts()
	l.sweep(l.clk.Now())
	if len(counts) > 0 && !l.closed {
		l.timer = l.clk.AfterFunc(l.lim.window, l.tick)
	} else {
		l.timer = nil
	}
	l.mu.Unlock()
	if len(counts) > 0 {
		l.record(counts)
	}
}

// takeCounts returns and zeroes the counts of rate-limited answers, by
// peer in order.
func (l *authLimiter) takeCounts() []peerCount {
	var counts []peerCount
	for peer, pf := range l.peers {
		if pf.limited > 0 {
			counts = append(counts, peerCount{peer: peer, n: pf.limited})
			pf.limited = 0
		}
	}
	sort.Slice(counts, func(i, j int) bool { return counts[i].peer < counts[j].peer })
	return counts
}

// close stops the timer and records the counts not yet recorded; later
// failures are still limited but no longer recorded.
func (l *authLimiter) close() {
	l.mu.Lock()
	l.closed = true
	if l.timer != nil {
		l.timer.Stop()
		l.timer = nil
	}
	counts := l.takeCounts()
	l.mu.Unlock()
	if len(counts) > 0 {
		l.record(counts)
	}
}

// tracked returns how many peers the limiter remembers.
func (l *authLimiter) tracked() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.peers)
}
