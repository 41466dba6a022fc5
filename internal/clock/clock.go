// Package clock is the seam between the gateway's timers and the time they
// run on. Everything that waits on a duration the protocol or the sim board
// specifies (polls, periodic lines, timeouts) takes a Clock, so that tests
// step time with clocktest.Fake instead of sleeping.
package clock

import (
	"context"
	"time"
)

// Clock tells the time and runs functions later.
type Clock interface {
	// Now returns the current time. The real clock's reading carries a
	// monotonic component, as time.Now does.
	Now() time.Time
	// AfterFunc calls f once, d from now, as time.AfterFunc does. Where f
	// runs depends on the clock: its own goroutine for Real, the goroutine
	// that advances a fake clock for clocktest.Fake.
	AfterFunc(d time.Duration, f func()) Timer
}

// Timer is a function scheduled by AfterFunc. Its methods mean what they
// mean on *time.Timer: Stop and Reset report whether the timer was still
// pending, and a Stop that returns false means f has run or is running.
type Timer interface {
	Stop() bool
	Reset(d time.Duration) bool
}

// Real returns the system clock.
func Real() Clock { return realClock{} }

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

func (realClock) AfterFunc(d time.Duration, f func()) Timer { return time.AfterFunc(d, f) }

// Sleep waits d on c, or until ctx is done, and then returns ctx's error.
// It is the one context-aware wait of the gateway: drivers waiting for a
// conversion, retries after a failure.
func Sleep(ctx context.Context, c Clock, d time.Duration) error {
	done := make(chan struct{})
	t := c.AfterFunc(d, func() { close(done) })
	defer t.Stop()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// SleepReal is Sleep on the system clock, the shape drivers take for an
// injectable wait.
func SleepReal(ctx context.Context, d time.Duration) error { return Sleep(ctx, Real(), d) }
