package homeassistant

import "github.com/openhal/gateway/device"

// quantity is what Home Assistant makes of a unit: its sensor device
// class (empty: none is certain) and the unit as Home Assistant spells it.
type quantity struct{ class, unit string }

// units maps the SenML symbols of descriptors (RFC 8428 and its secondary
// units, RFC 8798) to Home Assistant sensor device classes and units.
//
// Only pairs Home Assistant accepts with state_class "measurement" are
// here (its sensor device class table lists, for each class, the units and
// state classes it allows: developers.home-assistant.io, "Available device
// classes" of the sensor entity). Energy, gas, water and volume are not:
// they are totals (state_class total / total_increasing), and a descriptor
// does not say whether a meter counts up or measures; "%" and "ppm" are
// not either, because they say nothing of what is measured. A unit not in
// the table is published as it is, without a device class.
var units = map[string]quantity{
	"Cel":  {"temperature", "°C"},
	"K":    {"temperature", "K"},
	"%RH":  {"humidity", "%"},
	"Pa":   {"pressure", "Pa"},
	"hPa":  {"pressure", "hPa"},
	"kPa":  {"pressure", "kPa"},
	"bar":  {"pressure", "bar"},
	"mbar": {"pressure", "mbar"},
	"V":    {"voltage", "V"},
	"mV":   {"voltage", "mV"},
	"A":    {"current", "A"},
	"mA":   {"current", "mA"},
	"W":    {"power", "W"},
	"kW":   {"power", "kW"},
	"VA":   {"apparent_power", "VA"},
	"Hz":   {"frequency", "Hz"},
	"kHz":  {"frequency", "kHz"},
	"lx":   {"illuminance", "lx"},
	"m":    {"distance", "m"},
	"cm":   {"distance", "cm"},
	"mm":   {"distance", "mm"},
	"km":   {"distance", "km"},
	"m/s":  {"speed", "m/s"},
	"kg":   {"weight", "kg"},
	"g":    {"weight", "g"},
	"dB":   {"sound_pressure", "dB"},
	"dBm":  {"signal_strength", "dBm"},
	"W/m2": {"irradiance", "W/m²"},
	"%EL":  {"battery", "%"},
	"s":    {"duration", "s"},
	"ms":   {"duration", "ms"},
	"deg":  {"", "°"}, // a servo's angle: no sensor class is an angle
	// A fan's speed (hwmon's fanN_input): Home Assistant has no class for
	// it, and spells the unit rpm.
	"1/min": {"", "rpm"},
}

// quantityOf is the device class and Home Assistant unit of a SenML unit;
// a unit outside the table is shown as people read it (device.UnitSymbol:
// "m/s2" reads "m/s²"), without a device class.
func quantityOf(senml string) quantity {
	if q, ok := units[senml]; ok {
		return q
	}
	return quantity{unit: device.UnitSymbol(senml)}
}
