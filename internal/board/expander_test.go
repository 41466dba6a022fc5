package board

import (
	"testing"

	"github.com/openhal/gateway/device"
)

// TestExpanderPinErrors has one fault per file on an expander's pins,
// each giving exactly one line with its path.
func TestExpanderPinErrors(t *testing.T) {
	const chips = "board: rpi4b\nchips:\n  ex1: {type: mcp23017, bus: 1, address: 0x20, interrupt: GPIO17}\n" +
		"  ex8: {type: mcp23008, bus: 1, address: 0x21}\n  servos: {type: pca9685, bus: 1, address: 0x40, frequency: 50}\ndevices:\n"
	dev := func(entries string) string { return chips + entries }
	tests := []struct {
		name, yaml, want string
	}{
		{"undeclared chip", dev("  arm.limit: {kind: gpio.input, pin: ex2:GPA0}\n"),
			`devices.arm.limit.pin: "ex2:GPA0": no chip "ex2" under chips: (chips: has ex1, ex8, servos)`},
		{"no chips at all", "board: rpi4b\ndevices:\n  arm.limit: {kind: gpio.input, pin: ex1:gpa0}\n",
			`devices.arm.limit.pin: "ex1:gpa0": no chip "ex1" under chips: (none is declared)`},
		{"no such pin", dev("  arm.lamp: {kind: gpio.output, pin: ex1:GPA8}\n"),
			`devices.arm.lamp.pin: "ex1:GPA8": chips.ex1 is a mcp23017: the MCP23017 has no pin "GPA8" (GPA0..GPA7, GPB0..GPB7 or 0..15)`},
		{"number beyond the chip", dev("  arm.lamp: {kind: gpio.output, pin: ex1:16}\n"),
			`devices.arm.lamp.pin: "ex1:16": chips.ex1 is a mcp23017: the MCP23017 has no pin "16" (GPA0..GPA7, GPB0..GPB7 or 0..15)`},
		{"port A on an MCP23008", dev("  arm.lamp: {kind: gpio.output, pin: ex8:GPA0}\n"),
			`devices.arm.lamp.pin: "ex8:GPA0": chips.ex8 is a mcp23008: the MCP23008 has no pin "GPA0" (GP0..GP7 or 0..7)`},
		{"claimed twice", dev("  arm.a: {kind: gpio.output, pin: ex1:GPA0}\n  arm.b: {kind: gpio.output, pin: ex1:0}\n"),
			"devices.arm.b.pin: ex1:0 (ex1:GPA0) is also used by devices.arm.a"},
		{"pull down", dev("  arm.limit: {kind: gpio.input, pin: ex1:GPA0, pull: down}\n"),
			"devices.arm.limit.pull: the mcp23017 has 100 kΩ pull-ups only: want up or none (for a pull-down, fit a resistor to ground and say none)"},
		{"unknown edge", dev("  arm.limit: {kind: gpio.input, pin: ex1:GPA0, edge: up}\n"),
			`devices.arm.limit.edge: unknown edge "up" (want both, rising or falling)`},
		{"negative debounce", dev("  arm.limit: {kind: gpio.input, pin: ex1:GPA0, debounce: -1ms}\n"),
			"devices.arm.limit.debounce: must not be negative, got -1ms"},
		{"input without interrupt", dev("  arm.limit: {kind: gpio.input, pin: ex8:GP0}\n"),
			"devices.arm.limit.pin: ex8:GP0: chips.ex8 has no interrupt: an expander's inputs are read when its INT output falls, not polled; wire INT (INTA) to a free GPIO and name it in chips.ex8.interrupt"},
		{"GPB7 an input", dev("  arm.limit: {kind: gpio.input, pin: ex1:15}\n"),
			"devices.arm.limit.pin: ex1:15 (ex1:GPB7): GPA7 and GPB7 of the MCP23017 are outputs only (datasheet DS20001952 since revision D, 2022, for every chip made: as inputs they can corrupt SDA while the chip is read, and with it the whole bus); use another pin for the input, or GPA7/GPB7 for an output"},
		{"a pwm on an expander", dev("  arm.fan: {kind: pwm, pin: ex1:GPA0, frequency: 50, pwm: software}\n"),
			"devices.arm.fan.pin: ex1:GPA0 is a pin of chips.ex1, an I/O expander: only gpio.input and gpio.output devices take one (a pwm device needs a line of the board: GPIO17, pin11)"},
		{"a PWM board's output as a pin", dev("  arm.lamp: {kind: gpio.output, pin: servos:3}\n"),
			`devices.arm.lamp.pin: "servos:3": chips.servos is a pca9685: its outputs are pwm devices (pwm: {chip: servos, channel: N}), not pins`},
		{"a chip at fault is reported once", "board: rpi4b\nchips:\n  ex1: {bus: 1, address: 0x20}\ndevices:\n  arm.lamp: {kind: gpio.output, pin: ex1:GPA0}\n",
			"chips.ex1.type: required (mcp23017, mcp23008 or pca9685)"},
		{"safe that does not fit", dev("  arm.lamp: {kind: gpio.output, pin: ex1:GPA0, safe: 3}\n"),
			"devices.arm.lamp.safe: 3 does not fit arm.lamp: want a boolean, got a number"},
		{"the interrupt line as a pin", dev("  arm.lamp: {kind: gpio.output, pin: GPIO17}\n"),
			"devices.arm.lamp.pin: GPIO17 is also used by chips.ex1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkOneFault(t, tt.yaml, tt.want)
		})
	}
}

