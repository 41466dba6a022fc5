package halhub

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/openhal/gateway/openhal"
)

// Spec §2: no one token holds more than MaxConnectionsPerToken of the
// slots, on any transport, an admin token's included; past it
// hal/initialize is BUSY token_full and the connection closed, while
// other tokens still get in. A slot given back (the connection closed) is
// the token's again.
func TestTokenSlots(t *testing.T) {
	t.Parallel()
	const perToken = 3
	th := newTestHub(t, func(o *Options) {
		o.Limits.MaxConnections, o.Limits.AdminReserve, o.Limits.MaxConnectionsPerToken = 8, 2, perToken
	})
	agent := th.token(t, "agent", openhal.ScopeControlLow)
	operator := th.token(t, "operator", openhal.ScopeControlHigh)
	dials := []func(*testing.T) *client{
		func(t *testing.T) *client { return th.dialTCP(t) },
		func(t *testing.T) *client { return th.dialWS(t, "") },
	}
	var agents []*client
	for i := range perToken {
		c := dials[i%2](t)
		c.init(agent)
		agents = append(agents, c)
	}
	for i, dial := range dials {
		c := dial(t)
		m := c.initWith(agent)
		wantCode(t, m, openhal.CodeBusy, "token_full")
		if !strings.Contains(m.Error.Message, `token "agent" holds all 3 connections one token may`) {
			t.Errorf("transport %d: %s", i, m.raw)
		}
		c.waitClosed()
	}
	th.dialWS(t, "").init(operator)
	for range perToken {
		th.dialTCP(t).init(th.admin)
	}
	wantCode(t, th.dialTCP(t).initWith(th.admin), openhal.CodeBusy, "token_full")
	if got := th.hub.stats.tokenFull.Load(); got != 3 {
		t.Errorf("%d answered token_full, want 3", got)
	}
	if got := th.hub.mostTokenSlots(); got != perToken {
		t.Errorf("the most slots one token holds: %d, want %d", got, perToken)
	}
	for _, c := range agents {
		alive(t, c)
	}
	agents[0].close()
	waitFor(t, 5*time.Second, "the agent's slot back", func() bool {
		th.hub.mu.RLock()
		defer th.hub.mu.RUnlock()
		return th.hub.tokenSlots["agent"] == perToken-1
	})
	th.dialTCP(t).init(agent)
}

// Spec §2: /mcp's connections count against their token with its
// sessions; an idle one of the token gives its slot to the token's
// newcomer, and nobody else's is taken for it.
func TestTokenSlotsHTTP(t *testing.T) {
	t.Parallel()
	lim := DefaultLimits()
	lim.MaxConnectionsPerToken = 2
	b := newHTTPBench(t, lim)
	agent := &http.Transport{}
	defer agent.CloseIdleConnections()
	other := &http.Transport{}
	defer other.CloseIdleConnections()
	if code, body := b.post(other, "other", openhal.ScopeControlLow, false); code != http.StatusOK {
		t.Fatalf("another token's request: %d %s", code, body)
	}
	for range 2 { // two connections, each busy
		if code, body := b.post(&http.Transport{}, "agent", openhal.ScopeControlLow, true); code != http.StatusOK {
			t.Fatalf("the agent's request: %d %s", code, body)
		}
	}
	code, body := b.post(agent, "agent", openhal.ScopeControlLow, false)
	if code != http.StatusServiceUnavailable || !strings.Contains(body, `token "agent" holds all 2 connections one token may (hub.limits.maxConnectionsPerToken)`) {
		t.Fatalf("the agent's third connection: %d %q, want 503 naming the bound", code, body)
	}
	if got := b.h.stats.idleReclaimed.Load(); got != 0 {
		t.Errorf("%d idle connections closed: another token's idle one was taken", got)
	}
	b.releaseHeld() // the agent's two connections wait idle now
	b.waitIdle("agent", 2)
	if code, body := b.post(agent, "agent", openhal.ScopeControlLow, false); code != http.StatusOK {
		t.Fatalf("the agent's third connection, two of its own idle: %d %s", code, body)
	}
	if got := b.h.stats.idleReclaimed.Load(); got != 1 {
		t.Errorf("%d idle connections closed, want 1", got)
	}
	if got := b.h.stats.tokenFull.Load(); got != 1 {
		t.Errorf("%d refused token_full, want 1", got)
	}
	b.h.mu.RLock()
	agentSlots, otherSlots := b.h.tokenSlots["agent"], b.h.tokenSlots["other"]
	b.h.mu.RUnlock()
	if agentSlots != 2 || otherSlots != 1 {
		t.Errorf("slots: agent %d, other %d; want 2 and 1", agentSlots, otherSlots)
	}
}
