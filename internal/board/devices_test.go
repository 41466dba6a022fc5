package board

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/internal/board/sim"
	"github.com/openhal/gateway/internal/clock/clocktest"
)

func fp(f float64) *float64 { return &f }

// devs is a file with the sim board and the given devices section.
func devs(s string) string { return "board: sim\ndevices:\n" + s }

func TestParseDevices(t *testing.T) {
	const file = `board: sim
devices:
  sim.fan:
    risk: high
    safe: 0
    confirmTtl: 30s
    rules:
      minimum: 10
      maximum: 80.5
      rateLimit: 5
      maxOnMs: 60000
      interlock:
        - {device: sim.door, op: eq, value: false}
        - {device: sim.temperature, op: eq, value: {temperature: 20}}
  sim.led:
    safe: false
    rules:
      interlock:
        - device: sim.fan
          op: lt
          value: 0x32
  sim.meter:
    safe: "OUTP OFF"
    rules: {rateLimit: 2}
  sim.heater:
    rules:
      interlock: []
stopButton: sim.button
`
	c, err := Parse([]byte(file))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	high := device.RiskHigh
	ttl := 30 * time.Second
	five, two, minute := 5, 2, int64(60000)
	wantDevices := map[string]DeviceConfig{
		sim.Fan: {Risk: &high, Safe: 0.0, ConfirmTTL: &ttl, Rules: RulesConfig{
			Minimum: fp(10), Maximum: fp(80.5), RateLimit: &five, MaxOnMs: &minute,
			Interlock: []Condition{
				{Device: sim.Door, Op: "eq", Value: false},
				{Device: sim.Temperature, Op: "eq", Value: map[string]any{"temperature": 20.0}},
			},
		}},
		sim.LED:    {Safe: false, Rules: RulesConfig{Interlock: []Condition{{Device: sim.Fan, Op: "lt", Value: 50.0}}}},
		sim.Meter:  {Safe: "OUTP OFF", Rules: RulesConfig{RateLimit: &two}},
		sim.Heater: {Rules: RulesConfig{Interlock: []Condition{}}},
	}
	if !reflect.DeepEqual(c.Devices, wantDevices) {
		t.Errorf("Devices =\n%+v\nwant\n%+v", c.Devices, wantDevices)
	}
	if c.StopButton() != sim.Button {
		t.Errorf("StopButton() = %q, want %q", c.StopButton(), sim.Button)
	}
	wantOver := map[string]sim.Override{
		sim.Fan:   {Risk: device.RiskHigh, Safe: 0.0},
		sim.LED:   {Safe: false},
		sim.Meter: {Safe: "OUTP OFF"},
	}
	if got := c.Overrides(); !reflect.DeepEqual(got, wantOver) {
		t.Errorf("Overrides() = %+v, want %+v", got, wantOver)
	}
	want := sim.Descriptors(c.Sim)
	for i := range want {
		switch want[i].ID {
		case sim.Fan:
			want[i].Risk, want[i].Safe = device.RiskHigh, 0.0
		case sim.LED:
			want[i].Safe = false
		case sim.Meter:
			want[i].Safe, want[i].NoSafeReason = "OUTP OFF", ""
		}
	}
	if got := c.Descriptors(); !reflect.DeepEqual(got, want) {
		t.Errorf("Descriptors() =\n%+v\nwant\n%+v", got, want)
	}
}

