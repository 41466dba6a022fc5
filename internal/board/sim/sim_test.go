package sim_test

import (
	"context"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/internal/board"
	"github.com/openhal/gateway/internal/board/sim"
	"github.com/openhal/gateway/internal/clock/clocktest"
)

var epoch = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

// bench is a started sim board with its registry and fake clock, and every
// value event the registry sends.
type bench struct {
	b      *sim.Board
	reg    *device.Registry
	clk    *clocktest.Fake
	events chan device.Event
}

func start(t *testing.T) *bench {
	t.Helper()
	return startWith(t, nil)
}

// startWith starts the sim board with overrides of its descriptors.
func startWith(t *testing.T, overrides map[string]sim.Override) *bench {
	t.Helper()
	clk := clocktest.NewFake(epoch)
	reg := device.NewRegistry(clk.Now)
	events := make(chan device.Event, 4096)
	reg.Subscribe(func(e device.Event) {
		if e.Kind == device.EventValue {
			events <- e
		}
	})
	b := sim.New(board.Default().Sim, clk, overrides)
	ctx, cancel := context.WithCancel(context.Background())
	if err := b.Start(ctx, reg); err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() {
		cancel()
		done := make(chan struct{})
		go func() { b.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Error("sim board did not stop")
		}
	})
	bn := &bench{b: b, reg: reg, clk: clk, events: events}
	// Running: the temperature has published its first value and the
	// meter has armed its periodic reading.
	bn.waitValue(t, sim.Temperature, func(v any) bool { return true })
	wctx, wcancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer wcancel()
	if err := clk.WaitPending(wctx, 1); err != nil {
		t.Fatalf("meter never armed its timer: %v", err)
	}
	return bn
}

// waitValue returns the next value event of id that ok accepts.
func (bn *bench) waitValue(t *testing.T, id string, ok func(any) bool) device.Event {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case e := <-bn.events:
			if e.Device == id && ok(e.Value) {
				return e
			}
		case <-deadline:
			t.Fatalf("no value of %s came", id)
		}
	}
}

func (bn *bench) device(t *testing.T, id string) device.Device {
	t.Helper()
	d, ok := bn.reg.Device(id)
	if !ok {
		t.Fatalf("%s not registered", id)
	}
	return d
}

func (bn *bench) write(t *testing.T, id string, v any, reply bool) device.WriteResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	w, ok := bn.device(t, id).(device.Writer)
	if !ok {
		t.Fatalf("%s is not a Writer", id)
	}
	res, err := w.Write(ctx, device.WriteRequest{Value: v, Reply: reply})
	if err != nil {
		t.Fatalf("write %v to %s: %v", v, id, err)
	}
	return res
}

