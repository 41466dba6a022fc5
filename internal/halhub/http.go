package halhub

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/openhal/gateway/internal/halhub/token"
)

// HTTPOptions configure the HTTP listener's extra endpoints.
type HTTPOptions struct {
	MetricsPublic bool // serve /metrics' Hub figures without a token (metricsview.go)
	// Probes are the parts /healthz checks, by name: each returns nil
	// when its part makes progress. The Hub adds its own ("hub").
	Probes map[string]func(context.Context) error
	// Metrics, when set, appends the gateway's other metrics (the
	// adapters') to /metrics, in the text format, after the Hub's.
	Metrics func(w io.Writer)
	// Console, when set, serves GET / and every GET path the Hub's own
	// routes do not claim (package console: the operator console's
	// files). It never shadows /hal, /healthz or /metrics: the mux picks
	// the longest pattern, and other methods on those stay 405.
	Console http.Handler
	// MCP, when set, serves /mcp, every method (package mcpbridge: the
	// Model Context Protocol's Streamable HTTP, which POSTs, GETs a stream
	// and DELETEs a session).
	MCP http.Handler
}

// healthDeadline is how long a part may take to show progress (spec §2).
const healthDeadline = 5 * time.Second

// Handler serves GET /hal (WebSocket), /healthz and /metrics, and the
// console at / when opt.Console is set. Every answer carries the security
// headers (headers.go), the mux's own redirects and errors included.
func (h *Hub) Handler(opt HTTPOptions) http.Handler {
	probes := map[string]func(context.Context) error{"hub": h.Probe}
	if h.opt.Audit != nil {
		probes["audit"] = h.opt.Audit.Probe
	}
	for k, v := range opt.Probes {
		probes[k] = v
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /hal", h.serveWebSocket)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), healthDeadline)
		defer cancel()
		stuck := append(checkProbes(ctx, probes), h.listenersDown()...)
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		status, body := http.StatusOK, "ok\n"
		if len(stuck) > 0 {
			status, body = http.StatusServiceUnavailable, "stuck: "+strings.Join(stuck, ", ")+"\n"
		}
		w.WriteHeader(status)
		fmt.Fprint(w, body+h.stopHealthLine())
	})
	mux.HandleFunc("GET /metrics", h.serveMetrics(opt)) // metricsview.go: who sees what
	if opt.Console != nil {
		mux.Handle("GET /", opt.Console)
	}
	if opt.MCP != nil {
		// One pattern per method: a method-less "/mcp" would conflict
		// with the console's "GET /" in the mux's precedence rules.
		for _, m := range []string{"GET", "POST", "DELETE"} {
			mux.Handle(m+" /mcp", opt.MCP)
		}
	}
	return withSecurityHeaders(mux)
}

// stopHealthLine is the second line of /healthz while the emergency stop
// is engaged — "stopped by operator admin since <ts>" — and "" otherwise.
// The status code stays about health (a stopped gateway is healthy), but
// whoever looks at the health sees the stop. /healthz needs no token, so
// the line leaves out the stop's reason, free text a client wrote: a
// token shows it (hal/initialize, `gateway status`).
func (h *Hub) stopHealthLine() string {
	info := h.stopInForce(token.Entry{}) // only who and since are told
	if info == nil {
		return ""
	}
	return fmt.Sprintf("stopped by %s %s since %s\n", info.Principal.Kind, info.Principal.Name, info.TS.UTC().Format(time.RFC3339))
}

// checkProbes runs every probe at once and returns, sorted, the names of
// those that did not answer nil before ctx ended.
func checkProbes(ctx context.Context, probes map[string]func(context.Context) error) []string {
	var mu sync.Mutex
	healthy := map[string]bool{}
	var wg sync.WaitGroup
	for name, p := range probes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if p(ctx) == nil {
				mu.Lock()
				healthy[name] = true
				mu.Unlock()
			}
		}()
	}
	wg.Wait() // each probe returns by ctx's deadline
	mu.Lock()
	defer mu.Unlock()
	var stuck []string
	for name := range probes {
		if !healthy[name] {
			stuck = append(stuck, name)
		}
	}
	sort.Strings(stuck)
	return stuck
}

// Probe shows that the Hub's event path makes progress: the registry's
// lock and the Hub's own can be taken (a subscriber wedged while fanning
// out an event holds them), and the safety loop goes round.
func (h *Hub) Probe(ctx context.Context) error {
	done := make(chan struct{})
	go func() {
		h.reg.Seq()
		h.mu.Lock()
		h.mu.Unlock()
		close(done)
	}()
	select {
	case <-done:
	case <-ctx.Done():
		return fmt.Errorf("hub event path: %w", ctx.Err())
	}
	if err := h.loop.probe(ctx); err != nil {
		return fmt.Errorf("hub safety loop: %w", err)
	}
	return nil
}

// guardedConnKey is the key of an HTTP request's guardedConn in its
// context.
type guardedConnKey struct{}

// HTTPServer returns the server of Handler(opt) for the HTTP and HTTPS
// listeners (HTTP/1.1 only: a WebSocket upgrade is HTTP/1.1). Serve it on
// a listener from Guard, under TLS for HTTPS: each HTTP connection then
// counts toward the budget of connections not yet authenticated, from
// accept until a WebSocket on it completes hal/initialize (keep-alive
// connections included); a connection silent for 10 s before its request
// headers, or idle for Limits.HTTPIdleTimeout between requests, is closed
// (the latter counted in /metrics). A connection refused at accept gets
// an answer of its own, 503 with Retry-After (refuse.go).
func (h *Hub) HTTPServer(opt HTTPOptions) *http.Server {
	srv := &http.Server{
		Handler:           h.Handler(opt),
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       h.opt.Limits.HTTPIdleTimeout,
		// Serve calls it once, with the listener, before it accepts:
		// the one place where a listener learns that HTTP is spoken on
		// it, wherever it is served.
		BaseContext: func(ln net.Listener) context.Context {
			if g, ok := ln.(*guardedListener); ok {
				g.speaksHTTP.Store(true)
			}
			return context.Background()
		},
		ConnContext: func(ctx context.Context, c net.Conn) context.Context {
			if g := guardedOf(c); g != nil {
				return context.WithValue(ctx, guardedConnKey{}, g)
			}
			return ctx
		},
		ConnState: h.httpConnState,
	}
	srv.Protocols = new(http.Protocols)
	srv.Protocols.SetHTTP1(true)
	return srv
}

// httpConnState notes when a connection waits idle between requests,
// so that admission may close the longest idle to make room, and counts
// the keep-alive connections the server closes for their idle timeout:
// closed while idle, after a read ran into its deadline (a client that
// closes an idle connection, or admission closing one, is not counted).
// A connection hijacked for a WebSocket is never idle.
func (h *Hub) httpConnState(c net.Conn, state http.ConnState) {
	g := guardedOf(c)
	if g == nil {
		return
	}
	switch state {
	case http.StateIdle:
		g.readTimedOut.Store(false)
		if g.idleTick.Swap(h.idleTicks.Add(1)) == 0 {
			h.stats.httpIdle.Add(1)
		}
		if g.ticket != nil {
			g.ticket.b.changed.notify() // a connection waiting for room may take its place
		}
	case http.StateActive, http.StateHijacked:
		if g.idleTick.Swap(0) != 0 {
			h.stats.httpIdle.Add(-1)
		}
	case http.StateClosed:
		if g.idleTick.Swap(0) != 0 {
			h.stats.httpIdle.Add(-1)
			if g.readTimedOut.Load() {
				h.stats.httpIdleClosed.Add(1)
			}
		}
	}
}
