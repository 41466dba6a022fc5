package board

import (
	"reflect"
	"slices"
	"testing"

	"github.com/openhal/gateway/device"
)

// TestGreenhouseExample: issue 30's greenhouse parses and validates, and
// its devices are what docs/examples/greenhouse.yaml says: a 1-Wire
// thermometer, a DHT22 through IIO, a soil probe on an MCP3008 channel
// scaled to %, a pump with its time limit, a flow counter in litres.
func TestGreenhouseExample(t *testing.T) {
	c := loadExample(t, "greenhouse.yaml")
	byID := map[string]device.Descriptor{}
	var ids []string
	for _, d := range c.Descriptors() {
		byID[d.ID] = d
		ids = append(ids, d.ID)
	}
	want := []string{"greenhouse.air", "greenhouse.climate", "greenhouse.flow", "greenhouse.pump", "greenhouse.soil", "greenhouse.stop"}
	if !reflect.DeepEqual(ids, want) {
		t.Fatalf("devices %q, want %q", ids, want)
	}
	checks := []struct {
		id, kind, bus, chip string
		units               map[string]string
	}{
		{"greenhouse.air", device.KindSensor, "w1", "ds18b20", map[string]string{"temperature": "Cel"}},
		{"greenhouse.climate", device.KindSensor, "iio", "", map[string]string{"temperature": "Cel", "humidity": "%RH"}},
		{"greenhouse.soil", device.KindSensor, "/dev/spidev0.0", "mcp3008", map[string]string{"voltage": "V", "moisture": "%"}},
	}
	for _, ck := range checks {
		d := byID[ck.id]
		if d.Kind != ck.kind || d.Bus != ck.bus || (ck.chip != "" && d.Chip != ck.chip) || d.Access != device.AccessRead {
			t.Errorf("%s = kind %q bus %q chip %q access %q", ck.id, d.Kind, d.Bus, d.Chip, d.Access)
		}
		for q, unit := range ck.units {
			if got := d.Schema.Properties[q].Unit; got != unit {
				t.Errorf("%s: %s in %q, want %q", ck.id, q, got, unit)
			}
		}
	}
	flow := byID["greenhouse.flow"]
	if flow.Kind != device.KindSensor || flow.Pin != "GPIO27" || flow.Schema.Properties["count"].Unit != "l" {
		t.Errorf("greenhouse.flow = %+v", flow)
	}
	pump := c.Rules()["greenhouse.pump"]
	if byID["greenhouse.pump"].Safe != false || pump.MaxOn.Minutes() != 5 {
		t.Errorf("greenhouse.pump safe %v rules %+v", byID["greenhouse.pump"].Safe, pump)
	}
	if c.StopButton() != "greenhouse.stop" {
		t.Errorf("stop button %q", c.StopButton())
	}
}

// TestSmallArmExample: issue 30's arm parses and validates: three servos
// on a PCA9685, each held by the guard's interlock with a safe angle to go
// to, and the guard and the limit switch on the expander's pins.
func TestSmallArmExample(t *testing.T) {
	c := loadExample(t, "small-arm.yaml")
	byID := map[string]device.Descriptor{}
	for _, d := range c.Descriptors() {
		byID[d.ID] = d
	}
	guard := device.Condition{Device: "arm.guard", Op: "eq", Value: false}
	for i, id := range []string{"arm.base", "arm.shoulder", "arm.grip"} {
		d := byID[id]
		if d.Kind != device.KindServo || d.Chip != "pca9685" || d.Channel == nil || *d.Channel != i || d.Schema.Unit != "deg" {
			t.Errorf("%s = %+v", id, d)
		}
		if d.Safe == nil {
			t.Errorf("%s has no safe angle: the guard's interlock has nothing to drive it to", id)
		}
		if r := c.Rules()[id]; !slices.Contains(r.Interlock, guard) {
			t.Errorf("%s: interlock %+v lacks %+v", id, r.Interlock, guard)
		}
	}
	for id, pin := range map[string]string{"arm.limit": "ex1:GPA0", "arm.guard": "ex1:GPA1"} {
		if d := byID[id]; d.Kind != device.KindGPIOInput || d.Pin != pin || d.Chip != "mcp23017" {
			t.Errorf("%s = %+v", id, d)
		}
	}
	if c.StopButton() != "arm.stop" {
		t.Errorf("stop button %q", c.StopButton())
	}
}

// TestModbusExamples: issue 31's two benches parse and validate: the
// energy meter's five float32 input registers in their units, read only;
// the VFD's run coil and speed setpoint with their safe values and
// rules, its output frequency and its status word's names.
func TestModbusExamples(t *testing.T) {
	meter := loadExample(t, "modbus-meter.yaml")
	units := map[string]string{"mains.voltage": "V", "mains.current": "A", "mains.power": "W", "mains.frequency": "Hz", "mains.energy": "Wh"}
	for _, d := range meter.Descriptors() {
		if d.Kind != device.KindModbus || d.Access != device.AccessRead || d.Schema.Unit != units[d.ID] ||
			d.Modbus == nil || d.Modbus.Table != "input" || d.Modbus.Type != "float32" || d.Address != "1" {
			t.Errorf("%s = %+v (modbus %+v)", d.ID, d, d.Modbus)
		}
		delete(units, d.ID)
	}
	if len(units) != 0 {
		t.Errorf("meter devices missing: %v", units)
	}
	vfd := loadExample(t, "modbus-vfd.yaml")
	byID := map[string]device.Descriptor{}
	for _, d := range vfd.Descriptors() {
		byID[d.ID] = d
	}
	run, speed, status := byID["pump.run"], byID["pump.speed"], byID["pump.status"]
	if run.Safe != false || run.Schema.Type != device.TypeBoolean || run.Access != device.AccessReadWrite || vfd.Rules()["pump.run"].MaxOn.Minutes() != 30 {
		t.Errorf("pump.run = %+v, rules %+v", run, vfd.Rules()["pump.run"])
	}
	if speed.Safe != 0.0 || speed.Schema.Unit != "Hz" || *speed.Schema.Minimum != 0 || *speed.Schema.Maximum != 50 || speed.Modbus.Scale != 0.01 {
		t.Errorf("pump.speed = %+v", speed)
	}
	if !slices.Equal(status.Schema.Enum, []any{"stopped", "running", "accelerating", "decelerating", "fault"}) || status.Access != device.AccessRead {
		t.Errorf("pump.status = %+v", status)
	}
	if byID["pump.fault"].Modbus.Table != "discrete" {
		t.Errorf("pump.fault = %+v", byID["pump.fault"])
	}
}
