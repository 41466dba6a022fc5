// Package gpioeventtest is a stand-in for a requested GPIO line: tests
// send it edges (and drops, and failures) and a reader gets them as it
// would get the kernel's events.
package gpioeventtest

import (
	"context"
	"sync"
	"time"

	"github.com/openhal/gateway/internal/clock"
	"github.com/openhal/gateway/internal/hw/gpioevent"
)

// boot is where a Fake's clock starts: an uptime, as CLOCK_MONOTONIC is.
const boot = 1000 * time.Second

// Fake is a gpioevent.Source whose events a test makes. Its clock is the
// clock it was made with, moved to an uptime: an edge sent with Edge is
// stamped with that clock's time.
type Fake struct {
	clk   clock.Clock
	start time.Time

	mu      sync.Mutex
	queue   []gpioevent.Event
	err     error // returned by the next Read, once the queue is empty
	closed  bool
	seq     uint32 // the line's last LineSeqno
	reading bool   // a Read waits on an empty queue
	changed chan struct{}
}

var _ gpioevent.Source = (*Fake)(nil)

// New returns a Fake on clk's time.
func New(clk clock.Clock) *Fake {
	return &Fake{clk: clk, start: clk.Now(), changed: make(chan struct{})}
}

// Now is clk's time since New, plus an uptime.
func (f *Fake) Now() time.Duration { return boot + f.clk.Now().Sub(f.start) }

// Edge sends a rising edge stamped now.
func (f *Fake) Edge() { f.EdgeAt(f.Now(), true) }

// EdgeAt sends an edge stamped at (on the Fake's clock, see Now), the
// next of the line.
func (f *Fake) EdgeAt(at time.Duration, rising bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.seq++
	f.queue = append(f.queue, gpioevent.Event{Time: at, Rising: rising, Seqno: f.seq, LineSeqno: f.seq})
	f.signal()
}

// Drop numbers n edges that never reach the reader, as the kernel does
// when its buffer is full: the next edge sent tells the gap.
func (f *Fake) Drop(n uint32) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.seq += n
}

// Fail makes the next Read, once the edges sent are read, return err, as
// a line whose chip went away does.
func (f *Fake) Fail(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.err = err
	f.signal()
}

// Read waits for edges (or a failure, or Close) and returns them.
func (f *Fake) Read(events []gpioevent.Event) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for len(f.queue) == 0 && f.err == nil && !f.closed {
		f.reading = true
		f.signal()
		ch := f.changed
		f.mu.Unlock()
		<-ch
		f.mu.Lock()
	}
	f.reading = false
	f.signal()
	switch {
	case f.closed:
		return 0, gpioevent.ErrClosed
	case len(f.queue) == 0:
		err := f.err
		f.err = nil
		return 0, err
	}
	n := copy(events, f.queue)
	f.queue = f.queue[n:]
	return n, nil
}

// Close makes Read return ErrClosed.
func (f *Fake) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.closed = true
	f.signal()
	return nil
}

// Closed reports whether Close was called.
func (f *Fake) Closed() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.closed
}

// WaitRead waits until every edge sent has been taken and the reader is
// back in Read waiting for more: whatever it does with edges is done.
func (f *Fake) WaitRead(ctx context.Context) error {
	for {
		f.mu.Lock()
		done := f.reading && len(f.queue) == 0 && f.err == nil
		ch := f.changed
		f.mu.Unlock()
		if done {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// signal wakes whoever waits on a change; f.mu is held.
func (f *Fake) signal() {
	close(f.changed)
	f.changed = make(chan struct{})
}
