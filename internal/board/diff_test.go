package board

import (
	"reflect"
	"strings"
	"testing"
)

// reloadBase is a Pi with devices of every grouping: alone on a GPIO
// line, two units on one Modbus line, two pins of one expander, two
// channels of one PCA9685.
const reloadBase = `board: rpi4b
chips:
  ex1: {type: mcp23017, bus: 1, address: 0x20}
  servos: {type: pca9685, bus: 1, address: 0x40, frequency: 50}
modbus:
  plc: {tcp: 127.0.0.1:1502}
  vfd: {tcp: 127.0.0.1:1503}
devices:
  lamp: {kind: gpio.output, pin: GPIO17, risk: low}
  door: {kind: gpio.input, pin: GPIO27}
  pump: {kind: modbus, bus: plc, slave: 1, table: coil, address: 0, risk: low}
  level: {kind: modbus, bus: plc, slave: 1, table: input, address: 0}
  speed: {kind: modbus, bus: vfd, slave: 1, table: holding, address: 1, risk: low, safe: 0}
  ex.a: {kind: gpio.output, pin: ex1:GPA0, risk: low}
  ex.b: {kind: gpio.output, pin: ex1:GPA1, risk: low}
  arm.base: {kind: servo, pwm: {chip: servos, channel: 0}, risk: low, safe: 90}
  arm.grip: {kind: servo, pwm: {chip: servos, channel: 1}, risk: low, safe: 90}
`

