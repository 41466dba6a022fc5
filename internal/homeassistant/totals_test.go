package homeassistant

import (
	"testing"

	"github.com/openhal/gateway/device"
)

// A counter's count is a total_increasing sensor, with a device class
// that takes totals where its unit has one; its rate is a measurement.
func TestCounterEntities(t *testing.T) {
	counter := func(id, count, rate string) device.Descriptor {
		return device.Descriptor{ID: id, Kind: device.KindSensor, Access: device.AccessRead, Risk: device.RiskLow,
			Pin: "GPIO17", Chip: "counter", Schema: device.Schema{Type: device.TypeObject, Properties: map[string]device.Schema{
				"count": {Type: device.TypeNumber, Unit: count},
				"rate":  {Type: device.TypeNumber, Unit: rate},
			}}}
	}
	cmps := config(t, []device.Descriptor{
		counter("garden.flow", "l", "l/s"),
		counter("roof.wind", "m", "m/s"),
		counter("door.count", "count", "1/s"),
		counter("meter.s0", "kWh", "kWh/s"),
	}).Cmps
	for _, tt := range []struct {
		cmp                string
		state, class, unit any // nil: absent
	}{
		{"sensor_garden_flow_count", "total_increasing", "volume", "L"},
		{"sensor_garden_flow_rate", "measurement", nil, "l/s"},
		{"sensor_roof_wind_count", "total_increasing", "distance", "m"},
		{"sensor_roof_wind_rate", "measurement", "speed", "m/s"},
		{"sensor_door_count_count", "total_increasing", nil, "count"},
		{"sensor_door_count_rate", "measurement", nil, "1/s"},
		{"sensor_meter_s0_count", "total_increasing", "energy", "kWh"},
	} {
		c, ok := cmps[tt.cmp]
		if !ok {
			t.Errorf("no component %s", tt.cmp)
			continue
		}
		for f, want := range map[string]any{"state_class": tt.state, "device_class": tt.class, "unit_of_measurement": tt.unit} {
			if c[f] != want {
				t.Errorf("%s.%s = %v, want %v", tt.cmp, f, c[f], want)
			}
		}
	}
	// The same object from a sensor that is not a counter: measurements.
	plain := counter("tank.level", "l", "l/s")
	plain.Chip = ""
	if c := config(t, []device.Descriptor{plain}).Cmps["sensor_tank_level_count"]; c["state_class"] != "measurement" || c["device_class"] != nil {
		t.Errorf("a sensor's litres: %v", c)
	}
}
