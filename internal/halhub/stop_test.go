package halhub

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/openhal"
)

// Spec §6, "Emergency stop": any control_low+ principal stops; pending
// confirmations are rejected; every device with a safe value is driven to
// it; hal/stopped goes to every client; writes get STOPPED but safe values;
// only an admin resumes.
func TestEmergencyStop(t *testing.T) {
	b := newBench(t)
	admin := b.admin(t)
	wantOK(t, write(admin, "bench.heater", true))
	wantOK(t, write(admin, "bench.fan", 50))
	wantOK(t, write(admin, "bench.led", true))
	agent := b.as(t, "agent", openhal.ScopeControlLow)
	c := pending(t, write(agent, "bench.heater", true))
	watcher := b.as(t, "watcher", openhal.ScopeRead)

	res := resultOf[openhal.StopResult](t, agent.call("hal/stop", map[string]any{"reason": "smoke"}))
	if !res.Stopped || res.AlreadyStopped || strings.Join(res.SafeApplied, ",") != "bench.fan,bench.heater" || len(res.Failed) != 0 {
		t.Fatalf("stop result %+v", res)
	}
	if b.value(t, "bench.heater") != false || b.value(t, "bench.fan") != 0.0 || b.value(t, "bench.led") != true {
		t.Errorf("after the stop: heater %v fan %v led %v", b.value(t, "bench.heater"), b.value(t, "bench.fan"), b.value(t, "bench.led"))
	}
	n := watcher.notification("hal/stopped")
	for _, want := range []string{`"name":"agent"`, `"reason":"smoke"`, `"safeApplied":["bench.fan","bench.heater"]`} {
		if !strings.Contains(string(n.Params), want) {
			t.Errorf("hal/stopped %s lacks %s", n.raw, want)
		}
	}
	if n := watcher.notification("hal/confirmationResolved"); !strings.Contains(string(n.Params), c.ID) || !strings.Contains(string(n.Params), "emergency_stop") {
		t.Errorf("the pending request: %s", n.raw)
	}
	wantCode(t, write(admin, "bench.led", false), openhal.CodeStopped, "stopped")
	wantCode(t, write(admin, "bench.fan", 20), openhal.CodeStopped, "stopped")
	wantOK(t, write(agent, "bench.heater", false)) // a safe value, stopped or not
	wantCode(t, agent.call("hal/resume", nil), openhal.CodeForbidden, "scope")

	// A repeated stop drives the safe values again and tells everyone again.
	b.reg.Publish("bench.fan", 30.0, time.Time{}) // the fan moved by itself
	// Its answer says that the stop was already engaged.
	if r := resultOf[openhal.StopResult](t, admin.call("hal/stop", nil)); !r.Stopped || !r.AlreadyStopped {
		t.Errorf("a repeated stop answered %+v, want alreadyStopped", r)
	}
	if b.value(t, "bench.fan") != 0.0 {
		t.Error("a repeated stop did not drive the fan safe again")
	}
	watcher.notification("hal/stopped")

	if r := resultOf[openhal.ResumeResult](t, admin.call("hal/resume", nil)); r.Stopped || !r.WasStopped {
		t.Fatalf("resume: %+v", r)
	}
	watcher.notification("hal/resumed")
	// A resume when not stopped changes nothing, and says so.
	if r := resultOf[openhal.ResumeResult](t, admin.call("hal/resume", nil)); r.Stopped || r.WasStopped {
		t.Errorf("a second resume: %+v, want wasStopped false", r)
	}
	wantOK(t, write(admin, "bench.led", false))
	if b.value(t, "bench.heater") != false {
		t.Error("resuming restored an earlier value")
	}
}

// A device that cannot reach its safe value is listed with its error; the
// others still go safe.
func TestStopListsFailures(t *testing.T) {
	b := newBench(t)
	b.fan.writeFn = func(context.Context, device.WriteRequest) (device.WriteResult, error) {
		return device.WriteResult{}, errors.New("pwm chip gone")
	}
	res := resultOf[openhal.StopResult](t, b.admin(t).call("hal/stop", nil))
	if fmt.Sprint(res.SafeApplied) != "[bench.heater]" || len(res.Failed) != 1 || res.Failed[0].Device != "bench.fan" ||
		res.Failed[0].Error.Code != openhal.CodeDeviceFault || !strings.Contains(res.Failed[0].Error.Message, "pwm chip gone") ||
		!strings.Contains(string(res.Failed[0].Error.Data), "device_error") {
		t.Fatalf("%+v", res)
	}
}

// A write already at the device finishes first; the safe value follows it.
func TestStopAfterWriteAtDevice(t *testing.T) {
	b := newBench(t)
	atDevice, release := make(chan struct{}), make(chan struct{})
	b.heater.writeFn = func(_ context.Context, req device.WriteRequest) (device.WriteResult, error) {
		if req.Value == true {
			close(atDevice)
			<-release
		}
		return device.WriteResult{}, nil
	}
	admin, stopper := b.admin(t), b.admin(t)
	go admin.callAsync("hal/write", map[string]any{"device": "bench.heater", "value": true})
	<-atDevice
	done := make(chan msg, 1)
	go func() { done <- stopper.callAsync("hal/stop", nil) }()
	select {
	case m := <-done:
		t.Fatalf("the stop answered before the write at the device finished: %s", m.raw)
	case <-time.After(50 * time.Millisecond): // the stop waits behind the write
	}
	close(release)
	m := <-done
	if res := resultOf[openhal.StopResult](t, m); len(res.Failed) != 0 {
		t.Fatalf("%+v", res)
	}
	if got := fmt.Sprint(b.heater.written()); got != "[true false]" || b.value(t, "bench.heater") != false {
		t.Errorf("heater writes %s, value %v", got, b.value(t, "bench.heater"))
	}
}

