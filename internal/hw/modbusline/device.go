package modbusline

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/openhal/gateway/device"
)

// Device is one value of one unit on a line: a device.Device, Reader and
// Runner, and a Writer and ValueChecker for a coil or holding registers
// (the Hub writes only devices whose descriptor says rw).
//
// Its value is what the unit last answered: a poll publishes it when it
// changed, a write sets it. It starts offline, until the line's link is
// open and the unit has answered.
type Device struct {
	line *Line
	desc device.Descriptor
	p    Point

	mu    sync.Mutex
	rep   device.Reporter // while Run runs
	state device.State
	fault string
	value any
	has   bool
	ts    time.Time
}

// Device makes a device of the line. It must be called before Start.
func (l *Line) Device(desc device.Descriptor, p Point) *Device {
	desc.State, desc.Fault = device.StateOffline, "not connected yet"
	d := &Device{line: l, desc: desc, p: p, state: desc.State, fault: desc.Fault}
	l.mu.Lock()
	l.devs = append(l.devs, d)
	l.mu.Unlock()
	return d
}

// Descriptor returns the descriptor the device was made with, offline.
func (d *Device) Descriptor() device.Descriptor { return d.desc }

// Run reports the device's values and states to r until ctx is done: the
// line's goroutine polls.
func (d *Device) Run(ctx context.Context, r device.Reporter) {
	d.mu.Lock()
	d.rep = r
	if d.has {
		r.Value(d.value, d.ts)
	}
	r.State(d.state, d.fault)
	d.mu.Unlock()
	<-ctx.Done()
	d.mu.Lock()
	d.rep = nil
	d.mu.Unlock()
}

// Read takes a fresh value, ahead of the line's polls.
func (d *Device) Read(ctx context.Context) (device.Reading, error) {
	r := d.line.submit(ctx, &job{dev: d})
	if r.err != nil {
		return device.Reading{}, fmt.Errorf("read %s: %w", d.desc.ID, r.err)
	}
	d.mu.Lock()
	d.value, d.ts, d.has = r.value, r.ts, true
	d.mu.Unlock()
	d.setState(device.StateOK, "")
	return device.Reading{Value: r.value, TS: r.ts}, nil
}

// Write puts v on the unit, ahead of the line's polls; req.Safe puts it
// ahead of every other write too.
func (d *Device) Write(ctx context.Context, req device.WriteRequest) (device.WriteResult, error) {
	bit, regs, err := d.p.encode(req.Value)
	if err != nil {
		return device.WriteResult{}, fmt.Errorf("write %s: %w", d.desc.ID, err)
	}
	r := d.line.submit(ctx, &job{dev: d, write: true, safe: req.Safe, bit: bit, regs: regs})
	if r.err != nil {
		return device.WriteResult{}, fmt.Errorf("write %s: %w", d.desc.ID, r.err)
	}
	d.mu.Lock()
	d.value, d.ts, d.has = req.Value, r.ts, true
	d.mu.Unlock()
	d.setState(device.StateOK, "")
	return device.WriteResult{}, nil
}

// CheckValue refuses a value the unit cannot hold exactly: a number
// between two steps of an integer register's scale, or beyond its type.
func (d *Device) CheckValue(v any) error {
	if !d.p.Table.Writable() {
		return nil
	}
	_, _, err := d.p.encode(v)
	return err
}

// polled takes the device's value from its block's answer, which holds
// the block's count of bits or registers (the client checks the reply's
// length against the request).
func (d *Device) polled(b *block, bits []bool, regs []uint16, ts time.Time) {
	off := int(d.p.Address) - int(b.first)
	if b.table.Bits() {
		d.observe(bits[off], ts)
		return
	}
	v, err := d.p.registerValue(regs[off : off+d.p.Words()])
	if err != nil {
		d.failed(err)
		return
	}
	d.observe(v, ts)
}

// observe records a value the unit answered, reporting it when it
// changed, and the device ok.
func (d *Device) observe(v any, ts time.Time) {
	d.mu.Lock()
	changed := !d.has || !device.Equal(d.value, v)
	d.value, d.ts, d.has = v, ts, true
	if changed && d.rep != nil {
		d.rep.Value(v, ts)
	}
	d.mu.Unlock()
	d.setState(device.StateOK, "")
}

// failed puts the device in fault with what its request got.
func (d *Device) failed(err error) { d.setState(device.StateFault, err.Error()) }

// setState records and reports a state when it changed.
func (d *Device) setState(s device.State, fault string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.state == s && d.fault == fault {
		return
	}
	d.state, d.fault = s, fault
	if d.rep != nil {
		d.rep.State(s, fault)
	}
	if s != device.StateOK {
		d.line.log.Info("modbus device "+string(s), "device", d.desc.ID, "unit", d.p.Unit, "fault", fault)
	}
}
