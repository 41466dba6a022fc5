package expander

import (
	"context"
	"fmt"

	"periph.io/x/conn/v3/gpio"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/internal/hw/gpioline"
)

// Input is a gpio.input on a pin of the chip.
type Input struct {
	desc    device.Descriptor
	chip    *Chip
	pin     int
	opts    gpioline.InputOpts
	settler *gpioline.Settler // while Run runs; guarded by chip.mu
}

// Output is a gpio.output on a pin of the chip.
type Output struct {
	desc     device.Descriptor
	chip     *Chip
	pin      int
	invert   bool
	r        device.Reporter // while Run runs; guarded by chip.mu
	reported string          // the fault last reported; guarded by chip.reportMu
}

var (
	_ device.Reader = (*Input)(nil)
	_ device.Runner = (*Input)(nil)
	_ device.Writer = (*Output)(nil)
	_ device.Runner = (*Output)(nil)
)

// Input declares pin an input: with the chip's 100 kΩ pull-up for
// gpio.PullUp (it has no pull-down), watched by INT. Edge, Debounce and
// Invert mean what they mean on a Pi line (gpioline).
func (c *Chip) Input(desc device.Descriptor, pin int, opts gpioline.InputOpts) (*Input, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.claim(desc, pin); err != nil {
		return nil, err
	}
	switch {
	case c.cfg.INT == nil:
		return nil, fmt.Errorf("gpio input %s: %s has no INT line: its inputs are read when INT falls", desc.ID, c.what)
	case opts.Pull == gpio.PullDown:
		return nil, fmt.Errorf("gpio input %s: the %v has pull-ups only", desc.ID, c.cfg.Model)
	case opts.Debounce < 0:
		return nil, fmt.Errorf("gpio input %s: negative debounce %v", desc.ID, opts.Debounce)
	}
	if opts.Edge == gpio.NoEdge {
		opts.Edge = gpio.BothEdges
	}
	in := &Input{desc: desc, chip: c, pin: pin, opts: opts}
	c.inputs[pin] = in
	c.setup.Watch |= 1 << pin
	if opts.Pull == gpio.PullUp {
		c.setup.PullUps |= 1 << pin
	}
	return in, nil
}

// Output declares pin an output, driving initial (inverted with invert)
// from the moment the chip is set up.
func (c *Chip) Output(desc device.Descriptor, pin int, initial, invert bool) (*Output, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.claim(desc, pin); err != nil {
		return nil, err
	}
	o := &Output{desc: desc, chip: c, pin: pin, invert: invert}
	c.outputs[pin] = o
	c.setup.Outputs |= 1 << pin
	c.setup.Levels |= b16(initial != invert) << pin
	return o, nil
}

func (c *Chip) claim(desc device.Descriptor, pin int) error {
	switch {
	case c.started:
		return fmt.Errorf("%s %s: %s is started already", desc.Kind, desc.ID, c.what)
	case pin < 0 || pin >= c.cfg.Model.Pins():
		return fmt.Errorf("%s %s: the %v has no pin %d (0 to %d)", desc.Kind, desc.ID, c.cfg.Model, pin, c.cfg.Model.Pins()-1)
	case c.inputs[pin] != nil || c.outputs[pin] != nil:
		return fmt.Errorf("%s %s: %s of %s is taken", desc.Kind, desc.ID, c.cfg.Model.PinName(pin), c.what)
	}
	return nil
}

// pinName is the pin as messages say it: the descriptor's ("ex1:GPA0").
func pinName(desc device.Descriptor, c *Chip, pin int) string {
	if desc.Pin != "" {
		return desc.Pin
	}
	return c.cfg.Name + ":" + c.cfg.Model.PinName(pin)
}

// Descriptor implements device.Device.
func (in *Input) Descriptor() device.Descriptor { return in.desc }

// Read reads the chip afresh (which also publishes what changed).
func (in *Input) Read(ctx context.Context) (device.Reading, error) {
	if err := ctx.Err(); err != nil {
		return device.Reading{}, err
	}
	if err := in.chip.refresh(false); err != nil {
		in.chip.poke()
		return device.Reading{}, fmt.Errorf("gpio input %s: read %s: %w", in.desc.ID, pinName(in.desc, in.chip, in.pin), err)
	}
	return device.Reading{Value: in.level(), TS: in.chip.cfg.Clock.Now()}, nil
}

func (in *Input) level() bool { return in.chip.level(in.pin) != in.opts.Invert }

// Run publishes the input's level and its changes, and its state, until
// ctx ends; the chip's watcher does the reading.
func (in *Input) Run(ctx context.Context, r device.Reporter) {
	s := gpioline.NewSettler(in.level, in.opts.Debounce, in.chip.cfg.Clock, r)
	c := in.chip
	c.reportMu.Lock()
	c.mu.Lock()
	in.settler = s
	ready, fault := c.dev != nil, c.fault
	if ready {
		fault = c.intFault
	}
	c.mu.Unlock()
	s.SetFault(fault)
	if ready {
		s.Settle()
	}
	c.reportMu.Unlock()

	<-ctx.Done()
	c.mu.Lock()
	in.settler = nil
	c.mu.Unlock()
	s.Stop()
}

// wakes reports whether a change of the pins from from to to is an edge
// the input takes.
func (in *Input) wakes(from, to uint16) bool {
	bit := uint16(1) << in.pin
	switch {
	case (from^to)&bit == 0:
		return false
	case in.opts.Edge == gpio.RisingEdge:
		return to&bit != 0
	case in.opts.Edge == gpio.FallingEdge:
		return to&bit == 0
	}
	return true
}

// Descriptor implements device.Device.
func (o *Output) Descriptor() device.Descriptor { return o.desc }

// Write latches req.Value (a bool, inverted with invert): one OLAT write.
// A chip that does not answer fails it, with why.
func (o *Output) Write(ctx context.Context, req device.WriteRequest) (device.WriteResult, error) {
	if err := ctx.Err(); err != nil {
		return device.WriteResult{}, err
	}
	v, ok := req.Value.(bool)
	if !ok {
		return device.WriteResult{}, fmt.Errorf("gpio output %s: value %v (%T) is not a boolean", o.desc.ID, req.Value, req.Value)
	}
	l := gpio.Level(v != o.invert)
	if err := o.chip.set(o.pin, bool(l)); err != nil {
		return device.WriteResult{}, fmt.Errorf("gpio output %s: set %s %s: %w", o.desc.ID, pinName(o.desc, o.chip, o.pin), l, err)
	}
	return device.WriteResult{}, nil
}

// Run reports the output's state (its chip's) until ctx ends.
func (o *Output) Run(ctx context.Context, r device.Reporter) {
	c := o.chip
	c.reportMu.Lock()
	c.mu.Lock()
	o.r = r
	fault := c.fault
	c.mu.Unlock()
	o.report(r, fault)
	c.reportMu.Unlock()

	<-ctx.Done()
	c.mu.Lock()
	o.r = nil
	c.mu.Unlock()
}

// report tells r the fault, or ok, if it changed; chip.reportMu is held.
func (o *Output) report(r device.Reporter, fault string) {
	if fault == o.reported {
		return
	}
	o.reported = fault
	if fault == "" {
		r.State(device.StateOK, "")
		return
	}
	r.State(device.StateFault, fault)
}
