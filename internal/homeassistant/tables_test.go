package homeassistant

import (
	"strings"
	"testing"

	"github.com/openhal/gateway/device"
)

func TestUnits(t *testing.T) {
	tests := []struct{ senml, class, unit string }{
		{"Cel", "temperature", "°C"},
		{"K", "temperature", "K"},
		{"%RH", "humidity", "%"},
		{"hPa", "pressure", "hPa"},
		{"Pa", "pressure", "Pa"},
		{"V", "voltage", "V"},
		{"A", "current", "A"},
		{"W", "power", "W"},
		{"Hz", "frequency", "Hz"},
		{"lx", "illuminance", "lx"},
		{"W/m2", "irradiance", "W/m²"},
		{"%EL", "battery", "%"},
		{"%", "", "%"},     // says nothing of what is measured
		{"ppm", "", "ppm"}, // CO2? VOC?
		{"kWh", "", "kWh"}, // a total, not a measurement
		{"", "", ""},
		{"1/min", "", "rpm"}, // a fan (hwmon): no class, Home Assistant's spelling
		{"m/s2", "", "m/s²"}, // outside the table: as people read it (device.UnitSymbol)
		{"ug/m3", "", "µg/m³"},
	}
	for _, tt := range tests {
		if q := quantityOf(tt.senml); q.class != tt.class || q.unit != tt.unit {
			t.Errorf("quantityOf(%q) = %+v, want %s %s", tt.senml, q, tt.class, tt.unit)
		}
	}
}

func TestBinaryClass(t *testing.T) {
	tests := []struct {
		label string
		tags  []string
		want  string
	}{
		{"Door contact (true = open)", []string{"sim"}, "door"},
		{"Back door (true = open)", []string{"door"}, "door"},
		{"Window (TRUE=open)", nil, "window"},
		{"PIR (true = motion)", []string{"motion"}, "motion"},
		{"Motion sensor (true = detected)", nil, "motion"},
		{"Leak probe (true = wet)", []string{"moisture"}, "moisture"},
		{"Button (true = pressed)", []string{"sim"}, ""}, // no class for a button
		{"Door contact", []string{"door"}, ""},           // which way round?
		{"Door contact (true = closed)", []string{"door"}, ""},
		{"Relay (true = open)", nil, ""},
		{"", []string{"door"}, ""},
	}
	for _, tt := range tests {
		d := device.Descriptor{ID: "t.in", Kind: device.KindGPIOInput, Label: tt.label, Tags: tt.tags}
		if got := binaryClass(d); got != tt.want {
			t.Errorf("binaryClass(%q, %v) = %q, want %q", tt.label, tt.tags, got, tt.want)
		}
	}
}

func TestTopics(t *testing.T) {
	def, lab := Topics{}, Topics{Prefix: "lab/openhal", Discovery: "ha"}
	tests := []struct{ got, want string }{
		{def.Base("bench"), "openhal/bench"},
		{def.Status("bench"), "openhal/bench/status"},
		{def.State("bench", "sim.led"), "openhal/bench/sim.led/state"},
		{def.Availability("bench", "sim.led"), "openhal/bench/sim.led/availability"},
		{def.Set("bench", "sim.led"), "openhal/bench/sim.led/set"},
		{def.Result("bench", "sim.led"), "openhal/bench/sim.led/result"},
		{def.StopState("bench"), "openhal/bench/_stop/state"},
		{def.StopSet("bench"), "openhal/bench/_stop/set"},
		{def.BridgeState("bench"), "openhal/bench/_bridge/state"},
		{def.DeviceConfig("bench"), "homeassistant/device/bench/config"},
		{def.HAStatus(), "homeassistant/status"},
		{lab.State("b", "x.y"), "lab/openhal/b/x.y/state"},
		{lab.DeviceConfig("b"), "ha/device/b/config"},
		{lab.HAStatus(), "ha/status"},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("got %q, want %q", tt.got, tt.want)
		}
	}
}

func TestSlug(t *testing.T) {
	tests := []struct{ in, want string }{
		{"bench", "bench"},
		{"Lab Bench #2", "lab-bench-2"},
		{"raspberrypi.local", "raspberrypi-local"},
		{"lab_2-b", "lab-2-b"},
		{"  --Ünïcode--  ", "n-code"},
		{"///", "gateway"},
		{"", "gateway"},
		{strings.Repeat("ab", 40), strings.Repeat("ab", 32)},
		{strings.Repeat("a", 63) + " b", strings.Repeat("a", 63)},
	}
	for _, tt := range tests {
		if got := Slug(tt.in); got != tt.want {
			t.Errorf("Slug(%q) = %q, want %q", tt.in, got, tt.want)
		}
		if got := Slug(tt.in); !gatewayID.MatchString(got) {
			t.Errorf("Slug(%q) = %q is not a gateway id", tt.in, got)
		}
	}
}
