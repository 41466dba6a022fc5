// Package restart decides when a crashed adapter is started again and when
// it has crashed often enough to be failed (adapter protocol 1, section 7),
// and names the adapter states of section 3.
//
// It holds no processes and reads no clock: the supervisor passes the
// instants it observed, so the policy is tested as a table of times.
package restart

import "time"

// Policy is the restart schedule. The zero value is not useful; use
// DefaultPolicy, whose numbers are the protocol's.
type Policy struct {
	// Base is the delay after the first consecutive crash.
	Base time.Duration
	// Max caps the delay, which doubles at each consecutive crash.
	Max time.Duration
	// ResetAfter is how long a run must last for its crash to count as
	// the first of a new series rather than the next of the old one.
	ResetAfter time.Duration
	// MaxCrashes is the consecutive crash that fails the adapter
	// (crashloop) instead of restarting it.
	MaxCrashes int
}

// DefaultPolicy returns section 7's numbers: 1 s doubling to 60 s, a 60 s
// run resets the count, the 8th consecutive crash fails the adapter.
func DefaultPolicy() Policy {
	return Policy{Base: time.Second, Max: 60 * time.Second, ResetAfter: 60 * time.Second, MaxCrashes: 8}
}

// Delay returns the wait before restarting after the n-th consecutive crash
// (n >= 1): Base doubled n-1 times, capped at Max. It says nothing about
// whether the n-th crash fails the adapter; Tracker.Crashed does.
func (p Policy) Delay(n int) time.Duration {
	if n < 1 {
		n = 1
	}
	d := p.Base
	for i := 1; i < n; i++ {
		if d >= p.Max || d > p.Max/2 {
			return p.Max
		}
		d *= 2
	}
	return min(d, p.Max)
}

// Tracker counts one adapter's consecutive crashes. It is not safe for
// concurrent use: the adapter's supervisor goroutine owns it.
//
// "After 8 consecutive crashes the adapter is failed" is read as: the 8th
// consecutive crash is not restarted. So a service is started at most 8
// times in a series (the first start and 7 restarts, after 1, 2, 4, 8, 16,
// 32 and 60 s) and the 8th crash fails it with reason crashloop.
//
// Tools share the count: a tool that crashes is started again by the next
// request "under the same count", so the supervisor calls Crashed for a
// tool too, may ignore the delay, and fails the tool when Crashed says so.
type Tracker struct {
	policy  Policy
	n       int       // consecutive crashes so far
	started time.Time // start of the current run; zero when none
	failed  bool
}

// NewTracker returns a tracker with no crashes under p.
func NewTracker(p Policy) *Tracker { return &Tracker{policy: p} }

// Started records that a run began at at (the spawn).
func (t *Tracker) Started(at time.Time) { t.started = at }

// Crashed records that the current run crashed at at. It returns the delay
// before the next start, or failed when this crash is the MaxCrashes-th in
// a row (crashloop); then the delay is zero. A run that lasted ResetAfter
// or longer resets the count first, so its crash counts as the first.
// A crash with no recorded start (Started not called) is a run of zero
// length. Once failed, every further crash reports failed until Reset.
func (t *Tracker) Crashed(at time.Time) (delay time.Duration, failed bool) {
	if !t.started.IsZero() && at.Sub(t.started) >= t.policy.ResetAfter {
		t.n = 0
	}
	t.started = time.Time{}
	t.n++
	if t.failed || t.n >= t.policy.MaxCrashes {
		t.failed = true
		return 0, true
	}
	return t.policy.Delay(t.n), false
}

// CleanIdleStop records that a tool was stopped cleanly after its idle
// time: the run ended well, so the series of crashes is over.
func (t *Tracker) CleanIdleStop() {
	t.n = 0
	t.started = time.Time{}
}

// Reset forgets every crash and a crashloop failure: an operator reset or
// reinstall.
func (t *Tracker) Reset() {
	t.n = 0
	t.started = time.Time{}
	t.failed = false
}

// Consecutive returns the crashes counted in the current series.
func (t *Tracker) Consecutive() int { return t.n }