// TestRules: the board's rules merged with the file's, field by field;
// an interlock list replaces the board's.
func TestRules(t *testing.T) {
	door := []device.Condition{{Device: sim.Door, Op: "eq", Value: false}}
	tests := []struct {
		name, devices string
		want          map[string]device.Rules
	}{
		{"none", "", map[string]device.Rules{sim.Heater: {Interlock: door, MaxOn: 10 * time.Minute}}},
		{"added to the board's", "  sim.heater:\n    confirmTtl: 1m\n    rules: {rateLimit: 3}\n",
			map[string]device.Rules{sim.Heater: {Interlock: door, MaxOn: 10 * time.Minute, RateLimit: 3, ConfirmTTL: time.Minute}}},
		{"maxOnMs overrides", "  sim.heater:\n    rules: {maxOnMs: 1500}\n",
			map[string]device.Rules{sim.Heater: {Interlock: door, MaxOn: 1500 * time.Millisecond}}},
		{"interlock replaces", "  sim.heater:\n    rules:\n      interlock: [{device: sim.button, op: ne, value: true}]\n",
			map[string]device.Rules{sim.Heater: {
				Interlock: []device.Condition{{Device: sim.Button, Op: "ne", Value: true}}, MaxOn: 10 * time.Minute}}},
		{"empty interlock removes", "  sim.heater:\n    rules: {interlock: []}\n",
			map[string]device.Rules{sim.Heater: {MaxOn: 10 * time.Minute}}},
		{"fields left out keep the board's", "  sim.heater:\n    rules: {rateLimit: 1}\n  sim.led:\n    risk: high\n",
			map[string]device.Rules{sim.Heater: {Interlock: door, MaxOn: 10 * time.Minute, RateLimit: 1}}},
		{"rules of another device", "  sim.fan:\n    safe: 0\n    rules: {minimum: 5, maximum: 95, maxOnMs: 2000, interlock: [{device: sim.heater, op: eq, value: false}]}\n",
			map[string]device.Rules{
				sim.Heater: {Interlock: door, MaxOn: 10 * time.Minute},
				sim.Fan: {Minimum: fp(5), Maximum: fp(95), MaxOn: 2 * time.Second,
					Interlock: []device.Condition{{Device: sim.Heater, Op: "eq", Value: false}}},
			}},
		{"empty rules leave no entry", "  sim.led:\n    rules: {interlock: []}\n",
			map[string]device.Rules{sim.Heater: {Interlock: door, MaxOn: 10 * time.Minute}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Parse([]byte(devs(tt.devices)))
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if got := c.Rules(); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Rules() =\n%+v\nwant\n%+v", got, tt.want)
			}
		})
	}
}

