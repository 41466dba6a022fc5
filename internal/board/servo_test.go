package board

import (
	"reflect"
	"strings"
	"testing"

	"github.com/openhal/gateway/device"
)

const servoChips = "board: rpi4b\nchips:\n  servos: {type: pca9685, bus: 1, address: 0x40, frequency: 50}\n  ex1: {type: mcp23017, bus: 1, address: 0x20}\n  fast: {type: pca9685, bus: 1, address: 0x41, frequency: 1000}\ndevices:\n"

// TestServoErrors has one fault per file, each giving exactly one line
// with its path: servos and pwm devices on a PCA9685's outputs.
func TestServoErrors(t *testing.T) {
	dev := func(fields string) string { return servoChips + "  arm.base: {" + fields + "}\n" }
	onChip := func(fields string) string {
		return dev("kind: servo, pwm: {chip: servos, channel: 0}, safe: 90, " + fields)
	}
	tests := []struct {
		name, yaml, want string
	}{
		{"no safe", dev("kind: servo, pwm: {chip: servos, channel: 0}"),
			"devices.arm.base.safe: required for a servo: the angle an emergency stop, a broken interlock and the shutdown drive it to (a servo has no off), or none with noSafeReason"},
		{"safe none without initial", dev("kind: servo, pwm: {chip: servos, channel: 0}, safe: none, noSafeReason: holds a load"),
			"devices.arm.base.initial: required with safe: none: the angle the servo starts at"},
		{"safe outside the angles", dev("kind: servo, pwm: {chip: servos, channel: 0}, safe: 200"),
			"devices.arm.base.safe: 200 does not fit arm.base: 200 is above the maximum 180"},
		{"initial outside the angles", onChip("initial: -5"),
			"devices.arm.base.initial: -5 does not fit arm.base: -5 is below the minimum 0"},
		{"pulse too short", onChip("minPulseUs: 100"), "devices.arm.base.minPulseUs: 100 µs is outside what a servo reads (400 to 2600 µs)"},
		{"pulse too long", onChip("maxPulseUs: 3000"), "devices.arm.base.maxPulseUs: 3000 µs is outside what a servo reads (400 to 2600 µs)"},
		{"pulses crossed", onChip("minPulseUs: 2000, maxPulseUs: 1000"), "devices.arm.base.maxPulseUs: 1000 µs is not above minPulseUs (2000 µs)"},
		{"angles crossed", dev("kind: servo, pwm: {chip: servos, channel: 0}, safe: 90, minAngle: 90, maxAngle: 90"),
			"devices.arm.base.maxAngle: 90° is not above minAngle (90°)"},
		{"infinite angle", onChip("maxAngle: .inf"), "devices.arm.base.maxAngle: want a finite number of degrees, got +Inf"},
		{"rate zero", onChip("rate: 0"), "devices.arm.base.rate: want a positive number of degrees a second (leave rate out to move at once), got 0"},
		{"software", dev("kind: servo, pin: GPIO23, pwm: software, safe: 90"), "devices.arm.base.pwm: " + softwareServo},
		{"pin without hardware PWM", dev("kind: servo, pin: GPIO23, safe: 90"),
			"devices.arm.base.pin: GPIO23 carries no hardware PWM channel on the Raspberry Pi 4 Model B (GPIO12, GPIO13, GPIO18 or GPIO19 do): use one of those, or pwm: software"},
		{"servo frequency", dev("kind: servo, pin: GPIO18, frequency: 1000, safe: 90"),
			"devices.arm.base.frequency: want 40 to 330 Hz (a servo reads a pulse every 3 to 25 ms; 50 for analog servos), got 1000"},
		{"servo on a fast chip", dev("kind: servo, pwm: {chip: fast, channel: 0}, safe: 90"),
			"devices.arm.base.pwm.chip: chips.fast runs at 1000 Hz; a servo wants 40 to 330 Hz (50 for analog servos)"},
		{"no channel", dev("kind: servo, pwm: {chip: servos}, safe: 90"), "devices.arm.base.pwm.channel: required: the output of chips.servos, 0 to 15"},
		{"channel 16", dev("kind: pwm, pwm: {chip: servos, channel: 16}"), "devices.arm.base.pwm.channel: chips.servos has outputs 0 to 15, not 16"},
		{"pin on a chip", onChip("pin: GPIO18"), "devices.arm.base.pin: an output of chips.servos has no pin of the Pi: pwm {chip, channel} says where it is"},
		{"other frequency", dev("kind: pwm, pwm: {chip: servos, channel: 3}, frequency: 60"),
			"devices.arm.base.frequency: 60 Hz, but chips.servos runs its 16 outputs at 50 Hz: leave frequency out, or say 50"},
		{"expander as pwm", dev("kind: pwm, pwm: {chip: ex1, channel: 0}"),
			"devices.arm.base.pwm.chip: chips.ex1 (mcp23017, 16 pins (GPA0..GPA7, GPB0..GPB7)): a pwm device's chip is a pca9685"},
		{"undeclared chip", dev("kind: servo, pwm: {chip: servo, channel: 0}, safe: 90"),
			`devices.arm.base.pwm.chip: no chip "servo" under chips (a kernel PWM chip is named pwmchipN or by its controller, fe20c000.pwm)`},
		{"channel claimed twice", servoChips + "  a: {kind: servo, pwm: {chip: servos, channel: 5}, safe: 0}\n  b: {kind: pwm, pwm: {chip: servos, channel: 5}}\n",
			"devices.b.pwm.channel: channel 5 of chips.servos is also used by devices.a"},
		{"a pwm field on a servo", onChip("dataBits: 8"), "devices.arm.base.dataBits: a servo device has no dataBits (dataBits is for serial devices)"},
		{"a servo field on a pwm", dev("kind: pwm, pwm: {chip: servos, channel: 3}, rate: 5"), "devices.arm.base.rate: a pwm device has no rate (rate is for servo devices)"},
		{"interlock without safe", dev("kind: servo, pwm: {chip: servos, channel: 0}, initial: 10, safe: none, noSafeReason: holds, rules: {maxOnMs: 1000}"),
			"devices.arm.base.rules.maxOnMs: arm.base has safe: none, so no safe value to go back to (give it one)"},
		{"maximum beyond the angles", onChip("rules: {maximum: 200}"), "devices.arm.base.rules.maximum: 200 is outside arm.base's range (0 to 180)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkOneFault(t, tt.yaml, tt.want)
		})
	}
}

