package sensor

import (
	"context"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/internal/clock"
)

// DefaultInterval is the poll interval of a Device whose PollOpts leave it
// zero.
const DefaultInterval = 10 * time.Second

// maxDeadline bounds the default deadline of one measurement: no sensor
// the gateway drives takes anywhere near that long.
const maxDeadline = 5 * time.Second

// PollOpts says how often a Device measures and what it publishes.
type PollOpts struct {
	// Interval is the time from the end of one poll to the start of the
	// next. Zero (or less) means DefaultInterval.
	Interval time.Duration
	// Thresholds says, per quantity, how far a measurement must move from
	// the last published one to be published again (strictly more than
	// it). A missing quantity, zero or a negative threshold means any
	// change.
	Thresholds map[string]float64
	// Deadline bounds one measurement. Zero (or less) means the smaller of
	// Interval and 5s.
	Deadline time.Duration
}

// Device is a sensor device: it polls a Sensor on a clock and publishes
// its measurements as an object value, one number per quantity, when one
// of them has moved past its threshold.
//
// A Device takes one measurement at a time. A poll or a Read that comes
// while a measurement is running does not start another one: it waits for
// the running one and takes its result. This matters when a measurement
// hangs: an I²C transfer cannot be interrupted, so a driver stuck on the
// bus stays stuck whatever its ctx says. When a measurement runs past the
// deadline its result is decided there and then: the error "measurement
// timed out after <deadline>", which matches context.DeadlineExceeded.
// Until the hung Sense returns, every poll and every Read gets that same
// error at once, and no further Sense is started, so a hung bus costs one
// goroutine, not one per poll. When it finally returns, its result is
// discarded: it was already reported as failed, and nobody knows when
// during the hang its values were taken. The next poll measures afresh.
//
// Polls run on Run's goroutine; Run returns as soon as its ctx ends, even
// with a measurement hung (that goroutine ends when Sense returns).
type Device struct {
	desc      device.Descriptor
	s         Sensor
	names     []string
	threshold map[string]float64
	interval  time.Duration
	deadline  time.Duration
	clk       clock.Clock

	// testHookJoin, when set, is called whenever a poll or Read joins a
	// measurement already running.
	testHookJoin func()

	mu   sync.Mutex
	cur  *measurement       // the measurement running, nil when none
	last map[string]float64 // the last value published, nil before the first
}

var (
	_ device.Reader = (*Device)(nil)
	_ device.Runner = (*Device)(nil)
)

// NewDevice returns a Device for s that polls on clk. When desc has no
// schema (its Type is empty), the Device makes one from s's quantities: an
// object with one number property per quantity, with its unit.
func NewDevice(desc device.Descriptor, s Sensor, opts PollOpts, clk clock.Clock) *Device {
	qs := s.Quantities()
	d := &Device{desc: desc, s: s, clk: clk, threshold: map[string]float64{}}
	for _, q := range qs {
		d.names = append(d.names, q.Name)
		d.threshold[q.Name] = max(opts.Thresholds[q.Name], 0)
	}
	if d.desc.Schema.Type == "" {
		d.desc.Schema = schemaOf(qs)
	}
	d.interval = opts.Interval
	if d.interval <= 0 {
		d.interval = DefaultInterval
	}
	d.deadline = opts.Deadline
	if d.deadline <= 0 {
		d.deadline = min(d.interval, maxDeadline)
	}
	return d
}

func schemaOf(qs []Quantity) device.Schema {
	props := make(map[string]device.Schema, len(qs))
	for _, q := range qs {
		props[q.Name] = device.Schema{Type: device.TypeNumber, Unit: q.Unit}
	}
	return device.Schema{Type: device.TypeObject, Properties: props}
}

// Descriptor implements device.Device.
func (d *Device) Descriptor() device.Descriptor { return d.desc }

// Read takes a fresh measurement, or shares the one running, within ctx
// and the Device's deadline. Its value counts as published for the
// thresholds of later polls, since the Hub publishes every reading it
// takes.
func (d *Device) Read(ctx context.Context) (device.Reading, error) {
	vals, ts, err := d.measure(ctx)
	if err != nil {
		return device.Reading{}, err
	}
	d.mu.Lock()
	d.last = vals
	d.mu.Unlock()
	return device.Reading{Value: toValue(vals), TS: ts}, nil
}

// Run polls at once and then Interval after the end of each poll, until
// ctx ends. Each poll reports the state it found (ok, or fault with the
// reason), so that a fault recorded from a failed Read is cleared by the
// next good poll; the registry passes changes on only. A good poll then
// publishes its values if any quantity moved past its threshold since the
// last value published. The first good poll of each Run and the first
// after a fault publish whatever the thresholds: a device registered
// again has lost its value, and clients that saw the fault learn that the
// value is current again.
func (d *Device) Run(ctx context.Context, r device.Reporter) {
	due := make(chan struct{}, 1)
	fire := func() {
		select {
		case due <- struct{}{}:
		default:
		}
	}
	var t clock.Timer // armed after each poll, so polls never pile up
	defer func() {
		if t != nil {
			t.Stop()
		}
	}()
	force := true // publish the next good measurement whatever the thresholds
	for {
		published, failed := d.poll(ctx, r, force)
		force = (force && !published) || failed
		if t == nil {
			t = d.clk.AfterFunc(d.interval, fire)
		} else {
			t.Reset(d.interval)
		}
		select {
		case <-ctx.Done():
			return
		case <-due:
		}
	}
}

