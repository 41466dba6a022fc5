// Package clocktest provides a clock that only moves when a test says so.
package clocktest

import (
	"context"
	"sync"
	"time"

	"github.com/openhal/gateway/internal/clock"
)

// Fake is a clock.Clock whose time stands still until Advance.
//
// Timer functions run synchronously, on the goroutine that calls Advance,
// one at a time and in the order they are due (timers due at the same
// instant run in the order they were scheduled). While a function runs,
// Now returns the instant it was due, so a function that reads the clock or
// schedules a follow-up sees the time it would see on a real clock. No lock
// is held while it runs: it may call Now, AfterFunc, Stop and Reset.
//
// A timer scheduled for now or the past (d <= 0) runs at the next Advance,
// even Advance(0); a timer that a running function schedules inside the
// advanced span runs within the same Advance.
type Fake struct {
	adv sync.Mutex // one Advance at a time

	mu      sync.Mutex
	now     time.Time
	seq     uint64
	pending []*timer
	changed chan struct{} // closed and replaced whenever pending changes
}

var _ clock.Clock = (*Fake)(nil)

// NewFake returns a fake clock that reads start.
func NewFake(start time.Time) *Fake {
	return &Fake{now: start, changed: make(chan struct{})}
}

// Now returns the fake time.
func (c *Fake) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// AfterFunc schedules f to run when the clock has been advanced by d.
func (c *Fake) AfterFunc(d time.Duration, f func()) clock.Timer {
	t := &timer{c: c, f: f}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.schedule(t, d)
	return t
}

// Advance moves the clock forward by d, running every timer that falls due
// on the way. It returns when they have all returned.
func (c *Fake) Advance(d time.Duration) {
	c.adv.Lock()
	defer c.adv.Unlock()
	c.mu.Lock()
	target := c.now.Add(d)
	for {
		t := c.next(target)
		if t == nil {
			break
		}
		c.remove(t)
		if t.due.After(c.now) {
			c.now = t.due
		}
		c.mu.Unlock()
		t.f()
		c.mu.Lock()
	}
	c.now = target
	c.mu.Unlock()
}

// Pending returns how many timers are scheduled and not yet run or stopped.
func (c *Fake) Pending() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.pending)
}

// WaitPending waits until at least n timers are pending, so that a test can
// let a goroutine arm its timer before advancing the clock. It returns
// ctx's error if that does not happen in time.
func (c *Fake) WaitPending(ctx context.Context, n int) error {
	for {
		c.mu.Lock()
		got, changed := len(c.pending), c.changed
		c.mu.Unlock()
		if got >= n {
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// next returns the earliest pending timer due at or before target.
func (c *Fake) next(target time.Time) *timer {
	var best *timer
	for _, t := range c.pending {
		if t.due.After(target) {
			continue
		}
		if best == nil || t.due.Before(best.due) || (t.due.Equal(best.due) && t.seq < best.seq) {
			best = t
		}
	}
	return best
}

func (c *Fake) schedule(t *timer, d time.Duration) {
	c.seq++
	t.seq = c.seq
	t.due = c.now.Add(d)
	t.pending = true
	c.pending = append(c.pending, t)
	c.notify()
}

// remove takes t off the pending list and reports whether it was on it.
func (c *Fake) remove(t *timer) bool {
	if !t.pending {
		return false
	}
	t.pending = false
	for i, p := range c.pending {
		if p == t {
			c.pending = append(c.pending[:i], c.pending[i+1:]...)
			break
		}
	}
	c.notify()
	return true
}

func (c *Fake) notify() {
	close(c.changed)
	c.changed = make(chan struct{})
}

type timer struct {
	c       *Fake
	f       func()
	due     time.Time
	seq     uint64
	pending bool // guarded by c.mu
}

func (t *timer) Stop() bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	return t.c.remove(t)
}

func (t *timer) Reset(d time.Duration) bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	was := t.c.remove(t)
	t.c.schedule(t, d)
	return was
}
