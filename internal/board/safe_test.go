package board

import (
	"errors"
	"testing"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/internal/board/sim"
)

// TestSafeDefaults: every output has a safe value without the file
// giving one (off for a GPIO output, inverted or not; duty 0 for a PWM),
// `safe: none` takes it away with the file's reason, and a serial line
// has none unless the file gives it a line.
func TestSafeDefaults(t *testing.T) {
	c, err := Parse([]byte(`board: generic
devices:
  o: {kind: gpio.output, pin: relay1}
  lo: {kind: gpio.output, pin: relay2, invert: true}
  p: {kind: pwm, frequency: 50, pwm: software, pin: servo}
  keep: {kind: gpio.output, pin: relay3, safe: none, noSafeReason: "holds the door magnet"}
  on: {kind: gpio.output, pin: relay4, safe: true}
  m: {kind: serial, port: /dev/ttyACM0, baud: 9600}
  i: {kind: gpio.input, pin: button1}
`))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	tests := []struct {
		id      string
		safe    any
		reason  string
		initial any
	}{
		{"o", false, "", false},
		{"lo", false, "", false},
		{"p", 0.0, "", 0.0},
		{"keep", nil, "holds the door magnet", false},
		{"on", true, "", true},
		{"m", nil, serialNoSafe, nil},
		{"i", nil, "", nil},
	}
	byID := map[string]device.Descriptor{}
	for _, d := range c.Descriptors() {
		byID[d.ID] = d
	}
	for _, tt := range tests {
		d := byID[tt.id]
		if d.Safe != tt.safe || d.NoSafeReason != tt.reason {
			t.Errorf("%s: safe %v, noSafeReason %q; want %v, %q", tt.id, d.Safe, d.NoSafeReason, tt.safe, tt.reason)
		}
		if v := c.Devices[tt.id].InitialValue(); v != tt.initial {
			t.Errorf("%s starts at %v, want %v", tt.id, v, tt.initial)
		}
	}
	want := `devices.keep.safe: none: an emergency stop leaves keep as it is (holds the door magnet)`
	if w := c.Warnings(); w.Error() != want {
		t.Errorf("Warnings() =\n%v\nwant\n%s", w, want)
	}
}

// TestSafeNoneOnSim: the sim's outputs have safe values of their own
// (the fan 0, the LED off); `safe: none` takes one away and is the only
// warning, in the order of the file.
func TestSafeNoneOnSim(t *testing.T) {
	c, err := Parse([]byte(`board: sim
devices:
  sim.led: {safe: none, noSafeReason: "a status light"}
  sim.fan: {safe: none, noSafeReason: "must keep cooling the rack"}
  sim.heater: {risk: high}
`))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	for _, d := range c.Descriptors() {
		var want any
		switch d.ID {
		case sim.Heater:
			want = false
		}
		if d.Access.CanWrite() && d.ID != sim.Meter && d.Safe != want {
			t.Errorf("%s: safe %v, want %v", d.ID, d.Safe, want)
		}
		if d.ID == sim.Fan && d.NoSafeReason != "must keep cooling the rack" {
			t.Errorf("sim.fan's noSafeReason %q", d.NoSafeReason)
		}
	}
	want := "devices.sim.led.safe: none: an emergency stop leaves sim.led as it is (a status light)\n" +
		"devices.sim.fan.safe: none: an emergency stop leaves sim.fan as it is (must keep cooling the rack)"
	if w := c.Warnings(); w.Error() != want {
		t.Errorf("Warnings() =\n%v\nwant\n%s", w, want)
	}
	if w := Default().Warnings(); len(w) != 0 {
		t.Errorf("the default configuration warns: %v", w)
	}
}

// TestSafeDefaultsServeRules: maxOnMs and interlock, which drive a device
// back to its safe value, work with the default safe values alone.
func TestSafeDefaultsServeRules(t *testing.T) {
	for _, file := range []string{
		"board: sim\ndevices:\n  sim.fan:\n    rules: {maxOnMs: 1000, interlock: [{device: sim.door, op: eq, value: false}]}\n",
		"board: sim\ndevices:\n  sim.led:\n    rules: {maxOnMs: 1000}\n",
		"board: generic\ndevices:\n  o: {kind: gpio.output, pin: relay1, rules: {maxOnMs: 1000}}\n" +
			"  p: {kind: pwm, frequency: 50, pwm: software, pin: servo, rules: {interlock: [{device: o, op: eq, value: false}]}}\n",
	} {
		if _, err := Parse([]byte(file)); err != nil {
			t.Errorf("%s: %v", file, err)
		}
	}
}

// TestSafeNoneErrors: `safe: none` needs a reason, a reason needs
// `safe: none`, a read-only device has no safe setting at all, and a
// rule that drives the device back to safe refuses it.
func TestSafeNoneErrors(t *testing.T) {
	tests := []struct{ name, yaml, want string }{
		{"no reason", "board: sim\ndevices:\n  sim.fan: {safe: none}\n",
			"devices.sim.fan.noSafeReason: required with safe: none: say why an emergency stop must leave sim.fan as it is"},
		{"empty reason", "board: sim\ndevices:\n  sim.fan: {safe: none, noSafeReason: \"\"}\n",
			"devices.sim.fan.noSafeReason: required with safe: none: say why an emergency stop must leave sim.fan as it is"},
		{"reason without none", "board: sim\ndevices:\n  sim.fan: {safe: 0, noSafeReason: cools}\n",
			"devices.sim.fan.noSafeReason: only with safe: none (it says why sim.fan has no safe value)"},
		{"none on an input", "board: sim\ndevices:\n  sim.door: {safe: none, noSafeReason: x}\n",
			`devices.sim.door.safe: sim.door is read-only (access "r"): nothing writes it, so safe makes no sense`},
		{"none under the board's rules", "board: sim\ndevices:\n  sim.heater: {safe: none, noSafeReason: x, rules: {interlock: []}}\n",
			"devices.sim.heater.safe: sim.heater cannot have safe: none: the board's maxOnMs rule drives it back to its safe value"},
		{"none on a real output with maxOnMs", "board: generic\ndevices:\n  o: {kind: gpio.output, pin: relay1, safe: none, noSafeReason: x, rules: {maxOnMs: 5}}\n",
			"devices.o.rules.maxOnMs: o has safe: none, so no safe value to go back to (give it one)"},
		{"reason on a sensor", "board: generic\ndevices:\n  s: {kind: sensor, driver: tmp102, bus: 1, address: 0x48, noSafeReason: x}\n",
			"devices.s.noSafeReason: only with safe: none (it says why s has no safe value)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Parse([]byte(tt.yaml))
			var errs Errors
			if !errors.As(err, &errs) {
				t.Fatalf("Parse = %+v, %v; want an Errors", c, err)
			}
			if err.Error() != tt.want {
				t.Errorf("error\n%s\nwant\n%s", err, tt.want)
			}
		})
	}
}