// TestExpanderDevices: expander pins as the file may write them, with
// invert, initial, safe, an interlock and the stop button as on a Pi
// line; descriptors say where the pin is. CHIP:OFFSET of a GPIO chip
// that is not declared stays a line of the board, and GPB7 drives.
func TestExpanderDevices(t *testing.T) {
	c, err := Parse([]byte(`board: rpi4b
chips:
  ex1: {type: mcp23017, bus: 1, address: 0x20, interrupt: GPIO17}
  ex8: {type: mcp23008, bus: /dev/i2c-1, address: 0x27}
devices:
  arm.guard: {kind: gpio.input, pin: ex1:9, pull: up, invert: true, debounce: 20ms, edge: both}
  arm.stop: {kind: gpio.input, pin: ex1:gpa0, pull: none}
  arm.lamp:
    kind: gpio.output
    pin: ex1:GPB7
    invert: true
    initial: false
    safe: false
    rules: {interlock: [{device: arm.guard, op: eq, value: false}], maxOnMs: 60000}
  arm.horn: {kind: gpio.output, pin: ex8:GP7, risk: low}
  arm.led: {kind: gpio.output, pin: gpiochip2:3}
stopButton: arm.stop
`))
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]device.Descriptor{}
	for _, d := range c.Descriptors() {
		byID[d.ID] = d
	}
	ch := func(d device.Descriptor) int {
		if d.Channel == nil {
			return -1
		}
		return *d.Channel
	}
	for _, tt := range []struct {
		id, pin, bus, addr, chip string
		channel                  int
	}{
		{"arm.guard", "ex1:GPB1", "/dev/i2c-1", "0x20", "mcp23017", 9},
		{"arm.stop", "ex1:GPA0", "/dev/i2c-1", "0x20", "mcp23017", 0},
		{"arm.lamp", "ex1:GPB7", "/dev/i2c-1", "0x20", "mcp23017", 15},
		{"arm.horn", "ex8:GP7", "/dev/i2c-1", "0x27", "mcp23008", 7},
		{"arm.led", "gpiochip2:3", "", "", "", -1},
	} {
		d := byID[tt.id]
		if d.Pin != tt.pin || d.Bus != tt.bus || d.Address != tt.addr || d.Chip != tt.chip || ch(d) != tt.channel {
			t.Errorf("%s: pin %q bus %q address %q chip %q channel %d; want %+v", tt.id, d.Pin, d.Bus, d.Address, d.Chip, ch(d), tt)
		}
	}
	if d := byID["arm.lamp"]; d.Kind != device.KindGPIOOutput || d.Risk != device.RiskHigh || d.Safe != false {
		t.Errorf("arm.lamp: %+v", d)
	}
	if d := byID["arm.guard"]; d.Kind != device.KindGPIOInput || d.Access != device.AccessRead {
		t.Errorf("arm.guard: %+v", d)
	}
	p, ok, err := c.ExpanderPinOf("ex1:9")
	if !ok || err != nil || p.Chip != "ex1" || p.Pin != 9 || p.Name() != "ex1:GPB1" || *p.Config.Address != 0x20 {
		t.Errorf("ExpanderPinOf = %+v, %v, %v", p, ok, err)
	}
	if _, ok, err := c.ExpanderPinOf("gpiochip2:3"); ok || err != nil {
		t.Errorf("a GPIO chip's line: %v, %v", ok, err)
	}
}
