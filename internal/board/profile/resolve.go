package profile

import (
	"fmt"
	"strconv"
	"strings"
)

// LineRef says which GPIO line to open.
//
// With Chip set, open line Offset of that chip: Chip is a chip label
// ("pinctrl-bcm2711", found by scanning the chips' labels) or a chip
// name ("gpiochip0"). With Chip empty (the generic board's line names),
// find the line whose kernel name is Name on any chip. Name is otherwise
// for messages: the header's "GPIO17", which may differ from the name the
// running kernel gives the line (the Pi 3B's kernel calls GPIO2 "SDA1"),
// and so must not be used to open a line that has a Chip and Offset.
type LineRef struct {
	Chip   string
	Offset int // -1 when the line is found by Name
	Name   string
}

// String renders the reference as a config value would name it.
func (r LineRef) String() string {
	switch {
	case r.Chip == "":
		return r.Name
	case r.Name == "":
		return fmt.Sprintf("%s:%d", r.Chip, r.Offset)
	}
	return fmt.Sprintf("%s:%d (%s)", r.Chip, r.Offset, r.Name)
}

// ResolvePin turns a pin as a configuration names it into the line to
// open. It accepts
//
//   - a header line name, "GPIO17" (or a kernel alias such as "SDA1"),
//   - a physical header pin, "pin11",
//   - a chip label and offset, "pinctrl-rp1:17", or a chip name and
//     offset, "gpiochip0:17" (on a Pi 5 prefer the label: the chip's
//     number changed between kernels),
//
// and on the generic board any other line name, found by name when the
// line is opened. The prefixes "GPIO" and "pin" are case-insensitive. On
// a Raspberry Pi, GPIO0 and GPIO1 (pins 27/28) are refused as the HAT ID
// EEPROM's bus; CHIP:OFFSET still reaches them deliberately.
func (p *Profile) ResolvePin(spec string) (LineRef, error) {
	s := strings.TrimSpace(spec)
	if s == "" {
		return LineRef{}, fmt.Errorf("empty pin: want a line name (GPIO17), a header pin (pin11) or CHIP:OFFSET (gpiochip0:17)")
	}
	if i := strings.LastIndexByte(s, ':'); i >= 0 {
		return p.resolveChipOffset(s, s[:i], s[i+1:])
	}
	if n, ok := numberAfter(s, "pin"); ok {
		return p.resolveHeaderPin(s, n)
	}
	if p.GPIOChipLabel == "" {
		// Generic board: the kernel's own line names are all there is.
		return LineRef{Offset: -1, Name: s}, nil
	}
	if n, ok := numberAfter(s, "GPIO"); ok {
		return p.resolveBCM(s, n)
	}
	if n, ok := p.LineAliases[s]; ok {
		return p.resolveBCM(s, n)
	}
	return LineRef{}, fmt.Errorf("%q: unknown line on the %s: want GPIO2..GPIO27, pin1..pin40 or CHIP:OFFSET (%s:17)",
		s, p.Description, p.GPIOChipLabel)
}

// numberAfter reports the decimal number following prefix (matched
// without regard to case), if all of the rest is digits.
func numberAfter(s, prefix string) (int, bool) {
	if len(s) <= len(prefix) || !strings.EqualFold(s[:len(prefix)], prefix) {
		return 0, false
	}
	rest := s[len(prefix):]
	for _, c := range rest {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	n, err := strconv.Atoi(rest)
	return n, err == nil
}

func (p *Profile) resolveHeaderPin(spec string, n int) (LineRef, error) {
	if len(p.Pins) == 0 {
		return LineRef{}, fmt.Errorf("%q: the %s board has no known header: name the line (GPIO17) or give CHIP:OFFSET (gpiochip0:17)", spec, p.Name)
	}
	pin, ok := p.Pins[n]
	if !ok {
		return LineRef{}, fmt.Errorf("%q: the %s's header has pins 1 to %d", spec, p.Description, len(p.Pins))
	}
	switch pin.Kind {
	case GPIO:
		return LineRef{Chip: p.GPIOChipLabel, Offset: pin.BCM, Name: pin.Line}, nil
	case ID:
		return LineRef{}, p.reservedError(fmt.Sprintf("pin %d is %s (GPIO%d)", n, pin.Line, pin.BCM), pin.BCM)
	}
	return LineRef{}, fmt.Errorf("pin %d is %s, not a GPIO", n, pin.Kind)
}

func (p *Profile) resolveBCM(spec string, n int) (LineRef, error) {
	pin, ok := p.HeaderPin(n)
	if !ok && n < p.GPIOChipLines {
		return LineRef{}, fmt.Errorf("%q: GPIO%d is not on the %s's 40-pin header (GPIO2 to GPIO27); address other lines as %s:%d",
			spec, n, p.Description, p.GPIOChipLabel, n)
	}
	if !ok {
		return LineRef{}, fmt.Errorf("%q: GPIO%d is not on the %s's 40-pin header (GPIO2 to GPIO27), nor on its chip %s (%d lines)",
			spec, n, p.Description, p.GPIOChipLabel, p.GPIOChipLines)
	}
	if pin.Kind == ID {
		return LineRef{}, p.reservedError(fmt.Sprintf("%q is %s on pin %d", spec, pin.Line, pin.Number), n)
	}
	return LineRef{Chip: p.GPIOChipLabel, Offset: n, Name: pin.Line}, nil
}

func (p *Profile) reservedError(what string, bcm int) error {
	return fmt.Errorf("%s, reserved for the HAT ID EEPROM, not a user GPIO (write %s:%d to use the line anyway)",
		what, p.GPIOChipLabel, bcm)
}

// piChipLabels are the header chips of the Raspberry Pi models: naming
// another model's chip is a mistake worth stopping at.
func piChipLabels() []string {
	return []string{"pinctrl-bcm2835", "pinctrl-bcm2711", "pinctrl-rp1"}
}

func (p *Profile) resolveChipOffset(spec, chip, off string) (LineRef, error) {
	if chip == "" {
		return LineRef{}, fmt.Errorf("%q: no chip before ':' (want pinctrl-bcm2711:17 or gpiochip0:17)", spec)
	}
	if strings.ContainsAny(chip, " \t") {
		return LineRef{}, fmt.Errorf("%q: chip %q contains a space", spec, chip)
	}
	n, err := strconv.Atoi(off)
	if err != nil || n < 0 || strings.HasPrefix(off, "+") {
		return LineRef{}, fmt.Errorf("%q: offset %q is not a line number (0 or more)", spec, off)
	}
	if p.GPIOChipLabel != "" && chip != p.GPIOChipLabel {
		for _, l := range piChipLabels() {
			if chip == l {
				return LineRef{}, fmt.Errorf("%q: %s is another Raspberry Pi model's GPIO chip; the %s's header chip is %s",
					spec, chip, p.Description, p.GPIOChipLabel)
			}
		}
	}
	ref := LineRef{Chip: chip, Offset: n}
	if chip == p.GPIOChipLabel {
		if p.GPIOChipLines > 0 && n >= p.GPIOChipLines {
			return LineRef{}, fmt.Errorf("%q: offset %d out of range: %s has %d lines (0 to %d)",
				spec, n, chip, p.GPIOChipLines, p.GPIOChipLines-1)
		}
		if pin, ok := p.HeaderPin(n); ok {
			ref.Name = pin.Line
		}
	}
	return ref, nil
}
