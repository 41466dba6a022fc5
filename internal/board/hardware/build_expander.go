package hardware

import (
	"fmt"
	"maps"
	"slices"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/internal/board"
	"github.com/openhal/gateway/internal/hw/expander"
)

// Expanders (issue 30, point 5): each chip of chips: that a device's pin
// names is opened once, at its first pin, on the bus the sensors share;
// its INT line through the Host; it is started once Build has declared
// all its pins, so that its setup is written whole.

// expanderDevice makes the device on an expander's pin, if dc's pin is
// one (ok false otherwise).
func (b *builder) expanderDevice(desc device.Descriptor, dc board.DeviceConfig) (_ device.Device, ok bool, _ error) {
	p, ok, err := b.cfg.ExpanderPinOf(dc.Pin)
	if !ok || err != nil {
		return nil, ok, err
	}
	chip, err := b.expander(p, desc.Bus)
	if err != nil {
		return nil, true, err
	}
	switch dc.Kind {
	case device.KindGPIOOutput:
		initial, isBool := dc.InitialValue().(bool)
		if !isBool {
			return nil, true, fmt.Errorf("initial value %v is not a boolean", dc.InitialValue())
		}
		o, err := chip.Output(desc, p.Pin, initial, dc.Invert != nil && *dc.Invert)
		return o, true, err
	case device.KindGPIOInput:
		in, err := chip.Input(desc, p.Pin, dc.InputOpts())
		return in, true, err
	}
	return nil, true, fmt.Errorf("%s is an expander's pin: a %s device cannot use it", p.Name(), dc.Kind)
}

// expander opens p's chip, or returns it opened.
func (b *builder) expander(p board.ExpanderPin, busPath string) (*expander.Chip, error) {
	if c, ok := b.expanders[p.Chip]; ok {
		return c, nil
	}
	if p.Config.Address == nil {
		return nil, fmt.Errorf("chips.%s: no address", p.Chip)
	}
	bus, err := b.bus(p.Config.Bus)
	if err != nil {
		return nil, fmt.Errorf("chips.%s: %w", p.Chip, err)
	}
	cfg := expander.Config{Name: p.Chip, Model: p.Model, Bus: bus, BusName: busPath,
		Addr: uint16(*p.Config.Address), Clock: b.clk, Log: b.log}
	if p.Config.Interrupt != "" {
		line, _, err := b.line(board.DeviceConfig{Pin: p.Config.Interrupt})
		if err != nil {
			return nil, fmt.Errorf("chips.%s.interrupt: %w", p.Chip, err)
		}
		cfg.INT = line
	}
	c, err := expander.NewChip(cfg)
	if err != nil {
		return nil, err
	}
	if b.expanders == nil {
		b.expanders = map[string]*expander.Chip{}
	}
	b.expanders[p.Chip] = c
	return c, nil
}

// startExpanders sets up the chips opened and starts their watchers; a
// chip that does not answer is no error (its devices are in fault until
// it does), an INT line that cannot be requested is.
func (b *builder) startExpanders() error {
	for _, name := range slices.Sorted(maps.Keys(b.expanders)) {
		c := b.expanders[name]
		if err := c.Start(); err != nil {
			return fmt.Errorf("chips.%s: %w", name, err)
		}
		b.closers = append(b.closers, c.Close)
	}
	return nil
}
