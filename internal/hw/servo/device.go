package servo

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/internal/clock"
)

// Output makes the pulse a servo reads: a PCA9685 channel
// (pca9685.Channel), the Pi's hardware PWM (pwm.Hardware).
type Output interface {
	SetPulse(width time.Duration) error
}

// MinStep bounds how often a move sends a new pulse: a servo reads one
// pulse a frame (20 ms at 50 Hz), so a faster update is never seen.
const MinStep = 20 * time.Millisecond

// Device is an x.servo device: its value is the angle in degrees, and a
// write moves the servo there no faster than its Rate. The write returns
// once the move is accepted (the first pulse sent); the move goes on in
// steps of a frame from a timer that runs only while the servo moves.
//
// The device's value is the commanded target from the write on, as for
// any output: the gateway cannot see where a servo is (it has no
// feedback), and the intermediate angles would be a stream of values
// worth nothing to clients. A write of the safe value that the Hub
// drives on its own (WriteRequest.Safe: a stop, a broken interlock,
// maxOnMs, the shutdown) goes there at once: a stop is never slowed.
type Device struct {
	desc device.Descriptor
	cfg  Config
	out  Output
	clk  clock.Clock
	step time.Duration

	mu      sync.Mutex
	mover   *Mover
	timer   clock.Timer // while a move goes on
	gen     int         // counts the moves' timers: a tick of an ended one does nothing
	rep     device.Reporter
	started bool // the first pulse is sent (by Run or a write)
	faulted bool // a step of a move failed, told to rep
	closed  bool
}

var (
	_ device.Writer = (*Device)(nil)
	_ device.Runner = (*Device)(nil)
)

// NewDevice is a servo of cfg driven by out, starting at initial
// degrees; step is the PWM's period (a move's steps are at least
// MinStep). Nothing is sent until Run or a write.
func NewDevice(desc device.Descriptor, cfg Config, out Output, initial float64, step time.Duration, clk clock.Clock) (*Device, error) {
	m, err := NewMover(cfg, initial, clk.Now())
	if err != nil {
		return nil, fmt.Errorf("servo %s: %w", desc.ID, err)
	}
	return &Device{desc: desc, cfg: cfg, out: out, clk: clk, step: max(step, MinStep), mover: m}, nil
}

// Descriptor implements device.Device.
func (d *Device) Descriptor() device.Descriptor { return d.desc }

func (d *Device) errorf(format string, args ...any) error {
	return fmt.Errorf("servo %s: %w", d.desc.ID, fmt.Errorf(format, args...))
}

// send commands angle; the caller holds mu.
func (d *Device) send(angle float64) error {
	p, err := d.cfg.Pulse(angle)
	if err != nil {
		return d.errorf("%w", err)
	}
	if err := d.out.SetPulse(p); err != nil {
		return d.errorf("%g° (%v): %w", angle, p, err)
	}
	return nil
}

// Run sends the initial angle unless a write came first (a servo whose
// output does not answer is in fault until a write gets through), and
// stops a move when ctx is done.
func (d *Device) Run(ctx context.Context, r device.Reporter) {
	d.mu.Lock()
	d.rep = r
	if !d.started && !d.closed {
		at, _ := d.mover.At(d.clk.Now())
		if err := d.send(at); err != nil {
			r.State(device.StateFault, d.errorf("initial angle: %w", err).Error())
		}
	}
	d.started = true
	d.mu.Unlock()
	<-ctx.Done()
	d.Close()
}

// Write moves the servo to req.Value degrees: at once for a safe value
// the Hub drives or without a rate, else at the rate from where it is
// commanded to be now (a target changed mid-way turns it without a
// jump). It returns when the move's first pulse is sent.
func (d *Device) Write(ctx context.Context, req device.WriteRequest) (device.WriteResult, error) {
	if err := ctx.Err(); err != nil {
		return device.WriteResult{}, err
	}
	angle, ok := req.Value.(float64)
	if !ok {
		return device.WriteResult{}, d.errorf("value %v (%T) is not a number of degrees", req.Value, req.Value)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return device.WriteResult{}, d.errorf("released")
	}
	now := d.clk.Now()
	prev := *d.mover // a write that fails moves nothing
	if req.Safe || d.cfg.Rate == 0 {
		if err := d.mover.Set(angle, now); err != nil {
			return device.WriteResult{}, d.errorf("%w", err)
		}
	} else if err := d.mover.Target(angle, now); err != nil {
		return device.WriteResult{}, d.errorf("%w", err)
	}
	d.started = true
	at, arrived := d.mover.At(now)
	if err := d.send(at); err != nil {
		*d.mover = prev
		return device.WriteResult{}, err
	}
	switch {
	case arrived:
		d.halt() // a stop, a jump, or a target where it is
	case d.timer == nil:
		d.gen++
		gen := d.gen
		d.timer = d.clk.AfterFunc(d.step, func() { d.tick(gen) })
	}
	return device.WriteResult{}, nil
}

// tick sends the next angle of a move, and stops at the target: a servo
// at rest costs no timer. A step that fails puts the device in fault
// (the move goes on: a bus that comes back finishes it); one that gets
// through again clears it.
func (d *Device) tick(gen int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.timer == nil || d.gen != gen || d.closed {
		return // halted meanwhile
	}
	at, arrived := d.mover.At(d.clk.Now())
	err := d.send(at)
	switch {
	case err != nil && !d.faulted && d.rep != nil:
		d.faulted = true
		d.rep.State(device.StateFault, err.Error())
	case err == nil && d.faulted && d.rep != nil:
		d.faulted = false
		d.rep.State(device.StateOK, "")
	}
	if arrived {
		d.timer = nil
		return
	}
	d.timer.Reset(d.step)
}

// halt ends a move's timer; the caller holds mu.
func (d *Device) halt() {
	if d.timer != nil {
		d.timer.Stop()
		d.timer = nil
		d.gen++
	}
}

// Moving reports whether a move is under way (its timer pending).
func (d *Device) Moving() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.timer != nil
}

// Close ends a move where it is; the output is released by its owner.
// Later writes fail.
func (d *Device) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.closed = true
	d.halt()
	return nil
}
