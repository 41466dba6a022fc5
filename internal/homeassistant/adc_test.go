package homeassistant

import (
	"testing"

	"github.com/openhal/gateway/internal/board"
)

// An SPI ADC channel as the board describes it (issue 30, point 1): one
// sensor per quantity, the volts with Home Assistant's voltage class,
// the scaled quantity with its own unit (a "%" says nothing of what is
// measured, so no class).
func TestADCChannel(t *testing.T) {
	cfg, err := board.Parse([]byte(`board: rpi4b
devices:
  soil:
    kind: sensor
    label: Soil
    driver: mcp3008
    bus: /dev/spidev0.0
    channel: 0
    scale: 30.303
    unit: "%"
    quantity: moisture
  level:
    kind: sensor
    driver: mcp3208
    bus: /dev/spidev0.1
    channel: 1
    scale: 100
    unit: cm
    quantity: level
`))
	if err != nil {
		t.Fatal(err)
	}
	cmps := config(t, cfg.Descriptors()).Cmps
	for id, want := range map[string]map[string]any{
		"sensor_soil_voltage":  {"name": "Soil voltage", "device_class": "voltage", "unit_of_measurement": "V", "value_template": "{{ value_json.voltage }}"},
		"sensor_soil_moisture": {"name": "Soil moisture", "device_class": nil, "unit_of_measurement": "%", "value_template": "{{ value_json.moisture }}"},
		"sensor_level_level":   {"name": "level level", "device_class": "distance", "unit_of_measurement": "cm", "state_class": "measurement"},
		"sensor_level_voltage": {"device_class": "voltage", "state_topic": "openhal/bench/level/state"},
	} {
		c, ok := cmps[id]
		if !ok {
			t.Errorf("no component %s (have %v)", id, adcKeys(cmps))
			continue
		}
		for f, v := range want {
			if c[f] != v {
				t.Errorf("%s.%s = %v, want %v", id, f, c[f], v)
			}
		}
	}
}

func adcKeys(m map[string]map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
