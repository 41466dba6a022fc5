package board

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/internal/hw/counter"
	"github.com/openhal/gateway/internal/hw/gpioevent"
)

const flowYAML = rpi4 + `  garden.flow:
    kind: counter
    label: Irrigation flow
    pin: GPIO17
    pull: up
    edge: falling
    debounce: 2ms
    perPulse: 0.00222
    unit: l
    interval: 5s
    window: 10s
  roof.wind:
    kind: counter
    pin: pinctrl-bcm2711:27
`

// A counter is a low-risk, read-only sensor on its pin, {count, rate} in
// the file's unit (and per second), or in pulses (SenML count and 1/s).
func TestCounterDescriptor(t *testing.T) {
	c, err := Parse([]byte(flowYAML))
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]device.Descriptor{}
	for _, d := range c.Descriptors() {
		byID[d.ID] = d
	}
	zero := 0.0
	for _, tt := range []struct {
		id, pin, count, rate string
	}{
		{"garden.flow", "GPIO17", "l", "l/s"},
		{"roof.wind", "pinctrl-bcm2711:27", "count", "1/s"},
	} {
		d, ok := byID[tt.id]
		if !ok {
			t.Fatalf("no descriptor for %s", tt.id)
		}
		want := device.Schema{Type: device.TypeObject, Properties: map[string]device.Schema{
			"count": {Type: device.TypeNumber, Unit: tt.count, Minimum: &zero},
			"rate":  {Type: device.TypeNumber, Unit: tt.rate, Minimum: &zero},
		}}
		if !reflect.DeepEqual(d.Schema, want) {
			t.Errorf("%s schema %+v, want %+v", tt.id, d.Schema, want)
		}
		if d.Kind != device.KindSensor || d.Access != device.AccessRead || d.Risk != device.RiskLow ||
			d.Pin != tt.pin || d.Chip != CounterChip || d.Safe != nil || d.Source != "board" {
			t.Errorf("%s = %+v", tt.id, d)
		}
	}
	if l := byID["garden.flow"].Label; l != "Irrigation flow" {
		t.Errorf("label %q", l)
	}
}

// How the line is requested and the device is set up, from the file and
// from the defaults.
func TestCounterSettings(t *testing.T) {
	c, err := Parse([]byte(flowYAML))
	if err != nil {
		t.Fatal(err)
	}
	flow, wind := c.Devices["garden.flow"], c.Devices["roof.wind"]
	if got, want := flow.CounterLine("garden.flow"), (gpioevent.Config{Edge: gpioevent.Falling, Bias: gpioevent.PullUp,
		Debounce: 2 * time.Millisecond, Consumer: "garden.flow", Buffer: counter.LineBuffer}); got != want {
		t.Errorf("garden.flow line %+v, want %+v", got, want)
	}
	if got, want := wind.CounterLine("roof.wind"), (gpioevent.Config{Edge: gpioevent.Rising, Bias: gpioevent.BiasDisabled,
		Consumer: "roof.wind", Buffer: counter.LineBuffer}); got != want {
		t.Errorf("roof.wind line %+v, want %+v", got, want)
	}
	long := strings.Repeat("x", 40)
	if got := wind.CounterLine(long).Consumer; got != long[:31] {
		t.Errorf("consumer %q, want the id cut to 31 bytes", got)
	}
	if got, want := flow.CounterOpts(), (counter.Opts{PerPulse: 0.00222, Interval: 5 * time.Second, Window: 10 * time.Second}); got != want {
		t.Errorf("garden.flow opts %+v, want %+v", got, want)
	}
	if got := wind.CounterOpts(); got != (counter.Opts{}) {
		t.Errorf("roof.wind opts %+v, want the device's defaults", got)
	}
}

