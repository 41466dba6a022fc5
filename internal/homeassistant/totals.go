package homeassistant

import "github.com/openhal/gateway/device"

// counterChip is the descriptor's chip of the gateway's pulse counters
// (kind: counter in the configuration): their count only grows (and
// starts again from 0 if the kept count is lost), what Home Assistant
// calls a total_increasing state, whose growth its statistics sum.
const counterChip = "counter"

// totals maps the SenML units a counter's count may be in to the Home
// Assistant device classes that accept state_class total_increasing with
// that unit (sensor's DEVICE_CLASS_STATE_CLASSES and DEVICE_CLASS_UNITS:
// volume, energy, distance, weight). "l" is RFC 8428's litre, "L" how
// people write it; water and gas are not guessed: a flow meter's liquid
// is not said. Other units go out as they are, without a device class.
var totals = map[string]quantity{
	"l":   {"volume", "L"},
	"L":   {"volume", "L"},
	"m3":  {"volume", "m³"},
	"Wh":  {"energy", "Wh"},
	"kWh": {"energy", "kWh"},
	"m":   {"distance", "m"},
	"km":  {"distance", "km"},
	"kg":  {"weight", "kg"},
	"g":   {"weight", "g"},
}

// counterTotal makes c, the component of a counter's count, a
// total_increasing sensor with its unit's device class, if it has one
// that takes totals. The rate stays a measurement.
func counterTotal(d device.Descriptor, prop string, s device.Schema, c *component) {
	if d.Chip != counterChip || prop != "count" {
		return
	}
	q, ok := totals[s.Unit]
	if !ok {
		q = quantity{unit: device.UnitSymbol(s.Unit)}
	}
	c.StateClass, c.DeviceClass, c.Unit = "total_increasing", q.class, q.unit
}
