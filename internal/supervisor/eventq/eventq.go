// Package eventq is an adapter's event queue (adapter protocol 1, section
// 4): HAL notifications wait here for the adapter's writer. The daemon's
// side never blocks: when the queue is full the event being pushed is
// dropped and counted, and the next event delivered carries that count.
package eventq

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// DefaultLimit is limits.event_queue's default.
const DefaultLimit = 1024

// ErrClosed is returned by Pop once the queue is closed and empty.
var ErrClosed = errors.New("event queue closed")

// Event is one queued notification, written to the adapter as
// `event {seq, type, data, dropped?}`.
type Event struct {
	// Seq numbers the events this queue accepted, from 1, assigned by
	// Push. A dropped event takes no number: the seqs an adapter sees are
	// consecutive, and loss is told by the dropped count alone, so a gap in
	// seq could only be a daemon bug.
	Seq  uint64
	Type string
	Data any
}

// Queue is a bounded FIFO of events, safe for concurrent use: the HAL hub
// pushes, the adapter's writer pops.
type Queue struct {
	mu      sync.Mutex
	buf     []Event // ring, grown by doubling up to limit (grow)
	limit   int
	head, n int
	seq     uint64        // last seq assigned
	pending uint64        // dropped since the last delivery
	total   uint64        // dropped ever
	closed  bool          // no more pushes; Pop ends when empty
	changed chan struct{} // closed and replaced on every change
}

// New returns an empty queue holding at most limit events; limit <= 0
// means DefaultLimit.
func New(limit int) *Queue {
	if limit <= 0 {
		limit = DefaultLimit
	}
	return &Queue{limit: limit, changed: make(chan struct{})}
}

// grow doubles the full ring, up to limit, and reports whether it did:
// an adapter's queue is nearly always empty, and every adapter has one for
// its whole life, so it holds the room of the most events that have
// waited at once rather than limit events from the start. Called with mu
// held.
func (q *Queue) grow() bool {
	if len(q.buf) >= q.limit {
		return false
	}
	buf := make([]Event, min(max(2*len(q.buf), 8), q.limit))
	for i := range q.n {
		buf[i] = q.buf[(q.head+i)%len(q.buf)]
	}
	q.buf, q.head = buf, 0
	return true
}

// Push appends ev, setting its Seq, and reports whether it was dropped
// instead: because the queue is full (the newest event is the one lost, so
// the adapter still sees a consistent prefix) or closed. It never blocks.
func (q *Queue) Push(ev Event) (dropped bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		q.total++
		return true
	}
	if q.n == len(q.buf) && !q.grow() {
		q.pending++
		q.total++
		return true
	}
	q.seq++
	ev.Seq = q.seq
	q.buf[(q.head+q.n)%len(q.buf)] = ev
	q.n++
	q.notify()
	return false
}

// Pop takes the oldest event, waiting for one if the queue is empty, and
// returns with it the number of events dropped since the previous Pop that
// returned an event; that count starts again from zero. It returns
// ErrClosed once the queue is closed and empty, or ctx's error.
func (q *Queue) Pop(ctx context.Context) (Event, uint64, error) {
	var one [1]Delivery
	got, err := q.PopBatch(ctx, one[:0], 1)
	if err != nil {
		return Event{}, 0, err
	}
	return got[0].Event, got[0].Dropped, nil
}

// Delivery is one popped event and the count of events dropped before it
// since the previous delivery.
type Delivery struct {
	Event
	Dropped uint64
}

// PopBatch is Pop for several events: it waits for one, then takes every
// event already queued, up to max, oldest first, appended to dst. The
// drops since the previous delivery go with the first. A writer that
// writes a batch at once pays one wake-up for many events.
func (q *Queue) PopBatch(ctx context.Context, dst []Delivery, max int) ([]Delivery, error) {
	for {
		q.mu.Lock()
		if q.n > 0 {
			for i := 0; i < max && q.n > 0; i++ {
				dst = append(dst, Delivery{Event: q.buf[q.head], Dropped: q.pending})
				q.pending = 0
				q.buf[q.head] = Event{} // let Data be collected
				q.head = (q.head + 1) % len(q.buf)
				q.n--
			}
			q.notify()
			q.mu.Unlock()
			return dst, nil
		}
		if q.closed {
			q.mu.Unlock()
			return dst, ErrClosed
		}
		changed := q.changed
		q.mu.Unlock()
		select {
		case <-changed:
		case <-ctx.Done():
			return dst, fmt.Errorf("waiting for an event: %w", ctx.Err())
		}
	}
}

// Close refuses further pushes. Events already queued can still be popped;
// then Pop returns ErrClosed. Closing twice is harmless.
func (q *Queue) Close() {
	q.mu.Lock()
	defer q.mu.Unlock()
	if !q.closed {
		q.closed = true
		q.notify()
	}
}

// Drain is the first step of the stop sequence ("queued events are written
// first, for up to a second"): it closes the queue, so that events
// arriving during the stop do not prolong it, and waits until the writer
// has popped every queued event, until deadline (zero: none) or until ctx
// is done. A supervisor on a fake clock passes a zero deadline and a ctx
// its clock cancels. Drain returns when the last event was popped, not
// written; the caller orders its writer's last write before `shutdown`.
func (q *Queue) Drain(ctx context.Context, deadline time.Time) error {
	q.Close()
	if !deadline.IsZero() {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, deadline)
		defer cancel()
	}
	for {
		q.mu.Lock()
		n, changed := q.n, q.changed
		q.mu.Unlock()
		if n == 0 {
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return fmt.Errorf("draining event queue, %d events left: %w", n, ctx.Err())
		}
	}
}

// Len returns how many events are queued.
func (q *Queue) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.n
}

// Dropped returns every event dropped since New, for status and metrics.
func (q *Queue) Dropped() uint64 {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.total
}

// notify wakes every waiter. q.mu must be held.
func (q *Queue) notify() {
	close(q.changed)
	q.changed = make(chan struct{})
}
