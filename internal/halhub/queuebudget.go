package halhub

import (
	"context"
	"sync/atomic"
	"time"
)

// Defaults of Limits.QueueBytes and Limits.TotalQueueBytes. One
// connection's queue holds up to two answers of the largest size
// (MaxMessageBytes, 256 KiB) with room for notifications; all of them
// together hold at most 8 MiB, so that 68 connections that stopped
// reading cost the gateway 8 MiB, not 68 × 512 KiB.
const (
	DefaultQueueBytes      = 512 << 10
	DefaultTotalQueueBytes = 8 << 20
)

// stalledAfter is how long a batch must have waited for its client to
// read it before the connection counts as stalled: far longer than a
// client that reads takes to receive the largest answer.
const stalledAfter = 100 * time.Millisecond

// queueBudget counts the bytes every connection's queue holds, against
// Limits.TotalQueueBytes. It never refuses a message itself: passing the
// budget wakes trimQueues, which closes connections until the queues are
// back within it.
type queueBudget struct {
	held atomic.Int64
	max  int64
	over chan struct{} // a token when held passed max
}

func newQueueBudget(max int) *queueBudget {
	return &queueBudget{max: int64(max), over: make(chan struct{}, 1)}
}

func (b *queueBudget) add(n int) {
	if b.held.Add(int64(n)) > b.max && n > 0 {
		select {
		case b.over <- struct{}{}:
		default:
		}
	}
}

// trimQueues closes connections while the queues together hold more than
// their budget, the one holding the most first — among those whose client
// has left a batch unread for stalledAfter if there are any, so that a
// client that reads, caught receiving a large answer, is not taken for
// one that stopped. It runs until ctx ends.
func (h *Hub) trimQueues(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-h.queues.over:
		}
		for h.queues.held.Load() > h.queues.max {
			s, held := h.largestQueue()
			if s == nil {
				break
			}
			h.stats.overflows.Add(1)
			h.log.Warn("closing the connection that holds the most queued bytes: all queues together passed their budget",
				"remote", s.tr.remote(), "principal", s.principalName(), "queued_bytes", held, "budget", h.queues.max)
			s.close("queues over the hub's budget")
		}
	}
}

// largestQueue returns the connection whose queue holds the most bytes,
// preferring stalled ones, and what it holds; nil when none holds any.
func (h *Hub) largestQueue() (*session, int) {
	now := h.clk.Now()
	var best *session
	bestHeld, bestStalled := 0, false
	h.mu.RLock()
	defer h.mu.RUnlock()
	for s := range h.sessions {
		held, takenAt := s.q.held()
		stalled := !takenAt.IsZero() && now.Sub(takenAt) >= stalledAfter
		if held == 0 || (bestStalled && !stalled) {
			continue
		}
		if best == nil || (stalled && !bestStalled) || held > bestHeld {
			best, bestHeld, bestStalled = s, held, stalled
		}
	}
	return best, bestHeld
}
