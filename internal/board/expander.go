package board

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/internal/hw/i2c/mcp23017"
)

// Expander pins (issue 30, point 5): `pin: ex1:GPA0` on a chip declared
// under chips:, for gpio.input and gpio.output devices.

// expanderModels are the chip types whose pins are devices.
var expanderModels = map[string]mcp23017.Model{"mcp23017": mcp23017.MCP23017, "mcp23008": mcp23017.MCP23008}

// ExpanderPin is a device's pin on an I/O expander of chips:.
type ExpanderPin struct {
	Chip   string // the chip's name under chips: ("ex1")
	Config ChipConfig
	Model  mcp23017.Model
	Pin    int // 0..15: GPA0..GPA7 are 0..7, GPB0..GPB7 8..15
}

// Name is the pin as descriptors show it, by the datasheet's name:
// "ex1:GPA0", whichever form the file used ("ex1:0").
func (p ExpanderPin) Name() string { return p.Chip + ":" + p.Model.PinName(p.Pin) }

// errChipInvalid: the pin's chip is declared, but its own fields are at
// fault (reported on them).
var errChipInvalid = errors.New("chip at fault")

// ExpanderPinOf tells whether spec names a pin of an expander: "ex1:GPA0"
// or "ex1:0" with ex1 under chips:, or any "NAME:GPx..." (then NAME must
// be declared). "gpiochip0:17" and other CHIP:OFFSET lines of a chip not
// declared are not (false, nil): the board's GPIO chips take them.
func (c *Config) ExpanderPinOf(spec string) (ExpanderPin, bool, error) {
	return expanderPinOf(c.Chips, spec)
}

func expanderPinOf(chips map[string]ChipConfig, spec string) (ExpanderPin, bool, error) {
	s := strings.TrimSpace(spec)
	name, rest, found := strings.Cut(s, ":")
	if !found {
		return ExpanderPin{}, false, nil
	}
	cc, declared := chips[name]
	if !declared {
		if !strings.HasPrefix(strings.ToUpper(rest), "GP") {
			return ExpanderPin{}, false, nil
		}
		names := slices.Sorted(maps.Keys(chips))
		have := "none is declared"
		if len(names) > 0 {
			have = "chips: has " + strings.Join(names, ", ")
		}
		return ExpanderPin{}, true, fmt.Errorf("%q: no chip %q under chips: (%s)", s, name, have)
	}
	m, ok := expanderModels[cc.Type]
	switch {
	case cc.Type == "pca9685":
		return ExpanderPin{}, true, fmt.Errorf("%q: chips.%s is a pca9685: its outputs are pwm devices (pwm: {chip: %s, channel: N}), not pins", s, name, name)
	case !ok:
		return ExpanderPin{}, true, errChipInvalid
	}
	pin, err := m.ParsePin(rest)
	if err != nil {
		return ExpanderPin{}, true, fmt.Errorf("%q: chips.%s is a %s: %v", s, name, cc.Type, err)
	}
	return ExpanderPin{Chip: name, Config: cc, Model: m, Pin: pin}, true, nil
}

// expanderPin checks a device's pin if it is an expander's, and claims
// it; isExp tells whether it was one, ok whether it is usable.
func (v *validator) expanderPin(path string, dc DeviceConfig, u *usage) (isExp, ok bool) {
	p, isExp, err := expanderPinOf(u.declared, dc.Pin)
	switch {
	case !isExp:
		return false, false
	case errors.Is(err, errChipInvalid):
		return true, false
	case err != nil:
		v.add(path+".pin", "%v", err)
		return true, false
	}
	if _, valid := u.chipOf(p.Chip); !valid {
		return true, false // the chip's fields say why
	}
	spec := strings.TrimSpace(dc.Pin)
	shown := p.Name()
	if !strings.EqualFold(spec, shown) {
		shown = fmt.Sprintf("%s (%s)", spec, p.Name())
	}
	if dc.Kind != device.KindGPIOInput && dc.Kind != device.KindGPIOOutput {
		v.add(path+".pin", "%s is a pin of chips.%s, an I/O expander: only gpio.input and gpio.output devices take one (a %s device needs a line of the board: GPIO17, pin11)", shown, p.Chip, dc.Kind)
		return true, false
	}
	key := "chips." + p.Chip + ":" + p.Model.PinName(p.Pin)
	if other, dup := u.pins[key]; dup {
		v.add(path+".pin", "%s is also used by %s", shown, other.owner)
		return true, true
	}
	u.pins[key] = pinUse{owner: path, field: path + ".pin", shown: shown}
	if dc.Kind == device.KindGPIOInput {
		return true, v.expanderInput(path, dc, p, shown)
	}
	return true, true
}

// expanderInput checks what an expander's input needs: the chip's INT
// wired, a pull it has, a pin that may be an input.
func (v *validator) expanderInput(path string, dc DeviceConfig, p ExpanderPin, shown string) bool {
	ok := true
	if p.Config.Interrupt == "" {
		v.add(path+".pin", "%s: chips.%s has no interrupt: an expander's inputs are read when its INT output falls, not polled; wire INT (INTA) to a free GPIO and name it in chips.%s.interrupt",
			shown, p.Chip, p.Chip)
		ok = false
	}
	if p.Model == mcp23017.MCP23017 && (p.Pin == 7 || p.Pin == 15) {
		v.add(path+".pin", "%s: GPA7 and GPB7 of the MCP23017 are outputs only (datasheet DS20001952 since revision D, 2022, for every chip made: as inputs they can corrupt SDA while the chip is read, and with it the whole bus); use another pin for the input, or GPA7/GPB7 for an output",
			shown)
		ok = false
	}
	if dc.Pull == "down" {
		v.add(path+".pull", "the %s has 100 kΩ pull-ups only: want up or none (for a pull-down, fit a resistor to ground and say none)", p.Config.Type)
		ok = false
	}
	return ok
}

// expanderDescriptor adds to an expander pin's descriptor where the
// chip sits: its pin by the datasheet's name, bus, address, chip type
// and the pin's number as its channel.
func (c *Config) expanderDescriptor(d device.Descriptor, dc DeviceConfig) device.Descriptor {
	p, isExp, err := c.ExpanderPinOf(dc.Pin)
	if !isExp || err != nil {
		return d
	}
	d.Pin, d.Bus, d.Chip = p.Name(), i2cBusPath(p.Config.Bus), p.Config.Type
	if p.Config.Address != nil {
		d.Address = hexAddr(*p.Config.Address)
	}
	ch := p.Pin
	d.Channel = &ch
	return d
}
