package board

import (
	"testing"
)

// TestChipErrors has one fault per file in chips:, each giving exactly
// one line with its path.
func TestChipErrors(t *testing.T) {
	chip := func(name, fields string) string {
		return "board: rpi4b\nchips:\n  " + name + ": {" + fields + "}\n"
	}
	ex := func(fields string) string { return chip("ex1", "type: mcp23017, bus: 1, "+fields) }
	pwm := func(fields string) string { return chip("servos", "type: pca9685, bus: 1, "+fields) }
	tests := []struct {
		name, yaml, want string
	}{
		{"no type", chip("ex1", "bus: 1, address: 0x20"), "chips.ex1.type: required (mcp23017, mcp23008 or pca9685)"},
		{"unknown type", chip("ex1", "type: pcf8574, bus: 1, address: 0x20"), `chips.ex1.type: unknown chip "pcf8574" (want mcp23017, mcp23008 or pca9685)`},
		{"bad name", chip("Ex-1", "type: mcp23017, bus: 1, address: 0x20"), `chips.Ex-1: "Ex-1" is not a chip name: want lowercase letters, digits or '_', starting with a letter, at most 32, and not gpiochipN`},
		{"gpiochip name", chip("gpiochip9", "type: mcp23017, bus: 1, address: 0x20"), `chips.gpiochip9: "gpiochip9" is not a chip name: want lowercase letters, digits or '_', starting with a letter, at most 32, and not gpiochipN`},
		{"no bus", chip("ex1", "type: mcp23017, address: 0x20"), "chips.ex1.bus: required (a bus number such as 1, or /dev/i2c-1)"},
		{"reserved bus", chip("ex1", "type: mcp23017, address: 0x20, bus: 0"), "chips.ex1.bus: bus 0 is reserved on the Raspberry Pi 4 Model B: pins 27 (ID_SD) and 28 (ID_SC): the HAT ID EEPROM's bus, read by the firmware at boot; not for devices. Behind an i2c mux on current kernels, so it has no single controller."},
		{"no address", ex(""), "chips.ex1.address: required (the chip's 7-bit I2C address, such as 0x20)"},
		{"expander address", ex("address: 0x40"), "chips.ex1.address: 0x40 is out of range for a mcp23017 (0x20 to 0x27)"},
		{"all call", pwm("address: 0x70, frequency: 50"), "chips.servos.address: 0x70 is out of range for a pca9685 (0x40 to 0x7f but 0x70, its All Call address)"},
		{"no frequency", pwm("address: 0x40"), "chips.servos.frequency: required: the PWM frequency in Hz its outputs share (50 for servos)"},
		{"frequency too high", pwm("address: 0x40, frequency: 2000"), "chips.servos.frequency: want 23.8 to 1525.9 Hz (the PCA9685's prescaler), got 2000"},
		{"frequency on an expander", ex("address: 0x20, frequency: 50"), "chips.ex1.frequency: a mcp23017 has no frequency"},
		{"interrupt on a pwm board", pwm("address: 0x40, frequency: 50, interrupt: GPIO17"), "chips.servos.interrupt: a pca9685 has no interrupt"},
		{"interrupt off the header", ex("address: 0x20, interrupt: GPIO30"), `chips.ex1.interrupt: "GPIO30": GPIO30 is not on the Raspberry Pi 4 Model B's 40-pin header (GPIO2 to GPIO27); address other lines as pinctrl-bcm2711:30`},
		{"interrupt used by a device", ex("address: 0x20, interrupt: GPIO17") + "devices:\n  bench.relay: {kind: gpio.output, pin: pin11}\n",
			"devices.bench.relay.pin: pin11 (GPIO17) is also used by chips.ex1"},
		{"address of a sensor", ex("address: 0x44") + "devices:\n  bench.th: {kind: sensor, driver: sht3x, bus: 1, address: 0x44}\n",
			"chips.ex1.address: 0x44 is out of range for a mcp23017 (0x20 to 0x27)"},
		{"two chips at one address", "board: rpi4b\nchips:\n  a: {type: mcp23017, bus: 1, address: 0x20}\n  b: {type: mcp23008, bus: 1, address: 0x20}\n",
			"chips.b.address: 0x20 on bus 1 is also used by chips.a"},
		{"a sensor at a chip's address", chip("servos", "type: pca9685, bus: 1, address: 0x44, frequency: 50") + "devices:\n  bench.th: {kind: sensor, driver: sht3x, bus: 1, address: 0x44}\n",
			"devices.bench.th.address: 0x44 on bus 1 is also used by chips.servos"},
		{"chips on the sim board", "board: sim\nchips:\n  ex1: {type: mcp23017, bus: 1, address: 0x20}\n", "chips.ex1: the sim board has no buses: chips are for a real board"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkOneFault(t, tt.yaml, tt.want)
		})
	}
}

// TestChipsParse: well-formed chips are kept as the file says them.
func TestChipsParse(t *testing.T) {
	c, err := Parse([]byte(`board: rpi4b
chips:
  ex1: {type: mcp23017, bus: 1, address: 0x20, interrupt: GPIO17}
  servos: {type: pca9685, bus: /dev/i2c-1, address: 0x40, frequency: 50}
`))
	if err != nil {
		t.Fatal(err)
	}
	ex, pwm := c.Chips["ex1"], c.Chips["servos"]
	if ex.Type != "mcp23017" || ex.Bus != "1" || *ex.Address != 0x20 || ex.Interrupt != "GPIO17" {
		t.Errorf("ex1 = %+v", ex)
	}
	if pwm.Type != "pca9685" || pwm.Bus != "/dev/i2c-1" || *pwm.Address != 0x40 || *pwm.Frequency != 50 {
		t.Errorf("servos = %+v", pwm)
	}
}
