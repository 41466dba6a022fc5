package halhub

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/openhal"
)

// httpBench is a Hub serving a stand-in for /mcp that admits each request
// with AdmitHTTP as the principal its query names (token, scope) and,
// given hold, keeps the request (and its connection busy) until release
// is closed.
type httpBench struct {
	t       *testing.T
	h       *Hub
	url     string
	release chan struct{}
	once    sync.Once
	held    []*http.Response // the answers of requests held open
}

func newHTTPBench(t *testing.T, lim Limits) *httpBench {
	h := New(device.NewRegistry(nil), Options{Version: "test", Limits: lim, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	t.Cleanup(h.Close)
	b := &httpBench{t: t, h: h, release: make(chan struct{})}
	srv := httptest.NewUnstartedServer(nil)
	srv.Config = h.HTTPServer(HTTPOptions{MCP: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if err := h.AdmitHTTP(r, openhal.Principal{Name: q.Get("token"), Scope: openhal.Scope(q.Get("scope"))}); err != nil {
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		}
		if q.Has("hold") {
			w.WriteHeader(http.StatusOK)
			w.(http.Flusher).Flush()
			select {
			case <-b.release:
			case <-r.Context().Done():
			}
		}
	})})
	srv.Listener = h.Guard("http", srv.Listener, nil)
	srv.Start()
	t.Cleanup(srv.Close)
	t.Cleanup(b.releaseHeld) // before srv.Close: the held requests end
	b.url = srv.URL
	return b
}

// post sends one request as token (of scope) over tr and returns its
// status and body; with hold the request stays open (its connection busy)
// until b.release is closed, and post returns once the headers are in.
func (b *httpBench) post(tr *http.Transport, token string, scope openhal.Scope, hold bool) (int, string) {
	b.t.Helper()
	q := url.Values{"token": {token}, "scope": {string(scope)}}
	if hold {
		q.Set("hold", "1")
	}
	resp, err := (&http.Client{Transport: tr}).Post(b.url+"/mcp?"+q.Encode(), "application/json", nil)
	if err != nil {
		b.t.Fatal(err)
	}
	if hold && resp.StatusCode == http.StatusOK {
		b.held = append(b.held, resp)
		return resp.StatusCode, ""
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp.StatusCode, string(body)
}

// releaseHeld ends the requests held open and reads their answers to the
// end, so that their connections wait idle.
func (b *httpBench) releaseHeld() {
	b.once.Do(func() {
		close(b.release)
		for _, resp := range b.held {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	})
}

// waitIdle waits until n HTTP connections of token (any for "") holding
// a slot wait idle: the server marks a connection idle just after it has
// written an answer, when the client may have read it already.
func (b *httpBench) waitIdle(token string, n int) {
	b.t.Helper()
	waitFor(b.t, 5*time.Second, "idle connections", func() bool {
		b.h.mu.RLock()
		defer b.h.mu.RUnlock()
		return b.h.idleHTTPSlots(token, n) != nil
	})
}

func (b *httpBench) slots() int {
	b.h.mu.Lock()
	defer b.h.mu.Unlock()
	return b.h.slots
}

// AdmitHTTP (/mcp): an HTTP connection whose request carried a valid
// token gives back its ticket and takes one of the Hub's slots, once per
// connection, until it closes. A connection waiting idle between requests
// gives its slot up to a newcomer; past the slots, with none idle, the
// newcomer is refused, but for an admin's on the reserve.
func TestAdmitHTTP(t *testing.T) {
	t.Parallel()
	lim := DefaultLimits()
	lim.MaxConnections, lim.AdminReserve = 1, 1
	b := newHTTPBench(t, lim)

	agent := &http.Transport{}
	defer agent.CloseIdleConnections()
	for range 2 { // one connection, kept alive: one slot
		if code, body := b.post(agent, "agent", openhal.ScopeControlLow, false); code != http.StatusOK {
			t.Fatalf("the agent's request: %d %s", code, body)
		}
	}
	if n, _ := b.h.Unauthenticated(); n != 0 || b.slots() != 1 {
		t.Fatalf("after the agent's requests: %d not yet authenticated, %d slots; want 0 and 1", n, b.slots())
	}
	// The agent's connection waits idle: another's takes its slot.
	b.waitIdle("agent", 1)
	busy := &http.Transport{}
	defer busy.CloseIdleConnections()
	if code, body := b.post(busy, "other", openhal.ScopeControlLow, true); code != http.StatusOK {
		t.Fatalf("another agent's connection, the first one idle: %d %s", code, body)
	}
	if got := b.h.stats.idleReclaimed.Load(); got != 1 || b.slots() != 1 {
		t.Errorf("%d idle connections closed to make room, %d slots; want 1 and 1", got, b.slots())
	}
	// Now the slot's connection is in a request: nothing to take back.
	// (A new transport: the agent's may not have seen its connection
	// closed yet, and would send on it.)
	agent.CloseIdleConnections()
	agent = &http.Transport{}
	defer agent.CloseIdleConnections()
	if code, body := b.post(agent, "agent", openhal.ScopeControlLow, false); code != http.StatusServiceUnavailable || !strings.Contains(body, "all 1 connections are taken") {
		t.Errorf("an agent's connection with no slot free and none idle: %d %q, want 503", code, body)
	}
	admin := &http.Transport{}
	defer admin.CloseIdleConnections()
	if code, body := b.post(admin, "root", openhal.ScopeAdmin, false); code != http.StatusOK {
		t.Errorf("an admin's connection on the reserve: %d %s", code, body)
	}
	b.releaseHeld()
	busy.CloseIdleConnections()
	admin.CloseIdleConnections()
	waitFor(t, 5*time.Second, "the slots given back", func() bool { return b.slots() == 0 })
	if code, body := b.post(agent, "agent", openhal.ScopeControlLow, false); code != http.StatusOK {
		t.Errorf("once the slots are free: %d %s", code, body)
	}
}
