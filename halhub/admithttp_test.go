package halhub

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/openhal"
)

// AdmitHTTP (/mcp): an HTTP connection whose request carried a valid
// token gives back its ticket and takes one of the Hub's slots, once per
// connection, until it closes; past the slots it is refused, but for an
// admin's on the reserve.
func TestAdmitHTTP(t *testing.T) {
	t.Parallel()
	lim := DefaultLimits()
	lim.MaxConnections, lim.AdminReserve = 1, 1
	h := New(device.NewRegistry(nil), Options{Version: "test", Limits: lim, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	defer h.Close()
	srv := httptest.NewUnstartedServer(nil)
	srv.Config = h.HTTPServer(HTTPOptions{MCP: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !h.AdmitHTTP(r, openhal.Scope(r.URL.Query().Get("scope"))) {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	})})
	srv.Listener = h.Guard("http", srv.Listener, nil)
	srv.Start()
	defer srv.Close()
	slots := func() int { h.mu.Lock(); defer h.mu.Unlock(); return h.slots }
	post := func(tr *http.Transport, scope openhal.Scope) int {
		t.Helper()
		resp, err := (&http.Client{Transport: tr}).Post(srv.URL+"/mcp?scope="+string(scope), "application/json", nil)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}

	agent := &http.Transport{}
	for range 2 { // one connection, kept alive: one slot
		if code := post(agent, openhal.ScopeControlLow); code != http.StatusOK {
			t.Fatalf("the agent's request: %d", code)
		}
	}
	if n, _ := h.Unauthenticated(); n != 0 || slots() != 1 {
		t.Fatalf("after the agent's requests: %d not yet authenticated, %d slots; want 0 and 1", n, slots())
	}
	other := &http.Transport{}
	defer other.CloseIdleConnections()
	if code := post(other, openhal.ScopeControlLow); code != http.StatusServiceUnavailable {
		t.Errorf("a second agent's connection with no slot free: %d, want 503", code)
	}
	admin := &http.Transport{}
	defer admin.CloseIdleConnections()
	if code := post(admin, openhal.ScopeAdmin); code != http.StatusOK {
		t.Errorf("an admin's connection on the reserve: %d", code)
	}
	agent.CloseIdleConnections()
	admin.CloseIdleConnections()
	waitFor(t, 5*time.Second, "the slots given back", func() bool { return slots() == 0 })
	if code := post(other, openhal.ScopeControlLow); code != http.StatusOK {
		t.Errorf("once the slots are free: %d", code)
	}
}
