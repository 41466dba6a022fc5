package halhub

import (
	"strings"
	"testing"
	"time"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/openhal"
)

func TestMinimumMaximum(t *testing.T) {
	b := newBench(t)
	admin := b.admin(t)
	watcher := b.as(t, "watcher", openhal.ScopeRead)
	wantCode(t, write(admin, "bench.fan", 95), openhal.CodeBlocked, "maximum")
	n := watcher.notification("hal/blocked")
	for _, want := range []string{`"device":"bench.fan"`, `"value":95`, `"rule":"maximum"`, `"name":"root"`} {
		if !strings.Contains(string(n.Params), want) {
			t.Errorf("hal/blocked %s lacks %s", n.raw, want)
		}
	}
	wantCode(t, write(admin, "bench.fan", 5), openhal.CodeBlocked, "minimum")
	wantOK(t, write(admin, "bench.fan", 90))
	wantOK(t, write(admin, "bench.fan", 0)) // the safe value skips the rules
	wantCode(t, write(admin, "bench.fan", 101), openhal.CodeInvalidParams, "out_of_range")
}

// rateLimit: at most N accepted writes in any sliding second, across
// principals.
func TestRateLimitEdge(t *testing.T) {
	b := newBench(t)
	a, c := b.admin(t), b.as(t, "agent", openhal.ScopeControlLow)
	wantOK(t, write(a, "bench.fan", 20))
	b.clock.Advance(400 * time.Millisecond)
	wantOK(t, write(c, "bench.fan", 30))
	wantOK(t, write(a, "bench.fan", 40))
	m := write(c, "bench.fan", 50)
	wantCode(t, m, openhal.CodeBlocked, "rateLimit")
	if m.Error.Data["rule"] != "rateLimit" {
		t.Errorf("data.rule %v", m.Error.Data["rule"])
	}
	b.clock.Advance(600*time.Millisecond - time.Nanosecond)
	wantCode(t, write(c, "bench.fan", 50), openhal.CodeBlocked, "rateLimit")
	b.clock.Advance(time.Nanosecond) // the first write leaves the window
	wantOK(t, write(c, "bench.fan", 50))
}

// interlock: the heater may not leave safe while the door is open, nor
// when the door is offline, faulty or has no value.
func TestInterlockRefuses(t *testing.T) {
	b := newBench(t)
	admin := b.admin(t)
	b.door.Value(true, time.Time{})
	m := write(admin, "bench.heater", true)
	wantCode(t, m, openhal.CodeBlocked, "interlock")
	if !strings.Contains(m.Error.Message, "bench.door eq false") {
		t.Errorf("message %q does not name the condition", m.Error.Message)
	}
	b.door.Value(false, time.Time{})
	b.door.State(device.StateOffline, "")
	m = write(admin, "bench.heater", true)
	wantCode(t, m, openhal.CodeBlocked, "interlock")
	if !strings.Contains(m.Error.Message, "offline") {
		t.Errorf("message %q does not say the door is offline", m.Error.Message)
	}
	b.door.State(device.StateOK, "")
	wantOK(t, write(admin, "bench.heater", true))
}

// An interlock is enforced all the time: opening the door while the
// heater is on drives the heater safe and sends hal/blocked.
func TestInterlockEnforcedContinuously(t *testing.T) {
	b := newBench(t)
	admin := b.admin(t)
	wantOK(t, write(admin, "bench.heater", true))
	b.door.Value(true, time.Time{})
	n := admin.notification("hal/blocked")
	for _, want := range []string{`"device":"bench.heater"`, `"rule":"interlock"`, `"kind":"hub"`, "bench.door eq false"} {
		if !strings.Contains(string(n.Params), want) {
			t.Errorf("hal/blocked %s lacks %s", n.raw, want)
		}
	}
	if b.value(t, "bench.heater") != false {
		t.Error("the heater is still on with the door open")
	}
}

// maxOnMs: from leaving safe, the device goes back by itself after that
// time; rewriting the same value does not extend it.
func TestMaxOn(t *testing.T) {
	b := newBench(t)
	admin := b.admin(t)
	wantOK(t, write(admin, "bench.heater", true))
	b.settle(t)
	b.clock.Advance(9 * time.Minute)
	wantOK(t, write(admin, "bench.heater", true)) // does not extend
	b.settle(t)
	b.clock.Advance(time.Minute)
	n := admin.notification("hal/value")
	for !strings.Contains(string(n.Params), `"device":"bench.heater","value":false`) {
		n = admin.notification("hal/value")
	}
	if b.value(t, "bench.heater") != false {
		t.Error("the heater stayed on past maxOnMs")
	}
}
