package gpioline

import (
	"context"
	"fmt"

	"periph.io/x/conn/v3/gpio"

	"github.com/openhal/gateway/device"
)

// Output is a gpio.output device: one line driven high or low.
//
// Its state is the value last applied, which the registry keeps. Output
// never calls Read on its pin: on a chardev line, Read re-requests the
// line as an input with a pull-up, which would silently release the load
// it drives.
type Output struct {
	desc   device.Descriptor
	pin    gpio.PinOut
	invert bool
}

var _ device.Writer = (*Output)(nil)

// NewOutput returns an Output on pin and drives it to initial at once, so
// that the line leaves its power-on state for a known one before any
// client can write. With invert, true drives the line low (an active-low
// relay board).
func NewOutput(desc device.Descriptor, pin gpio.PinOut, initial, invert bool) (*Output, error) {
	if pin == nil {
		return nil, fmt.Errorf("gpio output %s: %w", desc.ID, errNoPin)
	}
	o := &Output{desc: desc, pin: pin, invert: invert}
	if err := o.apply(initial); err != nil {
		return nil, fmt.Errorf("initial value: %w", err)
	}
	return o, nil
}

// Descriptor implements device.Device.
func (o *Output) Descriptor() device.Descriptor { return o.desc }

// Write drives the line to req.Value, a bool. Setting a line is one ioctl
// that does not block, so ctx is only checked before it.
func (o *Output) Write(ctx context.Context, req device.WriteRequest) (device.WriteResult, error) {
	if err := ctx.Err(); err != nil {
		return device.WriteResult{}, err
	}
	v, ok := req.Value.(bool)
	if !ok {
		return device.WriteResult{}, fmt.Errorf("gpio output %s: value %v (%T) is not a boolean", o.desc.ID, req.Value, req.Value)
	}
	return device.WriteResult{}, o.apply(v)
}

func (o *Output) apply(v bool) error {
	l := gpio.Level(v != o.invert)
	if err := o.pin.Out(l); err != nil {
		return fmt.Errorf("gpio output %s: set %s %s: %w", o.desc.ID, pinName(o.pin), l, err)
	}
	return nil
}

// pinName names a pin in errors and faults. Not String: on a gpioioctl
// line that is a multi-line JSON document.
func pinName(p interface {
	Name() string
	Number() int
}) string {
	if n := p.Name(); n != "" {
		return n
	}
	return fmt.Sprintf("line %d", p.Number())
}
