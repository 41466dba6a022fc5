package device

// symbols are the SenML units (RFC 8428, RFC 8798) that people read
// another way: °C, not Cel. A unit not here reads as it is written.
var symbols = map[string]string{
	"Cel":   "°C",
	"%RH":   "%",
	"%EL":   "%",
	"/":     "",
	"1/min": "rpm",
	"deg":   "°",
	"W/m2":  "W/m²",
	"m/s2":  "m/s²",
	"m2":    "m²",
	"m3":    "m³",
	"m3/s":  "m³/s",
	"ug/m3": "µg/m³",
	"us":    "µs",
	"uS/cm": "µS/cm",
}

// UnitSymbol is how a person reads a schema's unit (a SenML symbol, as
// descriptors carry it): "Cel" reads "°C", "%RH" reads "%", "1/min"
// reads "rpm". Printed values, plot axes and Home Assistant's units use
// it; descriptors, the protocol and the API keep the SenML symbol.
func UnitSymbol(senml string) string {
	if s, ok := symbols[senml]; ok {
		return s
	}
	return senml
}
