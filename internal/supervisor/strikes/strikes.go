// Package strikes counts an adapter's protocol violations in a sliding
// window (adapter protocol 1, section 6): after the handshake each
// violation is a strike, and Limit strikes within Window kill the adapter.
package strikes

import (
	"sync"
	"time"

	"github.com/openhal/gateway/internal/clock"
)

// The protocol's numbers: 5 strikes within 60 s.
const (
	DefaultLimit  = 5
	DefaultWindow = 60 * time.Second
)

// Strike is one recorded violation, kept for status output.
type Strike struct {
	At     time.Time `json:"at"`
	Reason string    `json:"reason"`
}

// Strikes is one adapter run's counter. Set the fields before first use; a
// zero Limit or Window means the default, a nil Clock the real one. It is
// safe for concurrent use: the reader and the status handler share it.
//
// A strike is in the window while less than Window has passed since it:
// a strike exactly Window old has slid out. Only the newest Limit strikes
// are kept, which is all a kill decision needs, so a flood of bad lines
// costs no memory.
//
// The supervisor uses one Strikes per run (or calls Reset at each start):
// strikes of a killed run must not count against the next one.
type Strikes struct {
	Limit  int
	Window time.Duration
	Clock  clock.Clock

	mu     sync.Mutex
	recent []Strike // oldest first, at most limit
	total  uint64
}

func (s *Strikes) limit() int {
	if s.Limit <= 0 {
		return DefaultLimit
	}
	return s.Limit
}

func (s *Strikes) window() time.Duration {
	if s.Window <= 0 {
		return DefaultWindow
	}
	return s.Window
}

func (s *Strikes) now() time.Time {
	if s.Clock == nil {
		return time.Now()
	}
	return s.Clock.Now()
}

// Strike records a violation now and reports whether the adapter must be
// killed: Limit or more strikes are in the window. It keeps reporting kill
// for further strikes inside the window, so a caller that races with its
// own kill need not remember it.
func (s *Strikes) Strike(reason string) (kill bool) {
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.total++
	s.prune(now)
	if len(s.recent) == s.limit() {
		s.recent = append(s.recent[:0], s.recent[1:]...)
	}
	s.recent = append(s.recent, Strike{At: now, Reason: reason})
	return len(s.recent) >= s.limit()
}

// Count returns the strikes in the window now.
func (s *Strikes) Count() int {
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.prune(now)
	return len(s.recent)
}

// Total returns every strike recorded since the last Reset, for metrics.
func (s *Strikes) Total() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.total
}

// Recent returns a copy of the strikes in the window now, oldest first.
func (s *Strikes) Recent() []Strike {
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.prune(now)
	return append([]Strike(nil), s.recent...)
}

// Reset forgets every strike: a new run starts clean.
func (s *Strikes) Reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.recent = nil
	s.total = 0
}

// prune drops the strikes that have slid out of the window at now.
func (s *Strikes) prune(now time.Time) {
	w := s.window()
	i := 0
	for i < len(s.recent) && now.Sub(s.recent[i].At) >= w {
		i++
	}
	if i > 0 {
		s.recent = append(s.recent[:0], s.recent[i:]...)
	}
}
