package homeassistant

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/openhal/gateway/device"
)

// modbusBench is issue 31's VFD and energy meter as the gateway lists
// them: a speed setpoint (holding, uint16 ×0.01) and a run coil, a
// voltage (input, float32) and an alarm (discrete), a status word and a
// mode (enums).
func modbusBench() []device.Descriptor {
	on := func(id, label string, access device.Access, s device.Schema, r device.ModbusRegister) device.Descriptor {
		risk := device.RiskLow
		if access.CanWrite() {
			risk = device.RiskHigh
		}
		return device.Descriptor{ID: id, Kind: device.KindModbus, Label: label, Source: "board", Access: access,
			Risk: risk, Schema: s, State: device.StateOK, Bus: "/dev/serial/by-id/usb-FTDI_FT232R-if00-port0",
			Address: "1", Chip: "modbus", Modbus: &r}
	}
	boolean := device.Schema{Type: device.TypeBoolean}
	enum := func(e ...any) device.Schema { return device.Schema{Type: device.TypeString, Enum: e} }
	return []device.Descriptor{
		on("vfd.speed", "Pump speed", device.AccessReadWrite,
			device.Schema{Type: device.TypeNumber, Minimum: f64(0), Maximum: f64(50), Unit: "Hz"},
			device.ModbusRegister{Table: "holding", Address: 8193, Type: "uint16", Words: 1, Scale: 0.01}),
		on("vfd.run", "Pump run", device.AccessReadWrite, boolean, device.ModbusRegister{Table: "coil", Type: "bool"}),
		on("meter.voltage", "Voltage", device.AccessRead, device.Schema{Type: device.TypeNumber, Unit: "V"},
			device.ModbusRegister{Table: "input", Type: "float32", Words: 2, Swap: "word"}),
		on("meter.alarm", "Alarm", device.AccessRead, boolean, device.ModbusRegister{Table: "discrete", Address: 3, Type: "bool"}),
		on("vfd.status", "Pump status", device.AccessRead, enum("stopped", "running", "fault"),
			device.ModbusRegister{Table: "input", Address: 10, Type: "uint16", Words: 1}),
		on("vfd.mode", "Pump mode", device.AccessReadWrite, enum("local", "remote"),
			device.ModbusRegister{Table: "holding", Address: 11, Type: "uint16", Words: 1}),
	}
}

// Each x.modbus device maps by its schema and access to the entity the
// same value of another kind gets, field by field.
func TestModbusBenchFieldByField(t *testing.T) {
	cmps := config(t, modbusBench()).Cmps
	set := func(id string) string { return "openhal/bench/" + id + "/set" }
	want := map[string]map[string]any{
		"number_vfd_speed": {"name": "Pump speed (waits for approval)", "command_topic": set("vfd.speed"),
			"min": 0.0, "max": 50.0, "step": 0.01, "mode": "slider", "unit_of_measurement": "Hz",
			"device_class": nil, "value_template": nil},
		"switch_vfd_run": {"name": "Pump run (waits for approval)", "command_topic": set("vfd.run"),
			"payload_on": "true", "payload_off": "false", "state_on": "true", "state_off": "false"},
		"sensor_meter_voltage": {"name": "Voltage", "device_class": "voltage", "unit_of_measurement": "V",
			"state_class": "measurement", "command_topic": nil, "options": nil},
		"binary_sensor_meter_alarm": {"name": "Alarm", "payload_on": "true", "payload_off": "false",
			"device_class": nil, "command_topic": nil},
		"sensor_vfd_status": {"name": "Pump status", "device_class": "enum", "options": []any{"stopped", "running", "fault"},
			"value_template": "{{ value_json }}", "state_class": nil, "unit_of_measurement": nil, "command_topic": nil},
		"select_vfd_mode": {"name": "Pump mode (waits for approval)", "options": []any{"local", "remote"},
			"value_template": "{{ value_json }}", "command_topic": set("vfd.mode"),
			"command_template": "{{ value | tojson }}", "device_class": nil},
	}
	for key, w := range want {
		c, ok := cmps[key]
		if !ok {
			t.Errorf("no component %s in %v", key, slices.Sorted(mapsKeys(cmps)))
			continue
		}
		for f, v := range w {
			if !reflect.DeepEqual(c[f], v) {
				t.Errorf("%s.%s = %#v, want %#v", key, f, c[f], v)
			}
		}
	}
	if len(cmps) != len(want)+5 {
		t.Errorf("%d components, want %d and the gateway's 5: %v", len(cmps), len(want), slices.Sorted(mapsKeys(cmps)))
	}
	if s := Unmapped(modbusBench()); s != nil {
		t.Errorf("x.modbus devices without an entity: %v", s)
	}
}

