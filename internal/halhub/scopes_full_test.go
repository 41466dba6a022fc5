package halhub

import (
	"testing"

	"github.com/openhal/gateway/openhal"
)

// Spec §4's table, row by row, for every scope.
func TestScopeTable(t *testing.T) {
	b := newBench(t)
	type row struct {
		scope               openhal.Scope
		low, high, safe     string // outcome of writing the led, the heater on, the heater's safe value
		stop, resume, admin bool
	}
	for _, r := range []row{
		{openhal.ScopeRead, "FORBIDDEN", "FORBIDDEN", "FORBIDDEN", false, false, false},
		{openhal.ScopeControlLow, "applied", "pending", "applied", true, false, false},
		{openhal.ScopeControlHigh, "applied", "applied", "applied", true, false, false},
		{openhal.ScopeAdmin, "applied", "applied", "applied", true, true, true},
	} {
		t.Run(string(r.scope), func(t *testing.T) {
			c := b.as(t, "p-"+string(r.scope), r.scope)
			outcome := func(m msg) string {
				if m.Error != nil {
					return openhal.CodeName(m.Error.Code)
				}
				return resultOf[map[string]any](t, m)["status"].(string)
			}
			if got := outcome(write(c, "bench.led", true)); got != r.low {
				t.Errorf("low-risk write: %s, want %s", got, r.low)
			}
			if got := outcome(write(c, "bench.heater", true)); got != r.high {
				t.Errorf("high-risk write: %s, want %s", got, r.high)
			}
			if got := outcome(write(c, "bench.heater", false)); got != r.safe {
				t.Errorf("safe value write: %s, want %s", got, r.safe)
			}
			for method, allowed := range map[string]bool{"hal/stop": r.stop, "hal/resume": r.resume, "hal/audit/list": r.admin, "hal/confirmations/approve": r.admin, "hal/confirmations/reject": r.admin} {
				m := c.call(method, map[string]any{"id": "c-nope"})
				forbidden := m.Error != nil && m.Error.Code == openhal.CodeForbidden
				if forbidden == allowed {
					t.Errorf("%s: %s (allowed: %v)", method, m.raw, allowed)
				}
			}
			c.call("hal/resume", nil)
			b.admin(t).call("hal/resume", nil)
		})
	}
}

// A reader-scope client gets FORBIDDEN for every method it may not call,
// before its params are looked at; what it may call works.
func TestReaderForbidden(t *testing.T) {
	b := newBench(t)
	c := b.as(t, "reader", openhal.ScopeRead)
	for _, method := range []string{"hal/write", "hal/stop", "hal/resume", "hal/confirmations/approve", "hal/confirmations/reject", "hal/confirmations/cancel", "hal/audit/list"} {
		wantCode(t, c.call(method, map[string]any{"bogus": 1}), openhal.CodeForbidden, "scope")
	}
	for _, method := range []string{"hal/ping", "hal/devices/list", "hal/confirmations/list"} {
		wantOK(t, c.call(method, nil))
	}
	wantOK(t, c.call("hal/read", map[string]any{"device": "bench.led"}))
}

// Spec §5: at control, a write that would need a confirmation is
// FORBIDDEN, and hal/stop and hal/resume are there.
func TestControlLevelHasNoConfirmations(t *testing.T) {
	b := newBench(t, func(o *Options) { o.Level = openhal.LevelControl })
	agent := b.as(t, "agent", openhal.ScopeControlLow)
	wantCode(t, write(agent, "bench.heater", true), openhal.CodeForbidden, "confirmation_unavailable")
	wantOK(t, write(agent, "bench.heater", false))
	admin := b.admin(t)
	wantOK(t, admin.call("hal/stop", nil))
	wantOK(t, admin.call("hal/resume", nil))
	wantCode(t, admin.call("hal/confirmations/approve", map[string]any{"id": "c-1"}), openhal.CodeMethodNotFound, "")
	wantCode(t, admin.call("hal/audit/list", nil), openhal.CodeMethodNotFound, "")
	for _, v := range b.heater.written() {
		if v != false {
			t.Errorf("the heater was written %v without a confirmation", v)
		}
	}
}