func TestCounterErrors(t *testing.T) {
	ctr := func(fields string) string {
		return rpi4 + "  garden.flow: {kind: counter, pin: GPIO17, " + fields + "}\n"
	}
	for _, tt := range []struct {
		name, yaml, want string
	}{
		{"no pin", rpi4 + "  garden.flow: {kind: counter}\n",
			"devices.garden.flow.pin: required for a counter device (a line name GPIO17, a header pin pin11, or CHIP:OFFSET gpiochip0:17)"},
		{"pin of another device", rpi4 + relay + "  garden.flow: {kind: counter, pin: pin11}\n",
			"devices.garden.flow.pin: pin11 (GPIO17) is also used by devices.bench.relay"},
		{"pin of a used I2C bus", rpi4 + th + "  garden.flow: {kind: counter, pin: GPIO3}\n",
			"devices.garden.flow.pin: GPIO3 is SCL of I2C bus 1, used by devices.bench.th"},
		{"an expander's pin", rpi4 + "  garden.flow: {kind: counter, pin: 'ex1:GPA0'}\nchips:\n  ex1: {type: mcp23017, bus: 1, address: 0x20, interrupt: GPIO17}\n",
			"devices.garden.flow.pin: ex1:GPA0 is a pin of chips.ex1, an I/O expander: only gpio.input and gpio.output devices take one (a counter device needs a line of the board: GPIO17, pin11)"},
		{"an expander's interrupt line", rpi4 + "  garden.flow: {kind: counter, pin: GPIO17}\nchips:\n  ex1: {type: mcp23017, bus: 1, address: 0x20, interrupt: GPIO17}\n",
			"devices.garden.flow.pin: GPIO17 is also used by chips.ex1"},
		{"unknown pull", ctr("pull: high"), `devices.garden.flow.pull: unknown pull "high" (want up, down or none)`},
		{"unknown edge", ctr("edge: any"), `devices.garden.flow.edge: unknown edge "any" (want rising, falling or both)`},
		{"negative debounce", ctr("debounce: -1ms"), "devices.garden.flow.debounce: want 0 to 1h11m34.967295s (the kernel counts it in 32-bit microseconds), got -1ms"},
		{"debounce too long", ctr("debounce: 2h"), "devices.garden.flow.debounce: want 0 to 1h11m34.967295s (the kernel counts it in 32-bit microseconds), got 2h0m0s"},
		{"perPulse zero", ctr("perPulse: 0, unit: l"), "devices.garden.flow.perPulse: must be a positive amount of l per pulse, got 0"},
		{"perPulse negative", ctr("perPulse: -2, unit: l"), "devices.garden.flow.perPulse: must be a positive amount of l per pulse, got -2"},
		{"perPulse infinite", ctr("perPulse: .inf, unit: l"), "devices.garden.flow.perPulse: want a finite number, got +Inf"},
		{"perPulse not a number", ctr("perPulse: lots, unit: l"), `devices.garden.flow.perPulse: want a number, got "lots"`},
		{"perPulse without unit", ctr("perPulse: 0.5"), "devices.garden.flow.unit: required with perPulse: the unit one pulse's 0.5 is in (l, m3, m...)"},
		{"unit without perPulse", ctr("unit: l"), "devices.garden.flow.perPulse: required with unit: how many l one pulse is (without both, the count is in pulses)"},
		{"unit with a slash", ctr("perPulse: 1, unit: l/min"), `devices.garden.flow.unit: "l/min" is not a unit symbol: want letters, digits, % . _ or -, at most 16, without / (the rate is in unit/s)`},
		{"unit with a space", ctr("perPulse: 1, unit: 'cu m'"), `devices.garden.flow.unit: "cu m" is not a unit symbol: want letters, digits, % . _ or -, at most 16, without / (the rate is in unit/s)`},
		{"zero interval", ctr("interval: 0s"), "devices.garden.flow.interval: must be a positive duration, got 0s"},
		{"negative window", ctr("window: -1s"), "devices.garden.flow.window: must be a positive duration, got -1s"},
		{"window in seconds", ctr("window: 10"), `devices.garden.flow.window: want a duration such as "10s" or "1m30s", got 10`},
		{"a field of another kind", ctr("invert: true"), "devices.garden.flow.invert: a counter device has no invert (invert is for gpio.output or gpio.input devices)"},
		{"a counter's field on an input", rpi4 + "  bench.stop: {kind: gpio.input, pin: GPIO27, perPulse: 1}\n",
			"devices.bench.stop.perPulse: a gpio.input device has no perPulse (perPulse is for counter devices)"},
		{"safe on a counter", ctr("safe: 0"),
			`devices.garden.flow.safe: garden.flow is read-only (access "r"): nothing writes it, so safe makes no sense`},
		{"counters on the sim board", "board: sim\ndevices:\n  sim.led: {perPulse: 1}\n",
			"devices.sim.led.perPulse: the sim board's devices are built in: perPulse is for devices of a real board"},
	} {
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

// The counter example of docs/configuration.md is a valid file, whose
// units come out as documented.
func TestCounterDocExample(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "configuration.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(doc), "### `counter`")
	_, block, ok2 := strings.Cut(section, "```yaml\n")
	block, _, ok3 := strings.Cut(block, "```")
	if !ok || !ok2 || !ok3 {
		t.Fatal("no yaml example in the counter section")
	}
	c, err := Parse([]byte("board: rpi4b\n" + block))
	if err != nil {
		t.Fatalf("the example does not parse: %v", err)
	}
	units := map[string]string{}
	for _, d := range c.Descriptors() {
		units[d.ID] = d.Schema.Properties["count"].Unit + " " + d.Schema.Properties["rate"].Unit
	}
	if want := map[string]string{"garden.flow": "l l/s", "roof.wind": "m m/s"}; !reflect.DeepEqual(units, want) {
		t.Errorf("units %v, want %v", units, want)
	}
}
