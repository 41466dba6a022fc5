package homeassistant

import (
	"encoding/json"
	"testing"

	"github.com/openhal/gateway/device"
)

func f64(f float64) *float64 { return &f }
func intp(i int) *int        { return &i }

// simBench is the sim board as `gateway devices --json` lists it (run on
// this machine against `gateway run` without a configuration).
func simBench() []device.Descriptor {
	sim := func(id, kind, label string, access device.Access, risk device.Risk, s device.Schema) device.Descriptor {
		return device.Descriptor{ID: id, Kind: kind, Label: label, Source: "sim", Access: access,
			Risk: risk, Schema: s, State: device.StateOK, Tags: []string{"sim"}}
	}
	boolean := device.Schema{Type: device.TypeBoolean}
	return []device.Descriptor{
		sim("sim.button", device.KindGPIOInput, "Button (true = pressed)", device.AccessRead, device.RiskLow, boolean),
		sim("sim.door", device.KindGPIOInput, "Door contact (true = open)", device.AccessRead, device.RiskLow, boolean),
		sim("sim.fan", device.KindPWM, "Fan", device.AccessReadWrite, device.RiskLow,
			device.Schema{Type: device.TypeNumber, Minimum: f64(0), Maximum: f64(100), Unit: "%"}),
		sim("sim.heater", device.KindGPIOOutput, "Heater relay", device.AccessReadWrite, device.RiskHigh, boolean),
		sim("sim.led", device.KindGPIOOutput, "LED", device.AccessReadWrite, device.RiskLow, boolean),
		sim("sim.meter", device.KindSerial, "Meter", device.AccessReadWrite, device.RiskLow,
			device.Schema{Type: device.TypeString, MaxLength: intp(4096)}),
		sim("sim.temperature", device.KindSensor, "Temperature", device.AccessRead, device.RiskLow,
			device.Schema{Type: device.TypeObject, Properties: map[string]device.Schema{
				"temperature": {Type: device.TypeNumber, Unit: "Cel"}}}),
	}
}

var benchGW = Gateway{ID: "bench", Name: "Bench", Version: "1.2.3", ConfigURL: "http://bench.local:7750/"}

// decoded is a discovery payload as Home Assistant reads it.
type decoded struct {
	Dev  map[string]any            `json:"dev"`
	O    map[string]any            `json:"o"`
	Cmps map[string]map[string]any `json:"cmps"`
	all  map[string]any
}

func decode(t *testing.T, data []byte) decoded {
	t.Helper()
	if !json.Valid(data) {
		t.Fatalf("payload is not valid JSON: %s", data)
	}
	var d decoded
	if err := json.Unmarshal(data, &d); err != nil {
		t.Fatalf("payload: %v", err)
	}
	if err := json.Unmarshal(data, &d.all); err != nil {
		t.Fatalf("payload: %v", err)
	}
	return d
}

func config(t *testing.T, devs []device.Descriptor) decoded {
	t.Helper()
	_, data, err := Config(Topics{}, benchGW, devs)
	if err != nil {
		t.Fatalf("Config: %v", err)
	}
	return decode(t, data)
}
