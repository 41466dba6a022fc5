package homeassistant

import (
	"reflect"
	"strings"
	"testing"

	"github.com/openhal/gateway/device"
)

// Each kind and schema maps to one platform, or to none with a reason.
func TestMapping(t *testing.T) {
	num := func(min, max *float64, unit string) device.Schema {
		return device.Schema{Type: device.TypeNumber, Minimum: min, Maximum: max, Unit: unit}
	}
	d := func(kind string, access device.Access, risk device.Risk, s device.Schema) device.Descriptor {
		return device.Descriptor{ID: "t.dev", Kind: kind, Label: "Dev", Access: access, Risk: risk, Schema: s}
	}
	boolean := device.Schema{Type: device.TypeBoolean}
	str := func(n int) device.Schema { return device.Schema{Type: device.TypeString, MaxLength: &n} }
	tests := []struct {
		name   string
		dev    device.Descriptor
		want   map[string]any // of the one component; nil: none
		reason string
	}{
		{"writable output", d(device.KindGPIOOutput, device.AccessReadWrite, device.RiskLow, boolean),
			map[string]any{"p": "switch", "name": "Dev", "command_topic": "openhal/gw/t.dev/set"}, ""},
		{"write-only output", d(device.KindGPIOOutput, device.AccessWrite, device.RiskLow, boolean),
			map[string]any{"p": "switch"}, ""},
		{"high-risk output", d(device.KindGPIOOutput, device.AccessReadWrite, device.RiskHigh, boolean),
			map[string]any{"p": "switch", "name": "Dev (waits for approval)"}, ""},
		{"read-only output", d(device.KindGPIOOutput, device.AccessRead, device.RiskHigh, boolean),
			map[string]any{"p": "binary_sensor", "name": "Dev", "command_topic": nil, "device_class": nil}, ""},
		{"input", d(device.KindGPIOInput, device.AccessRead, device.RiskLow, boolean),
			map[string]any{"p": "binary_sensor", "payload_on": "true", "device_class": nil}, ""},
		{"output not boolean", d(device.KindGPIOOutput, device.AccessReadWrite, device.RiskLow, num(nil, nil, "")),
			nil, `a gpio.output with a "number" value has no entity`},
		{"pwm", d(device.KindPWM, device.AccessReadWrite, device.RiskLow, num(f64(0), f64(1), "")),
			map[string]any{"p": "number", "min": 0.0, "max": 1.0, "step": 0.01, "mode": "slider", "unit_of_measurement": nil}, ""},
		{"pwm integer", d(device.KindPWM, device.AccessReadWrite, device.RiskLow,
			device.Schema{Type: device.TypeInteger, Minimum: f64(-5), Maximum: f64(5)}),
			map[string]any{"p": "number", "step": 1.0}, ""},
		{"high-risk pwm", d(device.KindPWM, device.AccessReadWrite, device.RiskHigh, num(f64(0), f64(100), "%")),
			map[string]any{"p": "number", "name": "Dev (waits for approval)", "unit_of_measurement": "%"}, ""},
		{"pwm without range", d(device.KindPWM, device.AccessReadWrite, device.RiskLow, num(f64(0), nil, "%")),
			nil, "a pwm without a range (minimum < maximum) has no entity"},
		{"pwm empty range", d(device.KindPWM, device.AccessReadWrite, device.RiskLow, num(f64(1), f64(1), "%")),
			nil, "a pwm without a range (minimum < maximum) has no entity"},
		{"servo", d(device.KindServo, device.AccessReadWrite, device.RiskLow, num(f64(-90), f64(90), "deg")),
			map[string]any{"p": "number", "min": -90.0, "max": 90.0, "step": 1.0, "mode": "slider", "unit_of_measurement": "°",
				"device_class": nil, "command_topic": "openhal/gw/t.dev/set"}, ""},
		{"high-risk servo", d(device.KindServo, device.AccessReadWrite, device.RiskHigh, num(f64(0), f64(180), "deg")),
			map[string]any{"p": "number", "name": "Dev (waits for approval)", "max": 180.0}, ""},
		{"read-only pwm", d(device.KindPWM, device.AccessRead, device.RiskLow, num(f64(0), f64(100), "%")),
			map[string]any{"p": "sensor", "unit_of_measurement": "%", "state_class": "measurement", "device_class": nil}, ""},
		{"scalar sensor", d(device.KindSensor, device.AccessRead, device.RiskLow, num(nil, nil, "V")),
			map[string]any{"p": "sensor", "device_class": "voltage", "unit_of_measurement": "V", "value_template": nil}, ""},
		{"sensor, unit unknown", d(device.KindSensor, device.AccessRead, device.RiskLow, num(nil, nil, "ppm")),
			map[string]any{"p": "sensor", "device_class": nil, "unit_of_measurement": "ppm", "state_class": "measurement"}, ""},
		{"sensor without numbers", d(device.KindSensor, device.AccessRead, device.RiskLow, device.Schema{Type: device.TypeObject,
			Properties: map[string]device.Schema{"ok": {Type: device.TypeBoolean}}}),
			nil, "a sensor without a numeric property has no entity"},
		{"string sensor", d(device.KindSensor, device.AccessRead, device.RiskLow, str(40)),
			map[string]any{"p": "sensor", "value_template": "{{ value_json[:40] }}", "unit_of_measurement": nil, "state_class": nil}, ""},
		{"serial", d(device.KindSerial, device.AccessReadWrite, device.RiskLow, str(80)),
			map[string]any{"p": "text", "max": 80.0, "command_template": "{{ value | tojson }}"}, ""},
		{"serial without maxLength", d(device.KindSerial, device.AccessReadWrite, device.RiskLow, device.Schema{Type: device.TypeString}),
			map[string]any{"p": "text", "max": 255.0}, ""},
		{"high-risk serial", d(device.KindSerial, device.AccessReadWrite, device.RiskHigh, str(80)),
			map[string]any{"p": "text", "name": "Dev (waits for approval)"}, ""},
		{"read-only serial", d(device.KindSerial, device.AccessRead, device.RiskLow, str(4096)),
			map[string]any{"p": "sensor", "value_template": "{{ value_json[:255] }}"}, ""},
		{"serial of nothing", d(device.KindSerial, device.AccessReadWrite, device.RiskLow, str(0)),
			nil, "a string of at most 0 characters has no entity"},
		{"adapter kind", d("x.thermostat", device.AccessReadWrite, device.RiskLow, num(f64(5), f64(30), "Cel")),
			nil, `kind "x.thermostat" has no entity`},
		{"bad id", device.Descriptor{ID: "Bad/Id", Kind: device.KindGPIOOutput, Access: device.AccessReadWrite, Schema: boolean},
			nil, `device id "Bad/Id" is not a valid id`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, data, err := Config(Topics{}, Gateway{ID: "gw"}, []device.Descriptor{tt.dev})
			if err != nil {
				t.Fatal(err)
			}
			var mine []map[string]any
			for key, c := range decode(t, data).Cmps {
				if !strings.HasPrefix(key, c["p"].(string)+"__") { // not the gateway's
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

// A sensor with several numeric properties: one sensor each, named by
// label and property.
func TestSensorProperties(t *testing.T) {
	s := device.Descriptor{ID: "env.bme", Kind: device.KindSensor, Label: "BME280", Access: device.AccessRead,
		Schema: device.Schema{Type: device.TypeObject, Properties: map[string]device.Schema{
			"temperature": {Type: device.TypeNumber, Unit: "Cel"},
			"humidity":    {Type: device.TypeNumber, Unit: "%RH"},
			"pressure":    {Type: device.TypeNumber, Unit: "hPa"},
			"status":      {Type: device.TypeString},
		}}}
	cmps := config(t, []device.Descriptor{s}).Cmps
	for _, tt := range []struct{ prop, class, unit string }{
		{"temperature", "temperature", "°C"}, {"humidity", "humidity", "%"}, {"pressure", "pressure", "hPa"},
	} {
		c := cmps["sensor_env_bme_"+tt.prop]
		want := map[string]any{"name": "BME280 " + tt.prop, "device_class": tt.class, "unit_of_measurement": tt.unit,
			"state_class": "measurement", "value_template": "{{ value_json." + tt.prop + " }}",
			"state_topic": "openhal/bench/env.bme/state", "unique_id": "openhal_bench_env_bme_" + tt.prop}
		for f, v := range want {
			if c[f] != v {
				t.Errorf("%s.%s = %v, want %v", tt.prop, f, c[f], v)
			}
		}
	}
	if _, ok := cmps["sensor_env_bme_status"]; ok || len(cmps) != 8 {
		t.Errorf("%d components (want 3 + 5 of the gateway, none for the string property)", len(cmps))
	}
}

func TestStep(t *testing.T) {
	tests := []struct {
		typ      string
		min, max float64
		want     float64
	}{
		{device.TypeNumber, 0, 100, 1},
		{device.TypeNumber, 0, 1, 0.01},
		{device.TypeNumber, 0, 10, 0.1},
		{device.TypeNumber, 0, 100000, 1000},
		{device.TypeNumber, 0, 0.0001, 0.001},
		{device.TypeNumber, -40, 40, 0.1},
		{device.TypeInteger, 0, 1, 1},
	}
	for _, tt := range tests {
		s := device.Schema{Type: tt.typ, Minimum: f64(tt.min), Maximum: f64(tt.max)}
		if got := stepOf(s); got != tt.want {
			t.Errorf("stepOf(%s %v..%v) = %v, want %v", tt.typ, tt.min, tt.max, got, tt.want)
		}
	}
}