// A stop racing with an approval: whichever comes first, the heater ends
// safe and the approval either ran before the stop or failed with STOPPED.
func TestStopRacingApproval(t *testing.T) {
	for round := 0; round < 10; round++ {
		b := newBench(t)
		agent := b.as(t, "agent", openhal.ScopeControlLow)
		c := pending(t, write(agent, "bench.heater", true))
		admin, stopper := b.admin(t), b.admin(t)
		approved := make(chan msg, 1)
		go func() { approved <- admin.callAsync("hal/confirmations/approve", map[string]any{"id": c.ID}) }()
		wantOK(t, stopper.callAsync("hal/stop", nil))
		m := <-approved
		if m.Error != nil {
			wantCode(t, m, openhal.CodeConfirmationClosed, "")
		} else if r := resultOf[openhal.Confirmation](t, m); r.Status != "approved" && !(r.Status == "failed" && r.Error.Code == openhal.CodeStopped) {
			t.Fatalf("approval: %+v", r)
		}
		if b.value(t, "bench.heater") != false {
			t.Fatalf("round %d: the heater is on after the stop", round)
		}
	}
}

// The stop is latched in the state directory: a new Hub on the same
// directory starts stopped and drives the safe values again.
func TestStopLatchedAcrossRestart(t *testing.T) {
	b := newBench(t)
	wantOK(t, b.admin(t).call("hal/stop", map[string]any{"reason": "test"}))
	b2 := newBench(t, func(o *Options) { o.StateDir = b.dir })
	if !b2.hub.Stopped() {
		t.Fatal("the restarted hub is not stopped")
	}
	if fmt.Sprint(b2.heater.written()) != "[false]" || fmt.Sprint(b2.fan.written()) != "[0]" {
		t.Errorf("safe values not driven at start: heater %v fan %v", b2.heater.written(), b2.fan.written())
	}
	admin := b2.admin(t)
	wantCode(t, write(admin, "bench.led", true), openhal.CodeStopped, "")
	wantOK(t, admin.call("hal/resume", nil))
	b3 := newBench(t, func(o *Options) { o.StateDir = b.dir })
	if b3.hub.Stopped() {
		t.Error("a resumed stop came back")
	}
}

// A stop button engages the stop as the hub; resume is refused while it
// is held down.
func TestStopButton(t *testing.T) {
	b := newBench(t)
	watcher := b.as(t, "watcher", openhal.ScopeRead)
	b.hub.SetStopButton("bench.estop", true)
	if n := watcher.notification("hal/stopped"); !strings.Contains(string(n.Params), `"principal":{"kind":"hub","name":"bench.estop"}`) {
		t.Errorf("hal/stopped %s", n.raw)
	}
	admin := b.admin(t)
	wantCode(t, admin.call("hal/resume", nil), openhal.CodeStopped, "stop_button_pressed")
	b.hub.SetStopButton("bench.estop", false)
	wantOK(t, admin.call("hal/resume", nil))
}

// A token limited to some devices does not learn the other devices' names
// from a stop.
func TestStopOutcomeLimitedToVisibleDevices(t *testing.T) {
	b := newBench(t)
	narrow := b.as(t, "narrow", openhal.ScopeControlLow, "bench.fan")
	res := resultOf[openhal.StopResult](t, narrow.call("hal/stop", nil))
	if fmt.Sprint(res.SafeApplied) != "[bench.fan]" {
		t.Errorf("the narrow token's stop result lists %v", res.SafeApplied)
	}
	if n := narrow.notification("hal/stopped"); strings.Contains(string(n.Params), "bench.heater") {
		t.Errorf("the narrow token's hal/stopped names the heater: %s", n.raw)
	}
	if b.value(t, "bench.heater") != false {
		t.Error("the stop did not reach the invisible heater")
	}
}

// A GPIO input configured as the stop button engages the stop with
// principal {hub, <device id>} when it reads true, holds off resume while
// it stays true, and lets an admin resume once it is released.
func TestStopButtonInput(t *testing.T) {
	b := newBench(t, func(o *Options) { o.StopButtons = []string{"bench.estop"} })
	button := b.addDevice(t, &testDevice{desc: device.Descriptor{ID: "bench.estop", Kind: device.KindGPIOInput, Source: "board",
		Access: device.AccessRead, Risk: device.RiskLow, Schema: device.Schema{Type: device.TypeBoolean}}})
	button.Value(false, time.Time{})
	admin := b.admin(t)
	wantOK(t, write(admin, "bench.heater", true))
	button.Value(true, time.Time{})
	n := admin.notification("hal/stopped")
	if !strings.Contains(string(n.Params), `"principal":{"kind":"hub","name":"bench.estop"}`) {
		t.Errorf("hal/stopped %s", n.raw)
	}
	if b.value(t, "bench.heater") != false {
		t.Error("the heater is on after the stop button")
	}
	wantCode(t, admin.call("hal/resume", nil), openhal.CodeStopped, "stop_button_pressed")
	button.Value(false, time.Time{})
	wantOK(t, admin.call("hal/resume", nil))
}
