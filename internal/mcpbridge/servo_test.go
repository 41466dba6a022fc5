package mcpbridge

import (
	"strings"
	"testing"

	"github.com/openhal/gateway/device"
)

// A servo (x.servo, issue 30) is shown to a model as a writable number
// in degrees with its range, in write_device's description too, and a
// write of an angle goes through; one outside its range is refused.
func TestServoIsAWritableNumber(t *testing.T) {
	bench, url := newBench(t)
	lo, hi := 0.0, 180.0
	bench.Add(extra{desc: device.Descriptor{ID: "arm.base", Label: "Base", Kind: device.KindServo, Source: "test",
		Access: device.AccessReadWrite, Risk: device.RiskLow, Safe: 90.0, MinPulseUs: 1000, MaxPulseUs: 2000, Rate: 60,
		Schema: device.Schema{Type: device.TypeNumber, Minimum: &lo, Maximum: &hi, Unit: "deg"}}})
	b := newBridge(t, url, bench.Agent, false)
	c := connect(t, b, clientOptions{})
	var out struct {
		Devices []deviceView `json:"devices"`
	}
	c.ok(t, toolList, nil, &out)
	var got *deviceView
	for i, d := range out.Devices {
		if d.ID == "arm.base" {
			got = &out.Devices[i]
		}
	}
	if got == nil || got.Kind != device.KindServo || got.Type != "number" || got.Unit != "deg" || !got.Writable ||
		got.Minimum == nil || *got.Minimum != 0 || got.Maximum == nil || *got.Maximum != 180 || got.Safe != 90.0 {
		t.Fatalf("list_devices shows arm.base as %+v", got)
	}
	if w := c.tools(t)[toolWrite]; !strings.Contains(w.Description, "arm.base: number 0 to 180 deg") {
		t.Errorf("write_device's description %q does not show the servo's range", w.Description)
	}
	c.ok(t, toolWrite, map[string]any{"device": "arm.base", "value": 45, "reason": "point the arm"}, nil)
	c.failing(t, toolWrite, map[string]any{"device": "arm.base", "value": 200, "reason": "too far"}, "200 is above the maximum 180")
}
