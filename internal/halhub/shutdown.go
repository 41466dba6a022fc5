package halhub

import (
	"context"
	"sync"

	"github.com/openhal/gateway/openhal"
)

// Shutdown ends every client connection the clean way for a gateway that
// is stopping: from now on a new request is answered at once with a busy
// error (shutting_down); each connection's requests in flight are
// answered; then a WebSocket gets its close frame (1001, going away) and
// a line connection is closed after its last answer. A connection still
// busy when ctx ends is closed as it is. The listeners are the caller's
// to close first, so that nobody new arrives. Call Close afterwards.
func (h *Hub) Shutdown(ctx context.Context) {
	h.closing.Store(true)
	h.mu.RLock()
	all := make([]*session, 0, len(h.sessions))
	for s := range h.sessions {
		if s.local == nil {
			all = append(all, s)
		}
	}
	h.mu.RUnlock()
	var wg sync.WaitGroup
	for _, s := range all {
		wg.Go(func() { s.shutdown(ctx) })
	}
	wg.Wait()
}

// shutdown waits for s's requests in flight to be answered (written),
// within ctx, and closes s cleanly.
func (s *session) shutdown(ctx context.Context) {
	for s.inflight.Load() > 0 {
		select {
		case <-s.idle:
		case <-s.done:
			return
		case <-ctx.Done():
			s.hub.log.Warn("connection closed with requests unanswered at shutdown",
				"remote", s.tr.remote(), "principal", s.principalName(), "in_flight", s.inflight.Load())
			s.close("gateway shutting down")
			return
		}
	}
	if err := s.tr.shutdown(); err != nil {
		s.hub.log.Debug("clean close at shutdown failed", "remote", s.tr.remote(), "err", err)
	}
	s.close("gateway shutting down")
}

// DriveSafeAtShutdown drives every device that has a safe value to it, as
// the Hub's principal {hub, shutdown}, each write audited; it returns the
// devices that got there and those that did not. The gateway calls it at
// a clean stop when the configuration asks for it (hub.safeOnShutdown).
func (h *Hub) DriveSafeAtShutdown() (applied []string, failed []openhal.SafeFailure) {
	applied, failed, auditErr := h.driveAllSafe(openhal.Principal{Kind: openhal.KindHub, Name: "shutdown"}, "gateway shutting down", h.order.enter)
	if auditErr != nil {
		h.log.Error("safe values at shutdown: not every one is in the audit log", "err", auditErr)
	}
	return applied, failed
}