func (bn *bench) temperature(t *testing.T) float64 {
	t.Helper()
	r, err := bn.device(t, sim.Temperature).(device.Reader).Read(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return r.Value.(map[string]any)["temperature"].(float64)
}

func TestDescriptors(t *testing.T) {
	bn := start(t)
	f := func(x float64) *float64 { return &x }
	maxLine := 4096
	boolean := device.Schema{Type: device.TypeBoolean}
	want := []device.Descriptor{
		{ID: "sim.button", Kind: "gpio.input", Access: "r", Risk: "low", Schema: boolean, Pin: "GPIO27"},
		{ID: "sim.door", Kind: "gpio.input", Access: "r", Risk: "low", Schema: boolean, Pin: "GPIO22"},
		{ID: "sim.fan", Kind: "pwm", Access: "rw", Risk: "low",
			Schema: device.Schema{Type: "number", Minimum: f(0), Maximum: f(100), Unit: "%"}, Safe: 0.0,
			Pin: "GPIO18", Frequency: 100},
		{ID: "sim.heater", Kind: "gpio.output", Access: "rw", Risk: "high", Schema: boolean, Safe: false, Pin: "GPIO23"},
		{ID: "sim.led", Kind: "gpio.output", Access: "rw", Risk: "low", Schema: boolean, Safe: false, Pin: "GPIO17"},
		{ID: "sim.meter", Kind: "serial", Access: "rw", Risk: "low",
			Schema: device.Schema{Type: "string", MaxLength: &maxLine}, NoSafeReason: sim.MeterNoSafe},
		{ID: "sim.temperature", Kind: "sensor", Access: "r", Risk: "low",
			Schema: device.Schema{Type: "object", Properties: map[string]device.Schema{"temperature": {Type: "number", Unit: "Cel"}}}},
	}
	got := bn.reg.List()
	if len(got) != len(want) {
		t.Fatalf("%d devices, want %d", len(got), len(want))
	}
	for i, w := range want {
		g := got[i]
		if g.Label == "" {
			t.Errorf("%s has no label", g.ID)
		}
		g.Label = ""
		w.Source, w.State, w.Tags = "sim", device.StateOK, []string{"sim"}
		if !reflect.DeepEqual(g, w) {
			t.Errorf("descriptor\n%+v\nwant\n%+v", g, w)
		}
	}
}

// TestDescriptorsWithoutStarting: Descriptors tells, without making
// anything, exactly what the started devices serve.
func TestDescriptorsWithoutStarting(t *testing.T) {
	bn := start(t)
	descs := sim.Descriptors(board.Default().Sim)
	if len(descs) != len(bn.reg.List()) {
		t.Fatalf("Descriptors: %d devices, the started board has %d", len(descs), len(bn.reg.List()))
	}
	for _, d := range descs {
		got, ok := bn.reg.Describe(d.ID)
		if !ok || !reflect.DeepEqual(got, d) {
			t.Errorf("started %s serves\n%+v\nDescriptors says\n%+v", d.ID, got, d)
		}
	}
}

// TestOverrides: a configuration's risk and safe value reach the devices'
// own descriptors, and an output with a safe value starts at it.
func TestOverrides(t *testing.T) {
	bn := startWith(t, map[string]sim.Override{
		sim.LED:    {Risk: device.RiskHigh, Safe: true},
		sim.Fan:    {Safe: 25.0},
		sim.Heater: {Risk: device.RiskLow},
		"sim.nope": {Risk: device.RiskHigh}, // ignored: no such device
	})
	tests := []struct {
		id      string
		risk    device.Risk
		safe    any
		initial any
	}{
		{sim.LED, device.RiskHigh, true, true},
		{sim.Fan, device.RiskLow, 25.0, 25.0},
		{sim.Heater, device.RiskLow, false, false},
		{sim.Door, device.RiskLow, nil, false},
	}
	for _, tt := range tests {
		d := bn.device(t, tt.id).Descriptor()
		if d.Risk != tt.risk || !reflect.DeepEqual(d.Safe, tt.safe) {
			t.Errorf("%s: risk %q safe %v, want %q %v", tt.id, d.Risk, d.Safe, tt.risk, tt.safe)
		}
		if snap, ok := bn.reg.Value(tt.id); !ok || !reflect.DeepEqual(snap.Value, tt.initial) {
			t.Errorf("%s starts at %v (%v), want %v", tt.id, snap.Value, ok, tt.initial)
		}
	}
	if n := len(bn.reg.List()); n != 7 {
		t.Errorf("%d devices, want 7", n)
	}
}

// TestHeaterSafeOn: a heater whose safe value is on starts on, and the
// bench warms from the start.
func TestHeaterSafeOn(t *testing.T) {
	bn := startWith(t, map[string]sim.Override{sim.Heater: {Safe: true}})
	if snap, _ := bn.reg.Value(sim.Heater); snap.Value != true {
		t.Fatalf("heater starts at %v, want its safe value true", snap.Value)
	}
	bn.clk.Advance(120 * time.Second)
	want := 20 + 60*(1-1/math.E)
	if got := bn.temperature(t); math.Abs(got-want) > 0.01 {
		t.Errorf("120 s after start: %v °C, want %v", got, want)
	}
}

// TestInterfaces: what each device can do is told by the interfaces it
// implements. Inputs have access "r" (TestDescriptors) and a Write that
// only SimulatedInput lets a Hub use.
func TestInterfaces(t *testing.T) {
	bn := start(t)
	tests := []struct {
		id                            string
		reader, writer, runner, simIn bool
	}{
		{sim.LED, false, true, false, false},
		{sim.Button, true, true, false, true},
		{sim.Door, true, true, false, true},
		{sim.Heater, false, true, false, false},
		{sim.Temperature, true, false, true, false},
		{sim.Fan, false, true, false, false},
		{sim.Meter, false, true, true, false},
	}
	for _, tt := range tests {
		d := bn.device(t, tt.id)
		_, r := d.(device.Reader)
		_, w := d.(device.Writer)
		_, run := d.(device.Runner)
		s := false
		if si, ok := d.(interface{ SimulatedInput() bool }); ok {
			s = si.SimulatedInput()
		}
		if r != tt.reader || w != tt.writer || run != tt.runner || s != tt.simIn {
			t.Errorf("%s: Reader %v Writer %v Runner %v Simulator %v; want %v %v %v %v",
				tt.id, r, w, run, s, tt.reader, tt.writer, tt.runner, tt.simIn)
		}
	}
}

func TestInitialValues(t *testing.T) {
	bn := start(t)
	want := map[string]any{
		sim.LED: false, sim.Button: false, sim.Door: false, sim.Heater: false, sim.Fan: 0.0,
		sim.Temperature: map[string]any{"temperature": 20.0},
	}
	for id, v := range want {
		snap, ok := bn.reg.Value(id)
		if !ok || !reflect.DeepEqual(snap.Value, v) || !snap.TS.Equal(epoch) {
			t.Errorf("%s = %+v (%v), want %v at %v", id, snap, ok, v, epoch)
		}
		if err := bn.device(t, id).Descriptor().Schema.Validate(v); err != nil {
			t.Errorf("%s: initial value %v does not fit its schema: %v", id, v, err)
		}
	}
	if _, ok := bn.reg.Value(sim.Meter); ok {
		t.Errorf("meter has a value before its first line")
	}
}

func TestOutputsWrite(t *testing.T) {
	bn := start(t)
	for _, w := range []struct {
		id string
		v  any
	}{{sim.LED, true}, {sim.Fan, 42.5}, {sim.Heater, true}} {
		if res := bn.write(t, w.id, w.v, false); res.Keep || res.Reply != nil {
			t.Errorf("write %s: %+v, want the written value kept as the value", w.id, res)
		}
	}
	ctx := context.Background()
	for _, bad := range []struct {
		id string
		v  any
	}{{sim.Fan, 150.0}, {sim.LED, "on"}, {sim.Heater, 1.0}} {
		if _, err := bn.device(t, bad.id).(device.Writer).Write(ctx, device.WriteRequest{Value: bad.v}); err == nil {
			t.Errorf("write %v to %s accepted", bad.v, bad.id)
		}
	}
}

func TestSimulateInputs(t *testing.T) {
	bn := start(t)
	ctx := context.Background()
	for _, id := range []string{sim.Button, sim.Door} {
		in := bn.device(t, id)
		res, err := in.(device.Writer).Write(ctx, device.WriteRequest{Value: true})
		if err != nil || res.Keep {
			t.Fatalf("simulate %s: %+v, %v; want the value kept by the Hub as any write", id, res, err)
		}
		bn.clk.Advance(time.Second)
		r, err := in.(device.Reader).Read(ctx)
		if err != nil || r.Value != true || !r.TS.Equal(bn.clk.Now()) {
			t.Errorf("read %s after simulate: %+v, %v", id, r, err)
		}
		if _, err := in.(device.Writer).Write(ctx, device.WriteRequest{Value: "open"}); err == nil {
			t.Errorf("simulate %s with a string accepted", id)
		}
	}
}

func TestThermalThroughHeater(t *testing.T) {
	bn := start(t)
	bn.write(t, sim.Heater, true, false)
	bn.clk.Advance(120 * time.Second)
	want := 20 + 60*(1-1/math.E)
	if got := bn.temperature(t); math.Abs(got-want) > 0.01 {
		t.Errorf("after 120 s of heating: %v °C, want %v", got, want)
	}
	// The last published value is within the threshold of the reading,
	// stamped with the clock at a sample instant.
	snap, _ := bn.reg.Value(sim.Temperature)
	pub := snap.Value.(map[string]any)["temperature"].(float64)
	if math.Abs(pub-want) > 0.1+0.001 || snap.TS.Sub(epoch)%time.Second != 0 || snap.TS.After(bn.clk.Now()) {
		t.Errorf("last published %v at %v, want near %v on a second", pub, snap.TS, want)
	}

	bn.write(t, sim.Heater, false, false)
	bn.clk.Advance(20 * time.Minute)
	if got := bn.temperature(t); math.Abs(got-20) > 0.01 {
		t.Errorf("20 minutes after the heater went off: %v °C, want 20", got)
	}
}

func TestMeterAnswers(t *testing.T) {
	bn := start(t)
	tests := []struct{ cmd, want string }{
		{"*IDN?", sim.Identity},
		{"MEAS?", "20.000"},
		{" meas? ", "20.000"},
		{"VOLT 5", "ERR unknown command"},
	}
	for _, tt := range tests {
		res := bn.write(t, sim.Meter, tt.cmd, true)
		if !res.Keep || res.Reply == nil || res.Reply.Value != tt.want || !res.Reply.TS.Equal(bn.clk.Now()) {
			t.Errorf("%q: %+v (reply %+v), want reply %q", tt.cmd, res, res.Reply, tt.want)
		}
		bn.waitValue(t, sim.Meter, func(v any) bool { return v == tt.want })
	}

	bn.write(t, sim.Heater, true, false)
	bn.clk.Advance(time.Minute)
	res := bn.write(t, sim.Meter, "MEAS?", true)
	want := 20 + 60*(1-math.Exp(-0.5))
	if got := res.Reply.Value.(string); !strings.HasPrefix(got, "4") || math.Abs(parse(t, got)-want) > 0.001 {
		t.Errorf("MEAS? after a minute of heating = %q, want %.3f", got, want)
	}
}

func TestMeterPeriodicLines(t *testing.T) {
	bn := start(t)
	for i := 1; i <= 3; i++ {
		bn.clk.Advance(5 * time.Second)
		e := bn.waitValue(t, sim.Meter, func(any) bool { return true })
		if e.Value != "20.000" || !e.TS.Equal(epoch.Add(time.Duration(i)*5*time.Second)) {
			t.Errorf("line %d: %q at %v, want \"20.000\" at epoch+%ds", i, e.Value, e.TS, 5*i)
		}
	}
	// Nothing before the next period: the next line is the answer to a
	// question asked now, not a reading.
	bn.clk.Advance(4 * time.Second)
	if res := bn.write(t, sim.Meter, "*IDN?", true); res.Reply.Value != sim.Identity {
		t.Errorf("*IDN? answered %q: a reading came before the period was over", res.Reply.Value)
	}
	if e := bn.waitValue(t, sim.Meter, func(any) bool { return true }); e.Value != sim.Identity {
		t.Errorf("next meter value %q, want the identity line", e.Value)
	}
}

func TestDefaultRules(t *testing.T) {
	want := map[string]device.Rules{sim.Heater: {
		Interlock: []device.Condition{{Device: sim.Door, Op: "eq", Value: false}},
		MaxOn:     10 * time.Minute,
	}}
	if got := sim.DefaultRules(); !reflect.DeepEqual(got, want) {
		t.Errorf("DefaultRules() = %+v, want %+v", got, want)
	}
}

func TestStartFailsCleanly(t *testing.T) {
	clk := clocktest.NewFake(epoch)
	reg := device.NewRegistry(clk.Now)
	taken := sim.New(board.Default().Sim, clk, nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := taken.Start(ctx, reg); err != nil {
		t.Fatal(err)
	}
	if err := taken.Start(ctx, reg); err == nil || !strings.Contains(err.Error(), "already started") {
		t.Errorf("second Start = %v, want already started", err)
	}
	// A registry that has one of the ids already.
	reg2 := device.NewRegistry(clk.Now)
	if _, err := reg2.Add(stub{sim.Fan}); err != nil {
		t.Fatal(err)
	}
	b := sim.New(board.Default().Sim, clk, nil)
	if err := b.Start(ctx, reg2); err == nil {
		t.Fatal("Start over a taken id succeeded")
	}
	if got := reg2.List(); len(got) != 1 || got[0].ID != sim.Fan {
		t.Errorf("after a failed Start the registry holds %d devices, want the one that was there", len(got))
	}
	cancel()
	taken.Wait()
	b.Wait()
}

type stub struct{ id string }

func (s stub) Descriptor() device.Descriptor { return device.Descriptor{ID: s.id} }

func parse(t *testing.T, s string) float64 {
	t.Helper()
	var f float64
	if _, err := fmt.Sscan(s, &f); err != nil {
		t.Fatalf("parse %q: %v", s, err)
	}
	return f
}