// TestDeviceErrors has one fault per file; each must give exactly one
// line, with its path.
func TestDeviceErrors(t *testing.T) {
	heater := func(s string) string { return devs("  sim.heater:\n" + s) }
	lock := func(s string) string { return heater("    rules:\n      interlock:\n        - " + s + "\n") }
	const (
		ids      = "sim.led, sim.button, sim.door, sim.heater, sim.temperature, sim.fan, sim.meter"
		il       = "devices.sim.heater.rules.interlock[0]"
		readOnly = `sim.door is read-only (access "r"): nothing writes it, so %s makes no sense`
	)
	ro := func(field string) string { return strings.Replace(readOnly, "%s", field, 1) }
	tests := []struct {
		name, yaml, want string
	}{
		// The devices section and its entries.
		{"unknown device", devs("  sim.dor: {}\n"), "devices.sim.dor: no such device on the sim board (want one of " + ids + ")"},
		{"devices not a mapping", "board: sim\ndevices: [sim.led]\n", "devices: want a mapping, got a list"},
		{"device set twice", devs("  sim.led: {}\n  sim.led: {}\n"), "devices.sim.led: set twice (first on line 3)"},
		{"unknown device field", heater("    colour: red\n"), "devices.sim.heater.colour: unknown field"},
		{"hardware field on the sim board", heater("    pin: 17\n"), "devices.sim.heater.pin: the sim board's devices are built in: pin is for devices of a real board"},
		{"kind on the sim board", heater("    kind: gpio.output\n"), "devices.sim.heater.kind: the sim board's devices are built in: kind is for devices of a real board"},
		{"unknown rule", heater("    rules: {maxOn: 10m}\n"), "devices.sim.heater.rules.maxOn: unknown field"},
		{"entry not a mapping", devs("  sim.heater: on\n"), `devices.sim.heater: want a mapping of settings, got "on"`},
		// Interlock conditions.
		{"interlock on unknown device", lock("{device: sim.dor, op: eq, value: false}"), il + `.device: no such device "sim.dor"`},
		{"interlock on itself", lock("{device: sim.heater, op: eq, value: false}"), il + ".device: sim.heater cannot be interlocked on itself"},
		{"unknown op", lock("{device: sim.door, op: equals, value: false}"), il + `.op: unknown op "equals" (want eq, ne, lt, le, gt or ge)`},
		{"order on a boolean", lock("{device: sim.door, op: lt, value: false}"), il + ".op: op lt needs a number, but sim.door is boolean"},
		{"order on an object", lock("{device: sim.temperature, op: ge, value: 50}"), il + ".op: op ge needs a number, but sim.temperature is object"},
		{"value of the wrong type", lock("{device: sim.door, op: eq, value: 1}"), il + ".value: value 1 does not fit sim.door: want a boolean, got a number"},
		{"string for a boolean", lock("{device: sim.door, op: ne, value: 'true'}"), il + ".value: value true does not fit sim.door: want a boolean, got a string"},
		{"unknown property", lock("{device: sim.temperature, op: eq, value: {temp: 20}}"), il + ".value: value map[temp:20] does not fit sim.temperature: temp: no such property"},
		{"no device", lock("{op: eq, value: false}"), il + ".device: required"},
		{"no op", lock("{device: sim.door, value: false}"), il + ".op: required (eq, ne, lt, le, gt or ge)"},
		{"no value", lock("{device: sim.door, op: eq}"), il + ".value: required"},
		{"null value", lock("{device: sim.door, op: eq, value: null}"), il + ".value: want a value, got nothing"},
		{"value not finite", lock("{device: sim.fan, op: lt, value: .nan}"), il + ".value: want a finite number, got .nan"},
		{"condition not a mapping", lock("sim.door"), il + `: want a mapping of settings, got "sim.door"`},
		{"interlock null", heater("    rules:\n      interlock:\n"), "devices.sim.heater.rules.interlock: want a list ([] for none), got nothing"},
		{"interlock not a list", heater("    rules:\n      interlock: {device: sim.door}\n"), "devices.sim.heater.rules.interlock: want a list ([] for none), got a mapping"},
		{"interlock without safe", devs("  sim.fan:\n    safe: none\n    noSafeReason: cools the bench\n    rules:\n      interlock: [{device: sim.door, op: eq, value: false}]\n"),
			"devices.sim.fan.rules.interlock: sim.fan has safe: none, so no safe value to drive it to when a condition stops holding (give it one)"},
		{"interlock on a line device", devs("  sim.meter:\n    safe: 'OFF'\n    rules:\n      interlock: [{device: sim.door, op: eq, value: false}]\n"),
			"devices.sim.meter.rules.interlock: sim.meter's value is the last line it received, not what was written: it is never at its safe value"},
		// Bounds.
		{"minimum above maximum", devs("  sim.fan:\n    rules: {minimum: 60, maximum: 40}\n"), "devices.sim.fan.rules.minimum: minimum 60 is above maximum 40"},
		{"minimum on a boolean", heater("    rules: {minimum: 0}\n"), "devices.sim.heater.rules.minimum: sim.heater's value is a boolean: minimum applies to numbers only"},
		{"maximum on a string", devs("  sim.meter:\n    rules: {maximum: 3}\n"), "devices.sim.meter.rules.maximum: sim.meter's value is a string: maximum applies to numbers only"},
		{"maximum above the schema", devs("  sim.fan:\n    rules: {maximum: 150}\n"), "devices.sim.fan.rules.maximum: 150 is outside sim.fan's range (0 to 100)"},
		{"minimum below the schema", devs("  sim.fan:\n    rules: {minimum: -0.5}\n"), "devices.sim.fan.rules.minimum: -0.5 is outside sim.fan's range (0 to 100)"},
		{"minimum not finite", devs("  sim.fan:\n    rules: {minimum: -.inf}\n"), "devices.sim.fan.rules.minimum: want a finite number, got -Inf"},
		{"maximum not a number", devs("  sim.fan:\n    rules: {maximum: high}\n"), `devices.sim.fan.rules.maximum: want a number, got "high"`},
		// rateLimit and maxOnMs.
		{"zero rate", heater("    rules: {rateLimit: 0}\n"), "devices.sim.heater.rules.rateLimit: must be a positive number of writes per second, got 0"},
		{"negative rate", heater("    rules: {rateLimit: -2}\n"), "devices.sim.heater.rules.rateLimit: must be a positive number of writes per second, got -2"},
		{"fractional rate", heater("    rules: {rateLimit: 2.5}\n"), "devices.sim.heater.rules.rateLimit: want an integer, got 2.5"},
		{"zero maxOnMs", heater("    rules: {maxOnMs: 0}\n"), "devices.sim.heater.rules.maxOnMs: must be a positive number of milliseconds, got 0"},
		{"maxOnMs as a duration", heater("    rules: {maxOnMs: 10m}\n"), `devices.sim.heater.rules.maxOnMs: want an integer, got "10m"`},
		{"maxOnMs too long", heater("    rules: {maxOnMs: 9223372036854775}\n"), "devices.sim.heater.rules.maxOnMs: 9223372036854775 ms is too long (at most 9223372036854)"},
		{"maxOnMs without safe", devs("  sim.led:\n    safe: none\n    noSafeReason: a status light\n    rules: {maxOnMs: 1000}\n"),
			"devices.sim.led.rules.maxOnMs: sim.led has safe: none, so no safe value to go back to (give it one)"},
		{"maxOnMs on a line device", devs("  sim.meter:\n    safe: 'OFF'\n    rules: {maxOnMs: 1000}\n"),
			"devices.sim.meter.rules.maxOnMs: sim.meter's value is the last line it received, not what was written: it is never at its safe value"},
		// Overrides.
		{"unknown risk", heater("    risk: medium\n"), `devices.sim.heater.risk: want low or high, got "medium"`},
		{"empty risk", heater("    risk:\n"), `devices.sim.heater.risk: want low or high, got ""`},
		{"safe of the wrong type", heater("    safe: 'off'\n"), `devices.sim.heater.safe: "off" does not fit sim.heater: want a boolean, got a string`},
		{"safe out of range", devs("  sim.fan:\n    safe: 101\n"), "devices.sim.fan.safe: 101 does not fit sim.fan: 101 is above the maximum 100"},
		{"safe too long", devs("  sim.meter:\n    safe: '" + strings.Repeat("x", 4097) + "'\n"), "devices.sim.meter.safe: \"" + strings.Repeat("x", 4097) + "\" does not fit sim.meter: string of 4097 characters is longer than 4096"},
		{"safe null", heater("    safe:\n"), "devices.sim.heater.safe: want a value, got nothing"},
		{"zero confirmTtl", heater("    confirmTtl: 0s\n"), "devices.sim.heater.confirmTtl: must be a positive duration, got 0s"},
		{"negative confirmTtl", heater("    confirmTtl: -5s\n"), "devices.sim.heater.confirmTtl: must be a positive duration, got -5s"},
		{"confirmTtl in seconds", heater("    confirmTtl: 120\n"), `devices.sim.heater.confirmTtl: want a duration such as "10s" or "1m30s", got 120`},
		// A read-only device.
		{"safe on an input", devs("  sim.door:\n    safe: false\n"), "devices.sim.door.safe: " + ro("safe")},
		{"confirmTtl on an input", devs("  sim.door:\n    confirmTtl: 1m\n"), "devices.sim.door.confirmTtl: " + ro("confirmTtl")},
		{"minimum on an input", devs("  sim.door:\n    rules: {minimum: 0}\n"), "devices.sim.door.rules.minimum: " + ro("minimum")},
		{"maximum on an input", devs("  sim.door:\n    rules: {maximum: 0}\n"), "devices.sim.door.rules.maximum: " + ro("maximum")},
		{"rateLimit on an input", devs("  sim.door:\n    rules: {rateLimit: 1}\n"), "devices.sim.door.rules.rateLimit: " + ro("rateLimit")},
		{"maxOnMs on an input", devs("  sim.door:\n    rules: {maxOnMs: 1}\n"), "devices.sim.door.rules.maxOnMs: " + ro("maxOnMs")},
		{"interlock on an input", devs("  sim.door:\n    rules: {interlock: []}\n"), "devices.sim.door.rules.interlock: " + ro("interlock")},
		{"rule on a sensor", devs("  sim.temperature:\n    rules: {rateLimit: 1}\n"),
			`devices.sim.temperature.rules.rateLimit: sim.temperature is read-only (access "r"): nothing writes it, so rateLimit makes no sense`},
		// The stop button.
		{"unknown stop button", "board: sim\nstopButton: sim.estop\n", `stopButton: no such device "sim.estop"`},
		{"output as stop button", "board: sim\nstopButton: sim.led\n", "stopButton: sim.led is a gpio.output; a stop button must be a gpio.input"},
		{"sensor as stop button", "board: sim\nstopButton: sim.temperature\n", "stopButton: sim.temperature is a sensor; a stop button must be a gpio.input"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkOneFault(t, tt.yaml, tt.want)
		})
	}
}

