package halhub

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/openhal/gateway/openhal"
)

// Spec §3: the hal/initialize answer carries `stopped`: null when no stop
// is in force, else {principal, reason, ts} of the stop — one engaged
// before the client connected, or latched by an earlier run and restored
// at start — so that a client learns of a stop it did not see happen.
func TestInitializeStopped(t *testing.T) {
	b := newBench(t)
	stoppedOf := func(c *client, tok string) json.RawMessage {
		t.Helper()
		var res map[string]json.RawMessage
		m := c.initWith(tok)
		if err := json.Unmarshal(m.Result, &res); err != nil || m.Error != nil {
			t.Fatalf("initialize: %s", m.raw)
		}
		st, ok := res["stopped"]
		if !ok {
			t.Fatalf("no stopped in %s", m.raw)
		}
		return st
	}
	if st := stoppedOf(b.dialTCP(t), b.testHub.admin); string(st) != "null" {
		t.Errorf("stopped = %s before any stop, want null", st)
	}

	agent := b.as(t, "bot", openhal.ScopeControlLow)
	wantOK(t, agent.call("hal/stop", map[string]any{"reason": "smoke in the lab"}))
	want := openhal.StopInfo{
		Principal: openhal.Principal{Kind: openhal.KindAgent, Name: "bot", Scope: openhal.ScopeControlLow},
		Reason:    "smoke in the lab", TS: b.clock.Now().UTC(),
	}
	for _, c := range []*client{b.dialTCP(t), b.dialWS(t, "")} {
		var got openhal.StopInfo
		if err := json.Unmarshal(stoppedOf(c, b.testHub.admin), &got); err != nil || !got.TS.Equal(want.TS) || got.Principal != want.Principal || got.Reason != want.Reason {
			t.Errorf("stopped = %+v (%v), want %+v", got, err, want)
		}
	}

	// Latched: a new Hub on the same state directory restores the stop,
	// and tells it.
	b.clock.Advance(time.Hour)
	again := newBench(t, func(o *Options) { o.StateDir = b.dir })
	var got openhal.StopInfo
	c := again.dialTCP(t)
	m := c.initWith(again.testHub.admin)
	var res openhal.InitializeResult
	if err := json.Unmarshal(m.Result, &res); err != nil || res.Stopped == nil {
		t.Fatalf("after a restart: %s", m.raw)
	}
	got = *res.Stopped
	if !got.TS.Equal(want.TS) || got.Principal != want.Principal || got.Reason != want.Reason {
		t.Errorf("restored stop = %+v, want %+v", got, want)
	}

	admin := again.admin(t)
	wantOK(t, admin.call("hal/resume", nil))
	if st := stoppedOf(again.dialTCP(t), again.testHub.admin); string(st) != "null" {
		t.Errorf("stopped = %s after resume, want null", st)
	}
}

// Spec §2: before hal/initialize succeeds a message may be at most
// InitMessageBytes (an unauthenticated peer does not make the Hub buffer
// MaxMessageBytes); after it, MaxMessageBytes. On TCP and WebSocket.
func TestInitMessageLimit(t *testing.T) {
	const initMax, fullMax = 2048, 64 << 10
	th := newTestHub(t, func(o *Options) { o.Limits.InitMessageBytes, o.Limits.MaxMessageBytes = initMax, fullMax })
	big := func(n int) string {
		pad := make([]byte, n)
		for i := range pad {
			pad[i] = 'x'
		}
		return request(7, "hal/ping", map[string]any{"pad": string(pad)})
	}
	for _, tr := range bothTransports {
		t.Run(tr.name, func(t *testing.T) {
			early := tr.dial(th, t)
			early.sendRaw(big(initMax))
			m := early.lastBeforeClose()
			wantCode(t, m, -32600, "too_large")
			if want := "message larger than 2048 bytes"; m.Error.Message != want {
				t.Errorf("message %q, want %q", m.Error.Message, want)
			}
			early.waitClosed()

			late := tr.dial(th, t)
			late.init(th.admin)
			late.sendRaw(big(fullMax - 1024)) // an unknown param: answered, not too large
			if m := late.next(); m.reason() != "unknown_param" {
				t.Fatalf("a large message after hal/initialize: %s", m.raw)
			}
			alive(t, late)
		})
	}
}