// The x.modbus components carry only options their platforms document,
// every required one, and what Home Assistant's sensor and number
// validation asks beyond that: options only with device class enum, then
// neither unit nor state class (core's mqtt sensor.py refuses the
// component otherwise, and with it the whole device message); min < max
// and a step of at least 0.001.
func TestModbusFollowsHomeAssistantSchema(t *testing.T) {
	for key, c := range config(t, modbusBench()).Cmps {
		p, _ := c["p"].(string)
		allowed := allowedKeys(p)
		if allowed == nil {
			t.Errorf("%s: platform %q is not one of %v", key, p, slices.Sorted(mapsKeys(platforms)))
			continue
		}
		if missing, unknown := missingAndUnknown(c, platforms[p].required, allowed); len(missing) > 0 || len(unknown) > 0 {
			t.Errorf("%s: missing %v, not documented %v", key, missing, unknown)
		}
		checkAvailability(t, key, c)
		if opts, ok := c["options"].([]any); ok && p == PlatformSensor {
			if len(opts) == 0 || c["device_class"] != "enum" || c["unit_of_measurement"] != nil || c["state_class"] != nil {
				t.Errorf("%s: options %v with device_class %v, unit %v, state_class %v", key, opts,
					c["device_class"], c["unit_of_measurement"], c["state_class"])
			}
		}
		if p == PlatformNumber {
			lo, _ := c["min"].(float64)
			hi, _ := c["max"].(float64)
			step, _ := c["step"].(float64)
			if !(lo < hi) || step < 0.001 {
				t.Errorf("%s: min %v, max %v, step %v", key, c["min"], c["max"], c["step"])
			}
		}
	}
}

