package pca9685

import (
	"context"
	"fmt"
	"math"
	"sync"

	"github.com/openhal/gateway/device"
)

// Output is a pwm device (openhal-0.1 §6: the duty cycle, 0 to 100 %) on
// one channel of a Shared chip, at the chip's frequency. 0 % and 100 %
// are the datasheet's full-off and full-on; between, the nearest of the
// 4096 steps.
type Output struct {
	desc    device.Descriptor
	ch      Channel
	initial int // steps

	mu      sync.Mutex
	written bool // a write came before Run set the initial duty
	closed  bool
}

var (
	_ device.Writer = (*Output)(nil)
	_ device.Runner = (*Output)(nil)
)

// NewOutput is channel ch of chip as the device desc, to start at
// initial %. Nothing goes to the chip until Run or a write.
func NewOutput(desc device.Descriptor, chip *Shared, ch int, initial float64) (*Output, error) {
	o := &Output{desc: desc, ch: Channel{Chip: chip, N: ch}}
	if ch < 0 || ch >= Channels {
		return nil, o.errorf("%s has no channel %d (0 to %d)", chip.name, ch, Channels-1)
	}
	steps, err := dutySteps(initial)
	if err != nil {
		return nil, o.errorf("initial value: %w", err)
	}
	o.initial = steps
	return o, nil
}

// errorf names the device and its channel; the chip's errors name the
// chip.
func (o *Output) errorf(format string, args ...any) error {
	return fmt.Errorf("pwm %s on channel %d: %w", o.desc.ID, o.ch.N, fmt.Errorf(format, args...))
}

// dutySteps is a duty cycle in % as the chip's steps, refused outside 0
// to 100 rather than clamped.
func dutySteps(v any) (int, error) {
	f, ok := v.(float64)
	if !ok {
		return 0, fmt.Errorf("value %v (%T) is not a number", v, v)
	}
	if math.IsNaN(f) || f < 0 || f > 100 {
		return 0, fmt.Errorf("duty cycle %v%% is outside 0..100", f)
	}
	return int(math.Round(f / 100 * Steps)), nil
}

// Descriptor implements device.Device.
func (o *Output) Descriptor() device.Descriptor { return o.desc }

// Run sets the initial duty unless a write came first; a chip that does
// not answer puts the device in fault with what failed, until a write
// gets through. It then waits for ctx: the chip keeps the waveform.
func (o *Output) Run(ctx context.Context, r device.Reporter) {
	o.mu.Lock()
	if !o.written && !o.closed {
		if err := o.ch.Chip.SetDuty(o.ch.N, o.initial); err != nil {
			r.State(device.StateFault, o.errorf("initial value: %w", err).Error())
		}
	}
	o.written = true
	o.mu.Unlock()
	<-ctx.Done()
}

// Write sets the duty cycle to req.Value %. An I2C write does not block
// for long, so ctx is only checked before it.
func (o *Output) Write(ctx context.Context, req device.WriteRequest) (device.WriteResult, error) {
	if err := ctx.Err(); err != nil {
		return device.WriteResult{}, err
	}
	steps, err := dutySteps(req.Value)
	if err != nil {
		return device.WriteResult{}, o.errorf("%w", err)
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed {
		return device.WriteResult{}, o.errorf("%w", errClosed)
	}
	o.written = true
	if err := o.ch.Chip.SetDuty(o.ch.N, steps); err != nil {
		return device.WriteResult{}, o.errorf("%w", err)
	}
	return device.WriteResult{}, nil
}

// Close turns the channel off (a released output makes no pulses); a
// second Close does nothing.
func (o *Output) Close() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed {
		return nil
	}
	o.closed = true
	return o.ch.Off()
}
