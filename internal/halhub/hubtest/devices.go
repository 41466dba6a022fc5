package hubtest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/openhal/gateway/device"
)

// Set gives the bench device id a new value, which it reports as a device
// reports an edge or a measurement.
func (b *Bench) Set(id string, v any) {
	b.t.Helper()
	b.device(id).set(v)
}

// SetState has the bench device id report a state (a fault, a recovery).
func (b *Bench) SetState(id string, s device.State, fault string) {
	b.t.Helper()
	b.device(id).rep.State(s, fault)
}

// Add registers one more device in the current run and returns its
// Reporter. A Restart drops it.
func (b *Bench) Add(d device.Device) device.Reporter {
	b.t.Helper()
	rep, err := b.reg.Add(d)
	if err != nil {
		b.t.Fatal(err)
	}
	return rep
}

func (b *Bench) device(id string) *benchDevice {
	b.t.Helper()
	d, ok := b.devices[id]
	if !ok {
		b.t.Fatalf("no bench device %s", id)
	}
	return d
}

// benchDevice is a device of the bench. Its value is kept here too, so
// that a sensor's Read returns what it last reported.
type benchDevice struct {
	desc device.Descriptor
	now  func() time.Time
	rep  device.Reporter

	mu sync.Mutex
	v  any
}

func (d *benchDevice) Descriptor() device.Descriptor { return d.desc }

func (d *benchDevice) set(v any) {
	d.mu.Lock()
	d.v = v
	d.mu.Unlock()
	d.rep.Value(v, d.now())
}

// output is a writable bench device: its value is what was last written.
type output struct{ *benchDevice }

func (o output) Write(_ context.Context, req device.WriteRequest) (device.WriteResult, error) {
	o.mu.Lock()
	o.v = req.Value
	o.mu.Unlock()
	return device.WriteResult{}, nil
}

// sensor is a bench device that measures on demand: an input pin, a
// thermometer.
type sensor struct{ *benchDevice }

func (s sensor) Read(context.Context) (device.Reading, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return device.Reading{Value: s.v, TS: s.now()}, nil
}

// newDevices registers the bench in reg and reports the initial values:
// sim.led seq 1, sim.door seq 2, sim.heater seq 3, sim.temperature seq 4.
func newDevices(t testing.TB, reg *device.Registry, now func() time.Time) map[string]*benchDevice {
	t.Helper()
	boolean := device.Schema{Type: device.TypeBoolean}
	temp := device.Schema{Type: device.TypeObject, Properties: map[string]device.Schema{
		"temperature": {Type: device.TypeNumber, Unit: "Cel"},
	}}
	devices := map[string]*benchDevice{}
	var order []*benchDevice
	for _, b := range []struct {
		desc    device.Descriptor
		initial any
	}{
		{device.Descriptor{ID: "sim.led", Kind: device.KindGPIOOutput, Access: device.AccessReadWrite, Risk: device.RiskLow, Schema: boolean}, false},
		{device.Descriptor{ID: "sim.door", Kind: device.KindGPIOInput, Access: device.AccessRead, Risk: device.RiskLow, Schema: boolean}, false},
		{device.Descriptor{ID: "sim.heater", Kind: device.KindGPIOOutput, Access: device.AccessReadWrite, Risk: device.RiskHigh, Schema: boolean, Safe: false}, false},
		{device.Descriptor{ID: "sim.temperature", Kind: device.KindSensor, Access: device.AccessRead, Risk: device.RiskLow, Schema: temp}, map[string]any{"temperature": 20.5}},
	} {
		b.desc.Source, b.desc.State = "sim", device.StateOK
		d := &benchDevice{desc: b.desc, now: now, v: b.initial}
		var dev device.Device = sensor{d}
		if b.desc.Access.CanWrite() {
			dev = output{d}
		}
		rep, err := reg.Add(dev)
		if err != nil {
			t.Fatal(err)
		}
		d.rep = rep
		devices[b.desc.ID] = d
		order = append(order, d)
	}
	for _, d := range order {
		d.set(d.v)
	}
	return devices
}