// A chip with faults of its own is reported there only, not again by
// the devices on it.
func TestServoOnABadChip(t *testing.T) {
	_, err := Parse([]byte("board: rpi4b\nchips:\n  servos: {type: pca9685, bus: 1, address: 0x70, frequency: 50}\ndevices:\n  a: {kind: servo, pwm: {chip: servos, channel: 0}, safe: 90}\n"))
	if err == nil || strings.Count(err.Error(), "\n") != 0 || !strings.HasPrefix(err.Error(), "chips.servos.address:") {
		t.Errorf("error %v, want chips.servos.address alone", err)
	}
}

// The descriptors: an x.servo with its angles as the schema (SenML
// "deg"), its pulses and rate; on a PCA9685 its bus, address, chip,
// channel and the frequency the prescaler gives, no pin; on a pin its
// frequency (50 Hz by default); a pwm on a PCA9685 likewise.
func TestServoDescriptors(t *testing.T) {
	c, err := Parse([]byte(servoChips + `  arm.base: {kind: servo, pwm: {chip: servos, channel: 0}, safe: 90, rate: 60, label: Base}
  arm.grip: {kind: servo, pin: GPIO18, minPulseUs: 500, maxPulseUs: 2500, minAngle: -90, maxAngle: 90, safe: 0, initial: 10, risk: low}
  arm.led: {kind: pwm, pwm: {chip: servos, channel: 15}, frequency: 50}
`))
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]device.Descriptor{}
	for _, d := range c.Descriptors() {
		byID[d.ID] = d
	}
	ch := func(n int) *int { return &n }
	f := func(x float64) *float64 { return &x }
	want := map[string]device.Descriptor{
		"arm.base": {ID: "arm.base", Kind: device.KindServo, Label: "Base", Source: "board", Access: device.AccessReadWrite, Risk: device.RiskHigh,
			Schema: device.Schema{Type: device.TypeNumber, Minimum: f(0), Maximum: f(180), Unit: "deg"}, Safe: 90.0, State: device.StateOK,
			Frequency: 25e6 / (4096 * 122), Bus: "/dev/i2c-1", Address: "0x40", Chip: "pca9685", Channel: ch(0),
			MinPulseUs: 1000, MaxPulseUs: 2000, Rate: 60},
		"arm.grip": {ID: "arm.grip", Kind: device.KindServo, Source: "board", Access: device.AccessReadWrite, Risk: device.RiskLow,
			Schema: device.Schema{Type: device.TypeNumber, Minimum: f(-90), Maximum: f(90), Unit: "deg"}, Safe: 0.0, State: device.StateOK,
			Pin: "GPIO18", Frequency: 50, MinPulseUs: 500, MaxPulseUs: 2500},
		"arm.led": {ID: "arm.led", Kind: device.KindPWM, Source: "board", Access: device.AccessReadWrite, Risk: device.RiskHigh,
			Schema: device.Schema{Type: device.TypeNumber, Minimum: f(0), Maximum: f(100), Unit: "%"}, Safe: 0.0, State: device.StateOK,
			Frequency: 25e6 / (4096 * 122), Bus: "/dev/i2c-1", Address: "0x40", Chip: "pca9685", Channel: ch(15)},
	}
	for id, w := range want {
		if got := byID[id]; !reflect.DeepEqual(got, w) {
			t.Errorf("%s =\n%+v\nwant\n%+v", id, got, w)
		}
	}
	if v := c.Devices["arm.base"].InitialValue(); v != 90.0 {
		t.Errorf("arm.base starts at %v, want its safe 90", v)
	}
	if v := c.Devices["arm.grip"].InitialValue(); v != 10.0 {
		t.Errorf("arm.grip starts at %v, want its initial 10", v)
	}
}
