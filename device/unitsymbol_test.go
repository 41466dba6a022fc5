package device_test

import (
	"testing"

	"github.com/openhal/gateway/device"
)

func TestUnitSymbol(t *testing.T) {
	for senml, want := range map[string]string{
		"Cel": "°C", "%RH": "%", "1/min": "rpm", "deg": "°", "W/m2": "W/m²",
		"%": "%", "V": "V", "Pa": "Pa", "": "", "furlong": "furlong",
	} {
		if got := device.UnitSymbol(senml); got != want {
			t.Errorf("UnitSymbol(%q) = %q, want %q", senml, got, want)
		}
	}
}
