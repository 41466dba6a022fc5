package halhub

import (
	"strings"
	"testing"
	"time"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/openhal"
)

// SetRules (a configuration reload) puts new rules in force at once: a
// maximum lifted lets a write through, a maxOnMs shortened brings a
// device that is on back to safe after the new limit from the reload, and
// a new interlock that does not hold drives its device safe, as any other
// break does.
func TestSetRules(t *testing.T) {
	b := newBench(t)
	valve := b.valves(t, 1)[0]
	admin := b.admin(t)
	wantCode(t, write(admin, "bench.fan", 95), openhal.CodeBlocked, "maximum")
	wantOK(t, write(admin, "bench.heater", true))
	wantOK(t, write(admin, valve, true))
	b.settle(t)

	b.clock.Advance(5 * time.Minute)
	b.hub.SetRules(map[string]device.Rules{
		"bench.heater": {Interlock: []device.Condition{{Device: "bench.door", Op: device.OpEq, Value: false}}, MaxOn: time.Minute},
		"bench.fan":    {RateLimit: 3},
		valve:          {Interlock: []device.Condition{{Device: "bench.door", Op: device.OpEq, Value: true}}},
	})
	b.settle(t)
	wantOK(t, write(admin, "bench.fan", 95))
	// The valve's new interlock does not hold (the door is shut).
	for n := admin.notification("hal/blocked"); !strings.Contains(string(n.Params), `"device":"`+valve+`"`); n = admin.notification("hal/blocked") {
	}
	if b.value(t, valve) != false {
		t.Error("the valve stayed open under an interlock the reload gave it")
	}
	if b.value(t, "bench.heater") != true {
		t.Fatal("the heater went off at the reload")
	}
	b.clock.Advance(time.Minute)
	for n := admin.notification("hal/value"); !strings.Contains(string(n.Params), `"device":"bench.heater","value":false`); n = admin.notification("hal/value") {
	}
	if r, ok := b.hub.RulesOf("bench.fan"); !ok || r.Maximum != nil {
		t.Errorf("bench.fan's rules in force: %+v, %v", r, ok)
	}
}

// RejectPendingOn rejects the requests waiting on the devices a reload
// closes, as {hub, reload}, and leaves the others waiting.
func TestRejectPendingOn(t *testing.T) {
	b := newBench(t)
	valves := b.valves(t, 2)
	agent := b.as(t, "agent", openhal.ScopeControlLow)
	watcher := b.as(t, "watcher", openhal.ScopeRead)
	gone := pending(t, write(agent, valves[0], true))
	kept := pending(t, write(agent, valves[1], true))
	ids := b.hub.RejectPendingOn([]string{valves[0], "bench.led"}, "the device was changed by a configuration reload")
	if len(ids) != 1 || ids[0] != gone.ID {
		t.Errorf("rejected %v, want [%s]", ids, gone.ID)
	}
	n := watcher.notification("hal/confirmationResolved")
	for _, want := range []string{gone.ID, `"status":"rejected"`, `"name":"reload"`, "changed by a configuration reload"} {
		if !strings.Contains(string(n.Params), want) {
			t.Errorf("hal/confirmationResolved %s lacks %s", n.Params, want)
		}
	}
	list := resultOf[openhal.ConfirmationsListResult](t, watcher.call("hal/confirmations/list", map[string]any{"status": "pending"}))
	if len(list.Confirmations) != 1 || list.Confirmations[0].ID != kept.ID {
		t.Errorf("pending after the reload: %+v", list.Confirmations)
	}
}