// A written register's range and step: the schema's bounds make a slider
// stepping by the register's resolution; a bound the schema leaves out is
// the register type's, scaled and offset, in a box; a float register
// needs both bounds; an enum must be strings.
func TestModbusNumberAndEnum(t *testing.T) {
	holding := func(typ string, scale, offset float64, lo, hi *float64) device.Descriptor {
		return device.Descriptor{ID: "plc.set", Kind: device.KindModbus, Access: device.AccessReadWrite, Risk: device.RiskLow,
			Schema: device.Schema{Type: device.TypeNumber, Minimum: lo, Maximum: hi, Unit: "Cel"},
			Modbus: &device.ModbusRegister{Table: "holding", Type: typ, Scale: scale, Offset: offset}}
	}
	// lin is the codec's raw×scale+offset in float64, as the gateway
	// computes it (a constant expression would be exact).
	lin := func(raw, scale, offset float64) float64 { return raw*scale + offset }
	tests := []struct {
		name   string
		dev    device.Descriptor
		want   map[string]any
		reason string
	}{
		{"uint16 ×0.1 with bounds", holding("uint16", 0.1, 0, f64(5), f64(30)),
			map[string]any{"p": "number", "min": 5.0, "max": 30.0, "step": 0.1, "mode": "slider", "unit_of_measurement": "°C"}, ""},
		{"uint16 unscaled, no bounds", holding("uint16", 0, 0, nil, nil),
			map[string]any{"min": 0.0, "max": 65535.0, "step": 1.0, "mode": "box"}, ""},
		{"int16 ×0.1 -40, no bounds", holding("int16", 0.1, -40, nil, nil),
			map[string]any{"min": lin(-32768, 0.1, -40), "max": lin(32767, 0.1, -40), "step": 0.1, "mode": "box"}, ""},
		{"negative scale turns the range", holding("uint16", -2, 0, nil, nil),
			map[string]any{"min": -131070.0, "max": 0.0, "step": 2.0}, ""},
		{"one bound of the schema", holding("int16", 1, 0, f64(0), nil),
			map[string]any{"min": 0.0, "max": 32767.0, "mode": "box"}, ""},
		{"finer than Home Assistant steps", holding("int32", 0.0001, 0, f64(0), f64(1)),
			map[string]any{"step": 0.001}, ""},
		{"float32 with bounds", holding("float32", 0, 0, f64(0), f64(10)),
			map[string]any{"step": 0.1, "mode": "slider"}, ""},
		{"float32 without bounds", holding("float32", 0, 0, f64(0), nil), nil,
			"an x.modbus number that is written needs a minimum and a maximum (its register's type has no bounds of its own)"},
		{"no register, no bounds", device.Descriptor{ID: "plc.set", Kind: device.KindModbus, Access: device.AccessReadWrite,
			Schema: device.Schema{Type: device.TypeNumber}}, nil,
			"an x.modbus number that is written needs a minimum and a maximum (its register's type has no bounds of its own)"},
		{"empty range", holding("uint16", 1, 0, f64(7), f64(7)), nil,
			"an x.modbus number without a range (minimum < maximum) has no entity"},
		{"read register", device.Descriptor{ID: "plc.set", Kind: device.KindModbus, Access: device.AccessRead,
			Schema: device.Schema{Type: device.TypeInteger, Unit: "kWh"}},
			map[string]any{"p": "sensor", "unit_of_measurement": "kWh", "device_class": nil, "state_class": "measurement"}, ""},
		{"discrete input with a polarity", device.Descriptor{ID: "plc.set", Kind: device.KindModbus, Access: device.AccessRead,
			Label: "Door (true = open)", Schema: device.Schema{Type: device.TypeBoolean}},
			map[string]any{"p": "binary_sensor", "device_class": "door"}, ""},
		{"string without enum", device.Descriptor{ID: "plc.set", Kind: device.KindModbus, Access: device.AccessRead,
			Schema: device.Schema{Type: device.TypeString}}, nil, "an x.modbus string without an enum has no entity"},
		{"enum of numbers", device.Descriptor{ID: "plc.set", Kind: device.KindModbus, Access: device.AccessReadWrite,
			Schema: device.Schema{Type: device.TypeString, Enum: []any{"a", 2.0}}}, nil,
			"an x.modbus enum of [a 2] has no entity: its options must be strings"},
		{"object", device.Descriptor{ID: "plc.set", Kind: device.KindModbus, Access: device.AccessRead,
			Schema: device.Schema{Type: device.TypeObject}}, nil, `an x.modbus with a "object" value has no entity`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var mine []map[string]any
			for key, c := range config(t, []device.Descriptor{tt.dev}).Cmps {
				if !strings.HasPrefix(key, c["p"].(string)+"__") {
					mine = append(mine, c)
				}
			}
			skips := Unmapped([]device.Descriptor{tt.dev})
			if tt.want == nil {
				if len(mine) != 0 || !reflect.DeepEqual(skips, []Skip{{tt.dev.ID, tt.reason}}) {
					t.Errorf("components %v, skips %v; want none and %q", mine, skips, tt.reason)
				}
				return
			}
			if len(mine) != 1 || len(skips) != 0 {
				t.Fatalf("components %v, skips %v; want one", mine, skips)
			}
			for f, v := range tt.want {
				if !reflect.DeepEqual(mine[0][f], v) {
					t.Errorf("%s = %#v, want %#v", f, mine[0][f], v)
				}
			}
		})
	}
}
