package halhub

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/internal/clock/clocktest"
	"github.com/openhal/gateway/openhal"
)

// bench is a test hub with a small bench of devices and rules, like the
// sim board's: a low-risk led, a high-risk heater (safe false) interlocked
// with a door and limited by maxOnMs, a door input, and a fan with rules.
type bench struct {
	*testHub
	clock  *clocktest.Fake
	led    writerDevice
	heater writerDevice
	fan    writerDevice
	door   device.Reporter
	dir    string
}

func newBench(t *testing.T, configure ...func(*Options)) *bench {
	t.Helper()
	clk := clocktest.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	dir := t.TempDir()
	min, max := 10.0, 90.0
	b := &bench{clock: clk, dir: dir}
	b.testHub = newTestHub(t, append([]func(*Options){func(o *Options) {
		o.Clock = clk
		o.StateDir = dir
		o.Rules = map[string]device.Rules{
			"bench.heater": {Interlock: []device.Condition{{Device: "bench.door", Op: device.OpEq, Value: false}}, MaxOn: 10 * time.Minute},
			"bench.fan":    {Minimum: &min, Maximum: &max, RateLimit: 3},
		}
	}}, configure...)...)
	b.led = output("bench.led", device.RiskLow)
	b.heater = output("bench.heater", device.RiskHigh)
	b.heater.desc.Safe = false
	b.fan = writerDevice{&testDevice{desc: device.Descriptor{ID: "bench.fan", Kind: device.KindPWM, Source: "board", Access: device.AccessReadWrite, Risk: device.RiskLow,
		Schema: device.Schema{Type: device.TypeNumber, Minimum: ptr(0.0), Maximum: ptr(100.0), Unit: "%"}, Safe: 0.0}}}
	door := &testDevice{desc: device.Descriptor{ID: "bench.door", Kind: device.KindGPIOInput, Source: "board", Access: device.AccessRead, Risk: device.RiskLow, Schema: device.Schema{Type: device.TypeBoolean}}}
	b.addDevice(t, b.led)
	b.addDevice(t, b.heater)
	b.addDevice(t, b.fan)
	b.door = b.addDevice(t, door)
	b.door.Value(false, time.Time{})
	b.reg.Publish("bench.led", false, time.Time{})
	b.reg.Publish("bench.heater", false, time.Time{})
	b.reg.Publish("bench.fan", 0.0, time.Time{})
	if err := b.hub.Restore(); err != nil {
		t.Fatal(err)
	}
	return b
}

func ptr[T any](v T) *T { return &v }

// valves adds n high-risk outputs without rules (bench.valve-00, ...),
// safe false and off, and returns their ids: one principal keeps one
// request per device waiting (a new one replaces it), so that a test of
// many requests of one principal asks for many devices.
func (b *bench) valves(t *testing.T, n int) []string {
	t.Helper()
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("bench.valve-%02d", i)
		v := output(ids[i], device.RiskHigh)
		v.desc.Safe = false
		b.addDevice(t, v)
		b.reg.Publish(ids[i], false, time.Time{})
	}
	return ids
}

// as opens an initialized TCP connection for a new token of that scope.
func (b *bench) as(t *testing.T, name string, scope openhal.Scope, devices ...string) *client {
	t.Helper()
	c := b.dialTCP(t)
	c.init(b.token(t, name, scope, devices...))
	return c
}

func (b *bench) admin(t *testing.T) *client {
	t.Helper()
	c := b.dialTCP(t)
	c.init(b.testHub.admin)
	return c
}

func (b *bench) value(t *testing.T, id string) any {
	t.Helper()
	s, ok := b.reg.Value(id)
	if !ok {
		t.Fatalf("%s has no value", id)
	}
	return s.Value
}

func write(c *client, id string, v any) msg {
	c.t.Helper()
	return c.call("hal/write", map[string]any{"device": id, "value": v})
}

func wantCode(t *testing.T, m msg, code int64, reason string) {
	t.Helper()
	if m.Error == nil || m.Error.Code != code || (reason != "" && m.reason() != reason) {
		t.Fatalf("got %s, want code %d reason %q", m.raw, code, reason)
	}
}

func wantOK(t *testing.T, m msg) {
	t.Helper()
	if m.Error != nil {
		t.Fatalf("got %s", m.raw)
	}
}

func resultOf[T any](t *testing.T, m msg) T {
	t.Helper()
	var v T
	if m.Error != nil || json.Unmarshal(m.Result, &v) != nil {
		t.Fatalf("got %s", m.raw)
	}
	return v
}

// settle waits until the safety loop has handled every event so far (it
// arms maxOnMs timers on its own goroutine).
func (b *bench) settle(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := b.hub.loop.probe(ctx); err != nil {
		t.Fatalf("safety loop: %v", err)
	}
}