// poll takes one measurement and reports it; nothing once ctx has ended.
// It says whether it published and whether the measurement failed. With
// force, a good measurement is published whatever the thresholds.
func (d *Device) poll(ctx context.Context, r device.Reporter, force bool) (published, failed bool) {
	vals, ts, err := d.measure(ctx)
	if ctx.Err() != nil {
		return false, false
	}
	if err != nil {
		r.State(device.StateFault, err.Error())
		return false, true
	}
	r.State(device.StateOK, "")
	d.mu.Lock()
	defer d.mu.Unlock() // held while publishing, so Read's baseline cannot slip in between
	if !force && !d.moved(vals) {
		return false, false
	}
	d.last = vals
	r.Value(toValue(vals), ts)
	return true, false
}

// moved reports whether any quantity moved past its threshold from the
// last value published.
func (d *Device) moved(vals map[string]float64) bool {
	for _, n := range d.names {
		if math.Abs(vals[n]-d.last[n]) > d.threshold[n] {
			return true
		}
	}
	return false
}

func toValue(vals map[string]float64) map[string]any {
	v := make(map[string]any, len(vals))
	for k, f := range vals {
		v[k] = f
	}
	return v
}

// measurement is one call of Sense that polls and Reads share. Its result
// is decided once: by Sense returning, or by the deadline passing first.
type measurement struct {
	settled chan struct{} // closed when the result below is decided
	done    chan struct{} // closed when Sense has returned and cur is cleared
	once    sync.Once
	vals    map[string]float64
	ts      time.Time
	err     error
}

func (m *measurement) settle(vals map[string]float64, ts time.Time, err error) {
	m.once.Do(func() {
		m.vals, m.ts, m.err = vals, ts, err
		close(m.settled)
	})
}

// measure returns the result of the running measurement, starting one if
// none is running, or ctx's error if ctx ends first.
func (d *Device) measure(ctx context.Context) (map[string]float64, time.Time, error) {
	m := d.begin()
	select {
	case <-m.settled:
		return m.vals, m.ts, m.err
	case <-ctx.Done():
		return nil, time.Time{}, ctx.Err()
	}
}

// begin returns the measurement running, or starts one. Sense runs on a
// goroutine of its own, with a ctx the deadline cancels, so that neither
// a caller that gives up nor a hung bus holds anyone else up.
func (d *Device) begin() *measurement {
	d.mu.Lock()
	defer d.mu.Unlock()
	if m := d.cur; m != nil {
		if d.testHookJoin != nil {
			d.testHookJoin()
		}
		return m
	}
	m := &measurement{settled: make(chan struct{}), done: make(chan struct{})}
	d.cur = m
	ctx, cancel := context.WithCancelCause(context.Background())
	expired := timeoutError{d.deadline}
	t := d.clk.AfterFunc(d.deadline, func() {
		m.settle(nil, time.Time{}, expired)
		cancel(expired)
	})
	go func() {
		vals, err := d.s.Sense(ctx)
		ts := d.clk.Now()
		t.Stop()
		cancel(nil)
		if err == nil {
			vals, err = d.check(vals)
		}
		err = explain(err)
		d.mu.Lock()
		d.cur = nil
		d.mu.Unlock()
		m.settle(vals, ts, err) // a no-op past the deadline: the result is discarded
		close(m.done)
	}()
	return m
}

// check returns a copy of a driver's values, or an error when they are
// not one finite number per quantity (NaN cannot even be encoded).
func (d *Device) check(vals map[string]float64) (map[string]float64, error) {
	if len(vals) != len(d.names) {
		return nil, fmt.Errorf("sensor returned %d quantities, want %d", len(vals), len(d.names))
	}
	out := make(map[string]float64, len(vals))
	for _, n := range d.names {
		v, ok := vals[n]
		switch {
		case !ok:
			return nil, fmt.Errorf("sensor returned no %s", n)
		case math.IsNaN(v) || math.IsInf(v, 0):
			return nil, fmt.Errorf("sensor returned %v for %s", v, n)
		}
		out[n] = v
	}
	return out, nil
}

// timeoutError is the result of a measurement that ran past its deadline.
// It matches context.DeadlineExceeded, so that the Hub answers a Read
// that meets it with TIMEOUT.
type timeoutError struct{ after time.Duration }

func (e timeoutError) Error() string { return timeoutWords(e.after) }

func (timeoutError) Is(target error) bool { return target == context.DeadlineExceeded }

// Timeout reports true, as net.Error's Timeout does.
func (timeoutError) Timeout() bool { return true }
