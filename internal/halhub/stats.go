package halhub

import (
	"fmt"
	"io"
	"runtime"
	"sync/atomic"
)

// stats are the Hub's counters for /metrics.
type stats struct {
	connections  atomic.Uint64 // accepted and admitted
	refused      atomic.Uint64 // refused at accept: too many connections
	messagesIn   atomic.Uint64 // of the connections that ended; see Hub.received
	requests     atomic.Uint64 // the same
	errors       atomic.Uint64 // error answers
	unauthorized atomic.Uint64
	events       atomic.Uint64 // notifications fanned out
	overflows    atomic.Uint64 // connections closed for a full queue

	full           atomic.Uint64 // hal/initialize answered BUSY "full": no slot free
	tokenFull      atomic.Uint64 // hal/initialize answered BUSY "token_full": the token holds its share
	idleReclaimed  atomic.Uint64 // idle HTTP keep-alive connections closed to make room
	refusedBusy    atomic.Uint64 // refused HTTP connections answered 503
	httpIdle       atomic.Int64  // HTTP keep-alive connections waiting idle now
	waited         atomic.Uint64 // connections admitted after waiting for room
	rateLimited    atomic.Uint64 // UNAUTHORIZED answered rate_limited
	httpIdleClosed atomic.Uint64 // HTTP keep-alive connections closed for their idle timeout
	acceptErrors   atomic.Uint64 // accepts that failed for a reason not the peer's
}

// writeMetrics writes the Hub's figures in the Prometheus text format.
func (h *Hub) writeMetrics(w io.Writer) {
	counter := func(name, help string, v uint64) {
		fmt.Fprintf(w, "# HELP %s %s\n# TYPE %s counter\n%s %d\n", name, help, name, name, v)
	}
	gauge := func(name, help string, v int) {
		fmt.Fprintf(w, "# HELP %s %s\n# TYPE %s gauge\n%s %d\n", name, help, name, name, v)
	}
	gauge("gateway_hal_connections", "Open HAL connections.", h.Connections())
	gauge("gateway_devices", "Registered devices.", len(h.reg.List()))
	counter("gateway_hal_connections_total", "HAL connections admitted.", h.stats.connections.Load())
	counter("gateway_hal_connections_refused_total", "Connections refused at accept: the budget of connections not yet authenticated was used up, none of them idle.", h.stats.refused.Load())
	messages, requests := h.received()
	counter("gateway_hal_messages_received_total", "HAL messages received.", messages)
	counter("gateway_hal_requests_total", "HAL requests received.", requests)
	counter("gateway_hal_errors_total", "HAL error answers.", h.stats.errors.Load())
	counter("gateway_hal_unauthorized_total", "UNAUTHORIZED answers.", h.stats.unauthorized.Load())
	counter("gateway_hal_events_total", "Device events sent to clients.", h.stats.events.Load())
	counter("gateway_hal_queue_overflows_total", "Connections closed because their notification queue was full.", h.stats.overflows.Load())
	counter("gateway_hal_seq", "Hub-wide value seq of this boot.", h.reg.Seq())
	stopped := 0
	if h.Stopped() {
		stopped = 1
	}
	gauge("gateway_emergency_stop", "1 while the emergency stop is engaged.", stopped)
	gauge("gateway_confirmations_pending", "Confirmation Requests waiting for an admin.", h.confirms.pending())
	if h.opt.Audit != nil {
		st := h.opt.Audit.Stats()
		counter("gateway_audit_entries_total", "Audit entries written by this process.", st.Entries)
		counter("gateway_audit_syncs_total", "Audit log syncs (entries share syncs).", st.Syncs)
		counter("gateway_audit_errors_total", "Audit log write or sync failures.", st.Errors)
	}
	network, unix := h.Unauthenticated()
	gauge("gateway_hal_connections_unauthenticated", "Connections not yet authenticated (HTTP connections included), network listeners and Unix socket.", network+unix)
	counter("gateway_hal_connections_full_total", "hal/initialize answered BUSY full: no connection slot free for the token.", h.stats.full.Load())
	counter("gateway_hal_connections_token_full_total", "hal/initialize answered BUSY token_full (on /mcp, 503): the token holds all the connections one token may.", h.stats.tokenFull.Load())
	gauge("gateway_hal_token_connections_max", "Connection slots held by the token that holds the most.", h.mostTokenSlots())
	gauge("gateway_http_connections_idle", "HTTP keep-alive connections waiting idle between requests.", int(h.stats.httpIdle.Load()))
	counter("gateway_http_idle_reclaimed_total", "HTTP keep-alive connections waiting idle closed to make room for a new connection.", h.stats.idleReclaimed.Load())
	counter("gateway_hal_connections_waited_total", "Connections admitted after waiting for room in the budget of connections not yet authenticated.", h.stats.waited.Load())
	counter("gateway_http_refused_busy_total", "HTTP connections refused at accept that were answered 503 with Retry-After.", h.stats.refusedBusy.Load())
	counter("gateway_hal_rate_limited_total", "UNAUTHORIZED answers rate_limited (their connections closed).", h.stats.rateLimited.Load())
	counter("gateway_http_idle_closed_total", "HTTP keep-alive connections closed after their idle timeout.", h.stats.httpIdleClosed.Load())
	counter("gateway_listener_accept_errors_total", "Accepts that failed for a reason not the peer's (each backed off).", h.stats.acceptErrors.Load())
	gauge("gateway_listeners_backing_off", "Listeners backing off instead of accepting.", len(h.listenersDown()))
	// Prometheus's own name: a goroutine leak shows as growth over a long
	// run (make soak watches it); memory and descriptors are in /proc.
	gauge("go_goroutines", "Goroutines of the gateway process.", runtime.NumGoroutine())
}

// received returns the messages and requests received so far: those of
// the connections that ended, and of those still open.
func (h *Hub) received() (messages, requests uint64) {
	h.mu.RLock()
	defer h.mu.RUnlock()
	messages, requests = h.stats.messagesIn.Load(), h.stats.requests.Load()
	for s := range h.sessions {
		messages += s.messagesIn.Load()
		requests += s.requests.Load()
	}
	return messages, requests
}
