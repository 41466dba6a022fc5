package board

import (
	"math"
	"regexp"
	"strings"

	"github.com/openhal/gateway/internal/hw/gpioevent"
)

// counterUnitSymbol is what a counter's unit may be: a symbol such as SenML's
// (l, m3, m, Wh), without '/' (the rate's unit is the unit followed by
// "/s") or spaces.
var counterUnitSymbol = regexp.MustCompile(`^[A-Za-z%][A-Za-z0-9%._-]{0,15}$`)

// counterDevice checks a counter: its pin (claimed as any GPIO device's),
// pull, edge, debounce, and the scaling and timing of its values.
func (v *validator) counterDevice(path, id string, dc DeviceConfig, t target, u *usage) {
	v.pin(path, id, dc, t, u)
	if _, ok := counterBias[dc.Pull]; dc.Pull != "" && !ok {
		v.add(path+".pull", "unknown pull %q (want up, down or none)", dc.Pull)
	}
	if _, ok := counterEdges[dc.Edge]; dc.Edge != "" && !ok {
		v.add(path+".edge", "unknown edge %q (want rising, falling or both)", dc.Edge)
	}
	if d := dc.Debounce; d != nil && (*d < 0 || *d > gpioevent.MaxDebounce) {
		v.add(path+".debounce", "want 0 to %v (the kernel counts it in 32-bit microseconds), got %v", gpioevent.MaxDebounce, *d)
	}
	v.counterUnit(path, dc)
	if dc.Interval != nil {
		v.duration(path+".interval", *dc.Interval)
	}
	if dc.Window != nil {
		v.duration(path+".window", *dc.Window)
	}
}

// counterUnit checks perPulse and unit, which go together: unit names
// what the count is in, perPulse how much of it one pulse is.
func (v *validator) counterUnit(path string, dc DeviceConfig) {
	unit := strings.TrimSpace(dc.Unit)
	switch p := dc.PerPulse; {
	case p != nil && (math.IsNaN(*p) || math.IsInf(*p, 0)):
		v.add(path+".perPulse", "want a finite number, got %v", *p)
	case p != nil && *p <= 0:
		v.add(path+".perPulse", "must be a positive amount of %s per pulse, got %v", orWord(unit, "the unit"), *p)
	case p != nil && unit == "":
		v.add(path+".unit", "required with perPulse: the unit one pulse's %v is in (l, m3, m...)", *p)
	case p == nil && unit != "":
		v.add(path+".perPulse", "required with unit: how many %s one pulse is (without both, the count is in pulses)", unit)
	}
	if dc.Unit != "" && !counterUnitSymbol.MatchString(unit) {
		v.add(path+".unit", "%q is not a unit symbol: want letters, digits, %% . _ or -, at most 16, without / (the rate is in %s/s)", dc.Unit, orWord(unit, "unit"))
	}
}

func orWord(s, word string) string {
	if s == "" || strings.ContainsAny(s, " /") {
		return word
	}
	return s
}
