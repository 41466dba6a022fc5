package cli

import (
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/openhal/gateway/device"
)

// valueWithUnit writes a value as JSON (as formatValue does) with the
// unit its schema gives after each number: `70 %`, and for a sensor's
// quantities `{"humidity":41.5 %, "temperature":20.5 °C}`. The
// descriptors carry UCUM codes (Cel, %RH); people read the symbols
// device.UnitSymbol gives. A value without units is formatValue's alone,
// so that it can still be pasted into `gateway write`.
func valueWithUnit(s device.Schema, v any) string {
	if m, ok := v.(map[string]any); ok && hasUnits(s.Properties) {
		keys := slices.Sorted(maps.Keys(m))
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = formatValue(k) + ":" + valueWithUnit(s.Properties[k], m[k])
		}
		return "{" + strings.Join(parts, ", ") + "}"
	}
	if _, ok := v.(float64); ok && s.Unit != "" {
		return formatValue(v) + " " + device.UnitSymbol(s.Unit)
	}
	return formatValue(v)
}

func hasUnits(props map[string]device.Schema) bool {
	for _, p := range props {
		if p.Unit != "" {
			return true
		}
	}
	return false
}

// unitText is a schema's units for a table column: "%", or for a
// sensor's quantities "temperature °C, humidity %"; "-" without any.
func unitText(s device.Schema) string {
	if s.Unit != "" {
		return device.UnitSymbol(s.Unit)
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(s.Properties)) {
		if u := s.Properties[k].Unit; u != "" {
			parts = append(parts, k+" "+device.UnitSymbol(u))
		}
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, ", ")
}

// watchStamp is the time at the start of a `gateway watch` line: local
// time to the millisecond, as a log line shows it.
func watchStamp(t time.Time) string {
	return t.Local().Format("15:04:05.000")
}
