package gpioline

import (
	"context"
	"sync"
	"time"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/internal/clock"
)

// Settler publishes the settled level of one input, as Input does with
// its line's (the package doc): Edge for each reported edge, which reads
// at once or (re)starts the debounce window, Settle to read and publish
// the level if it changed, SetFault for the device's state. It is the
// part of Input that does not depend on where the level comes from, so
// that an input read another way (an I/O expander's pin, whose level
// comes with its chip's interrupt) publishes exactly as a line does.
//
// Its debounce timer runs on the clock's goroutine while the caller waits
// for the next edge, hence the lock; it is also held while reporting, so
// that values and states go out in the order they were decided, and none
// goes out once Stop has returned.
type Settler struct {
	level    func() bool
	debounce time.Duration
	clk      clock.Clock
	r        device.Reporter

	mu        sync.Mutex
	timer     clock.Timer // debounce, nil until the first edge
	last      bool        // last value published
	published bool        // whether last means anything yet
	fault     string      // reason of the fault reported, "" while ok
	stopped   bool
}

// NewSettler publishes to r the values level returns, debounced by d on
// clk. level is called with the Settler's lock held.
func NewSettler(level func() bool, d time.Duration, clk clock.Clock, r device.Reporter) *Settler {
	return &Settler{level: level, debounce: d, clk: clk, r: r}
}

// Edge handles one reported edge: a read now, or (re)starting the
// debounce window.
func (s *Settler) Edge() {
	if s.debounce == 0 {
		s.Settle()
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.timer == nil {
		s.timer = s.clk.AfterFunc(s.debounce, s.Settle)
		return
	}
	s.timer.Reset(s.debounce)
}

// Settle reads the level and publishes it if it changed.
func (s *Settler) Settle() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		return
	}
	v := s.level()
	if s.published && v == s.last {
		return
	}
	s.last, s.published = v, true
	s.r.Value(v, s.clk.Now())
}

// SetFault reports a fault with reason, or ok for "", when that changes.
func (s *Settler) SetFault(reason string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped || reason == s.fault {
		return
	}
	s.fault = reason
	if reason == "" {
		s.r.State(device.StateOK, "")
		return
	}
	s.r.State(device.StateFault, reason)
}

// Stop ends the debounce timer; nothing is reported after it returns.
func (s *Settler) Stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stopped = true
	if s.timer != nil {
		s.timer.Stop()
	}
}

// haltRepeat is how often HaltWaits repeats Halt.
const haltRepeat = 50 * time.Millisecond

// HaltWaits cuts short the WaitForEdge calls on p once ctx ends, until
// the returned function is called (when the waiting is over). A Halt
// that lands before WaitForEdge has set its deadline is lost on
// gpioioctl, so it is repeated every 50 ms: stopping takes a moment,
// never a whole wait.
func HaltWaits(ctx context.Context, p interface{ Halt() error }) (done func()) {
	over := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		t := time.NewTicker(haltRepeat)
		defer t.Stop()
		for {
			_ = p.Halt()
			select {
			case <-over:
				return
			case <-t.C:
			}
		}
	})
	return func() {
		close(over)
		stop()
	}
}