func TestCompare(t *testing.T) {
	for _, tc := range []struct {
		name      string
		old, new  string // new's lines replace those of old that begin alike
		want      Diff
		wantEmpty bool
	}{
		{name: "same file", old: reloadBase, new: reloadBase, wantEmpty: true},
		{name: "a comment and reordered keys", old: reloadBase,
			new:       reloadBase + "# a comment\n",
			wantEmpty: true},
		{name: "device added alone", old: reloadBase,
			new:  reloadBase + "  fan: {kind: gpio.output, pin: GPIO22, risk: low}\n",
			want: Diff{Added: []string{"fan"}}},
		{name: "device removed alone", old: reloadBase + "  fan: {kind: gpio.output, pin: GPIO22, risk: low}\n",
			new:  reloadBase,
			want: Diff{Removed: []string{"fan"}}},
		{name: "label changed", old: reloadBase,
			new:  replaceLine(reloadBase, "  lamp:", "  lamp: {kind: gpio.output, pin: GPIO17, risk: low, label: Lamp}"),
			want: Diff{Changed: []string{"lamp"}}},
		{name: "pin moves from one device to another", old: reloadBase,
			new: replaceLine(replaceLine(reloadBase, "  lamp:", "  lamp: {kind: gpio.output, pin: GPIO22, risk: low}"),
				"  door:", "  door: {kind: gpio.input, pin: GPIO17}"),
			want: Diff{Changed: []string{"door", "lamp"}}},
		{name: "rules only: the driver stays", old: reloadBase,
			new:  replaceLine(reloadBase, "  lamp:", "  lamp: {kind: gpio.output, pin: GPIO17, risk: low, confirmTtl: 30s, rules: {rateLimit: 2}}"),
			want: Diff{Rules: []string{"lamp"}}},
		{name: "a unit of a Modbus line changes: the line's group opens again", old: reloadBase,
			new:  replaceLine(reloadBase, "  level:", "  level: {kind: modbus, bus: plc, slave: 1, table: input, address: 1}"),
			want: Diff{Changed: []string{"level", "pump"}}},
		{name: "a unit added on a Modbus line", old: reloadBase,
			new:  reloadBase + "  flow: {kind: modbus, bus: vfd, slave: 1, table: input, address: 4}\n",
			want: Diff{Added: []string{"flow"}, Changed: []string{"speed"}}},
		{name: "the line's settings change", old: reloadBase,
			new:  replaceLine(reloadBase, "  vfd:", "  vfd: {tcp: 127.0.0.1:1504}"),
			want: Diff{Changed: []string{"speed"}}},
		{name: "an expander pin removed", old: reloadBase,
			new:  replaceLine(reloadBase, "  ex.b:", ""),
			want: Diff{Removed: []string{"ex.b"}, Changed: []string{"ex.a"}}},
		{name: "a PCA9685 chip's frequency", old: reloadBase,
			new:  replaceLine(reloadBase, "  servos:", "  servos: {type: pca9685, bus: 1, address: 0x40, frequency: 60}"),
			want: Diff{Changed: []string{"arm.base", "arm.grip"}}},
		{name: "listeners need a restart", old: reloadBase,
			new:  reloadBase + "hub:\n  listen: {http: 127.0.0.1:9999}\n",
			want: Diff{Restart: []string{"hub.listen"}}},
		{name: "another board: devices wait for the restart", old: reloadBase,
			new:  replaceLine(reloadBase, "board:", "board: rpi5"),
			want: Diff{Restart: []string{"board"}}},
		{name: "adapters enabled, disabled, their settings", old: "board: sim\nadapters:\n  enabled: [a, b]\n  settings: {b: {x: 1}}\n",
			new:  "board: sim\nadapters:\n  enabled: [b, c]\n  settings: {b: {x: 2}}\n",
			want: Diff{AdaptersStarted: []string{"c"}, AdaptersStopped: []string{"a"}, AdaptersChanged: []string{"b"}}},
		{name: "sim: a rule is applied, a risk waits", old: "board: sim\n",
			new:  "board: sim\ndevices:\n  sim.fan: {rules: {maximum: 80}}\n  sim.led: {risk: high}\n",
			want: Diff{Rules: []string{"sim.fan"}, Restart: []string{"devices.sim.led"}}},
		{name: "sim: removing the heater's own interlock", old: "board: sim\n",
			new:  "board: sim\ndevices:\n  sim.heater: {rules: {interlock: []}}\n",
			want: Diff{Rules: []string{"sim.heater"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Compare(parseValid(t, tc.old), parseValid(t, tc.new))
			if got.Empty() != tc.wantEmpty {
				t.Errorf("Empty() = %v, want %v (%+v)", got.Empty(), tc.wantEmpty, got)
			}
			if !tc.wantEmpty && !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Compare:\n got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestGroupsAndSubset(t *testing.T) {
	c := parseValid(t, reloadBase)
	g := c.Groups()
	want := map[string][]string{
		"device:lamp": {"lamp"}, "device:door": {"door"},
		"modbus:plc": {"level", "pump"}, "modbus:vfd": {"speed"},
		"chip:ex1": {"ex.a", "ex.b"}, "chip:servos": {"arm.base", "arm.grip"},
	}
	if !reflect.DeepEqual(g, want) {
		t.Errorf("Groups:\n got %v\nwant %v", g, want)
	}
	sub := c.Subset(g["modbus:plc"])
	if len(sub.Devices) != 2 || len(c.Devices) != 9 || len(sub.Descriptors()) != 2 {
		t.Errorf("Subset: %d devices (%d descriptors), the whole still %d", len(sub.Devices), len(sub.Descriptors()), len(c.Devices))
	}
}

func parseValid(t *testing.T, text string) *Config {
	t.Helper()
	c, err := Parse([]byte(text))
	if err == nil {
		err = c.Validate()
	}
	if err != nil {
		t.Fatalf("%v\n%s", err, text)
	}
	return c
}

// replaceLine replaces the line of text that begins with prefix by line
// ("" removes it).
func replaceLine(text, prefix, line string) string {
	var out []string
	for _, l := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		switch {
		case !strings.HasPrefix(l, prefix):
			out = append(out, l)
		case line != "":
			out = append(out, line)
		}
	}
	return strings.Join(out, "\n") + "\n"
}
