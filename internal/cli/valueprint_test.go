package cli

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/halclient"
	"github.com/openhal/gateway/openhal"
)

// What `gateway write` prints: the value with its unit as `devices`
// shows it, and a pending request's expiry as a person reads it.
func TestPrintWrite(t *testing.T) {
	now := time.Date(2026, 12, 6, 16, 40, 0, 123456789, time.Local)
	percent := device.Schema{Type: device.TypeNumber, Unit: "%"}
	climate := device.Schema{Type: device.TypeObject, Properties: map[string]device.Schema{
		"temperature": {Type: device.TypeNumber, Unit: "Cel"},
	}}
	pending := func(expires time.Time) rawValue {
		return rawValue{Status: openhal.StatusPending, Confirmation: &halclient.Confirmation{ID: "c-7", ExpiresAt: expires}}
	}
	tests := []struct {
		name   string
		value  string
		schema device.Schema
		r      rawValue
		want   string
		// approve: the approval line's flags
		approve string
	}{
		{"applied with a unit", "0", percent, rawValue{Status: openhal.StatusApplied, Value: json.RawMessage("0"), Seq: 9},
			"sim.fan = 0 % (seq 9)\n", ""},
		{"applied, an object", `{"temperature":21}`, climate, rawValue{Status: openhal.StatusApplied, Value: json.RawMessage(`{"temperature":21.5}`), Seq: 3},
			"sim.fan = {\"temperature\":21.5 °C} (seq 3)\n", ""},
		{"applied, no unit", "true", device.Schema{Type: device.TypeBoolean}, rawValue{Status: openhal.StatusApplied, Value: json.RawMessage("true"), Seq: 4},
			"sim.fan = true (seq 4)\n", ""},
		{"no schema known", "40", device.Schema{}, rawValue{Status: openhal.StatusApplied, Value: json.RawMessage("40"), Seq: 5},
			"sim.fan = 40 (seq 5)\n", ""},
		{"pending, today", "40", percent, pending(now.Add(2 * time.Minute)),
			"sim.fan = 40 % is pending: confirmation c-7 waits for an admin until 16:42:00 (in 2m0s) (gateway confirm approve c-7)\n", ""},
		{"pending, another day", "40", percent, pending(now.Add(24 * time.Hour)),
			"sim.fan = 40 % is pending: confirmation c-7 waits for an admin until 2026-12-07 16:40:00 (in 24h0m0s) (gateway confirm approve c-7)\n", ""},
		{"pending, passed", "40", percent, pending(now.Add(-time.Second)),
			"sim.fan = 40 % is pending: confirmation c-7 waits for an admin until 16:39:59 (passed) (gateway confirm approve c-7)\n", ""},
		{"pending, on another gateway", "40", percent, pending(now.Add(2 * time.Minute)),
			"sim.fan = 40 % is pending: confirmation c-7 waits for an admin until 16:42:00 (in 2m0s) (gateway confirm approve c-7 --state-dir /tmp/gw)\n",
			"--state-dir /tmp/gw"},
		{"refused", "40", percent, rawValue{Status: "blocked"}, "sim.fan = 40 %: blocked\n", ""},
	}
	for _, tt := range tests {
		var b strings.Builder
		if err := printWrite(&b, "sim.fan", json.RawMessage(tt.value), tt.schema, tt.r, now, tt.approve); err != nil || b.String() != tt.want {
			t.Errorf("%s: printed %q (%v), want %q", tt.name, b.String(), err, tt.want)
		}
	}
}

// confirm list shows the values asked for and the device's value now
// with their units, as devices does; a device it has no schema for, or a
// value without units, as JSON.
func TestConfirmationsWithUnits(t *testing.T) {
	exp := time.Date(2026, 12, 6, 16, 42, 0, 0, time.UTC)
	cs := []openhal.Confirmation{
		{ID: "c-1", Device: "sim.fan", Value: 40.0, Current: &openhal.CurrentValue{Value: 0.0}, Status: openhal.ConfirmPending, ExpiresAt: exp},
		{ID: "c-2", Device: "sim.heater", Value: true, Current: &openhal.CurrentValue{Value: false}, Status: openhal.ConfirmPending, ExpiresAt: exp},
		{ID: "c-3", Device: "bench.dac", Value: 2.5, Status: openhal.ConfirmRejected, ExpiresAt: exp},
	}
	schemas := map[string]device.Schema{
		"sim.fan":    {Type: device.TypeNumber, Unit: "%"},
		"sim.heater": {Type: device.TypeBoolean},
	}
	var b strings.Builder
	if err := printConfirmations(&b, cs, schemas); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(b.String(), "\n")
	for i, want := range []string{`^c-1 +sim\.fan +40 % +0 % `, `^c-2 +sim\.heater +true +false `, `^c-3 +bench\.dac +2\.5 +- `} {
		if !regexp.MustCompile(want).MatchString(lines[i+1]) {
			t.Errorf("row %d %q does not match %s", i+1, lines[i+1], want)
		}
	}
}