// TestRuleFaultsOneLineEach: every fault of a file, one line each, in the
// order of the file, whichever device or check found it.
func TestRuleFaultsOneLineEach(t *testing.T) {
	const file = `board: sim
devices:
  sim.heater:
    risk: medium
    rules:
      rateLimit: 0
      interlock:
        - {device: sim.dor, op: eq, value: false}
        - {device: sim.door, op: lt, value: 1}
        - {device: sim.door}
  sim.fan:
    safe: 150
    rules: {minimum: 60, maximum: 40}
  sim.door:
    rules: {maxOnMs: 1000}
  sim.lamp: {}
stopButton: sim.led
`
	_, err := Parse([]byte(file))
	if err == nil {
		t.Fatal("Parse accepted a file with faults")
	}
	want := []string{
		`devices.sim.heater.risk: want low or high, got "medium"`,
		"devices.sim.heater.rules.rateLimit: must be a positive number of writes per second, got 0",
		`devices.sim.heater.rules.interlock[0].device: no such device "sim.dor"`,
		"devices.sim.heater.rules.interlock[1].op: op lt needs a number, but sim.door is boolean",
		"devices.sim.heater.rules.interlock[2].op: required (eq, ne, lt, le, gt or ge)",
		"devices.sim.heater.rules.interlock[2].value: required",
		"devices.sim.fan.safe: 150 does not fit sim.fan: 150 is above the maximum 100",
		"devices.sim.fan.rules.minimum: minimum 60 is above maximum 40",
		`devices.sim.door.rules.maxOnMs: sim.door is read-only (access "r"): nothing writes it, so maxOnMs makes no sense`,
		"devices.sim.lamp: no such device on the sim board (want one of sim.led, sim.button, sim.door, sim.heater, sim.temperature, sim.fan, sim.meter)",
		"stopButton: sim.led is a gpio.output; a stop button must be a gpio.input",
	}
	if got := strings.Split(err.Error(), "\n"); !reflect.DeepEqual(got, want) {
		t.Errorf("lines\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestDeviceFaultsAfterFormFaults: a condition whose form is wrong is not
// judged again on what is left of it; its neighbours still are.
func TestDeviceFaultsAfterFormFaults(t *testing.T) {
	const file = `board: sim
devices:
  sim.heater:
    rules:
      interlock:
        - {device: [sim.door], op: eq, value: false}
        - 7
        - {device: sim.heater, op: eq, value: false}
`
	_, err := Parse([]byte(file))
	want := []string{
		"devices.sim.heater.rules.interlock[0].device: want a string, got a list",
		"devices.sim.heater.rules.interlock[1]: want a mapping of settings, got 7",
		"devices.sim.heater.rules.interlock[2].device: sim.heater cannot be interlocked on itself",
	}
	if err == nil {
		t.Fatal("Parse accepted the file")
	}
	if got := strings.Split(err.Error(), "\n"); !reflect.DeepEqual(got, want) {
		t.Errorf("lines\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestDevicesNotCheckedWithoutBoard: the devices of a board that is not
// known cannot be judged; only the board is reported.
func TestDevicesNotCheckedWithoutBoard(t *testing.T) {
	_, err := Parse([]byte("board: rpi9\ndevices:\n  bench.heater: {risk: high}\nstopButton: bench.estop\n"))
	if err == nil || err.Error() != `board: unknown board "rpi9" (want sim, auto, rpi3b, rpi3bplus, rpi4b, rpi5, rpizero2w, generic)` {
		t.Errorf("Parse = %v, want only the board's fault", err)
	}
}

// TestValidateDevicesAfterChange: Validate runs the device checks too.
func TestValidateDevicesAfterChange(t *testing.T) {
	c := Default()
	c.StopButtonID = sim.Heater
	zero := 0
	c.Devices = map[string]DeviceConfig{sim.Fan: {Rules: RulesConfig{RateLimit: &zero}}}
	err := c.Validate()
	want := "devices.sim.fan.rules.rateLimit: must be a positive number of writes per second, got 0\n" +
		"stopButton: sim.heater is a gpio.output; a stop button must be a gpio.input"
	if err == nil || err.Error() != want {
		t.Errorf("Validate =\n%v\nwant\n%s", err, want)
	}
}

// TestDefaultDevices: the default configuration adds nothing to the sim
// board's own devices and rules, and has no stop button.
func TestDefaultDevices(t *testing.T) {
	c := Default()
	if got := c.Rules(); !reflect.DeepEqual(got, sim.DefaultRules()) {
		t.Errorf("Default().Rules() = %+v, want the sim board's own %+v", got, sim.DefaultRules())
	}
	if got := c.Overrides(); len(got) != 0 {
		t.Errorf("Default().Overrides() = %+v, want none", got)
	}
	if got := c.Descriptors(); !reflect.DeepEqual(got, sim.Descriptors(c.Sim)) {
		t.Errorf("Default().Descriptors() = %+v, want the sim board's own", got)
	}
	if c.StopButton() != "" {
		t.Errorf("Default().StopButton() = %q, want none", c.StopButton())
	}
}

// TestDefaultYAMLExample: the commented example at the end of
// default.yaml, from "# devices:" on, is a valid configuration when
// uncommented, with rules beyond the board's.
func TestDefaultYAMLExample(t *testing.T) {
	text := string(DefaultYAML())
	i := strings.Index(text, "\n# devices:\n")
	if i < 0 {
		t.Fatal("default.yaml has no commented example")
	}
	lines := strings.Split(strings.TrimSuffix(text[:i+1], "\n"), "\n")
	for _, line := range strings.Split(strings.TrimSpace(text[i+1:]), "\n") {
		if !strings.HasPrefix(line, "# ") {
			t.Fatalf("example line %q is not commented out", line)
		}
		lines = append(lines, line[2:])
	}
	c, err := Parse([]byte(strings.Join(lines, "\n")))
	if err != nil {
		t.Fatalf("the uncommented example: %v", err)
	}
	if _, ok := c.Rules()[sim.Fan]; !ok || c.StopButton() == "" {
		t.Errorf("the uncommented example changes nothing: rules %+v, stop button %q", c.Rules(), c.StopButton())
	}
}

// TestOverridesReachSimDevices: what Descriptors says is what the started
// sim devices serve, and an output starts at its configured safe value.
func TestOverridesReachSimDevices(t *testing.T) {
	c, err := Parse([]byte(devs(`  sim.led: {risk: high, safe: true}
  sim.fan: {safe: 12.5}
  sim.heater: {risk: low}
`)))
	if err != nil {
		t.Fatal(err)
	}
	clk := clocktest.NewFake(time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC))
	reg := device.NewRegistry(clk.Now)
	b := sim.New(c.Sim, clk, c.Overrides())
	ctx, cancel := context.WithCancel(context.Background())
	if err := b.Start(ctx, reg); err != nil {
		t.Fatal(err)
	}
	defer b.Wait()
	defer cancel()
	for _, want := range c.Descriptors() {
		if got, ok := reg.Describe(want.ID); !ok || !reflect.DeepEqual(got, want) {
			t.Errorf("%s serves\n%+v\nwant\n%+v", want.ID, got, want)
		}
	}
	checks := []struct {
		id      string
		risk    device.Risk
		initial any
	}{{sim.LED, device.RiskHigh, true}, {sim.Fan, device.RiskLow, 12.5}, {sim.Heater, device.RiskLow, false}}
	for _, ch := range checks {
		d, _ := reg.Describe(ch.id)
		snap, ok := reg.Value(ch.id)
		if d.Risk != ch.risk || !ok || !reflect.DeepEqual(snap.Value, ch.initial) || !reflect.DeepEqual(d.Safe, ch.initial) {
			t.Errorf("%s: risk %q safe %v value %v, want %q and %v", ch.id, d.Risk, d.Safe, snap.Value, ch.risk, ch.initial)
		}
	}
}
