package halhub

import (
	"encoding/json"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/internal/halhub/token"
)

// deviceSample is one device as a scrape of /metrics tells it: its
// descriptor, and its value when it has one that /metrics shows.
type deviceSample struct {
	desc device.Descriptor
	snap device.Snapshot
	has  bool
}

// deviceSamples are the devices entry sees, sorted by id. A value is
// shown when hal/read would give it (the device is readable) and the
// device is not offline: an offline device's last value is not its
// value now, and a gauge that went on showing it would draw a flat line
// where the device said nothing.
func (h *Hub) deviceSamples(entry token.Entry) []deviceSample {
	var out []deviceSample
	for _, d := range h.reg.List() {
		if !entry.Visible(d.ID) {
			continue
		}
		s := deviceSample{desc: d}
		if d.Access.CanRead() && d.State != device.StateOffline {
			s.snap, s.has = h.reg.Value(d.ID)
		}
		out = append(out, s)
	}
	return out
}

// quantity is one number of a device's value: the value itself
// ("value"), or a numeric or boolean member of an object value, named
// by its path ("temperature", "a.b").
type quantity struct {
	name, unit string
	v          float64
}

// enumState is a string value, or member, from a schema's enum: one
// series per allowed member, 1 for the current one.
type enumState struct {
	name    string
	members []string
	current string
}

// quantities splits a value by its schema into the numbers /metrics
// shows (booleans as 1 and 0) and its enum strings. path is the member's
// path in an object value, "" for the value itself (quantity "value").
// Free strings (a serial line) are left out: each distinct line would
// be a new series.
func quantities(path string, s device.Schema, unit string, v any, nums *[]quantity, enums *[]enumState) {
	if s.Unit != "" {
		unit = s.Unit
	}
	name := path
	if name == "" {
		name = "value"
	}
	if f, ok := number(v); ok {
		*nums = append(*nums, quantity{name: name, unit: unit, v: f})
		return
	}
	switch v := v.(type) {
	case string:
		if members := stringEnum(s.Enum); len(members) > 0 {
			*enums = append(*enums, enumState{name: name, members: members, current: v})
		}
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			sub := k
			if path != "" {
				sub = path + "." + k
			}
			quantities(sub, s.Properties[k], unit, v[k], nums, enums)
		}
	}
}

// number is a numeric or boolean value as a float, as the Prometheus
// text format carries every sample.
func number(v any) (float64, bool) {
	switch v := v.(type) {
	case bool:
		if v {
			return 1, true
		}
		return 0, true
	case float64:
		return v, true
	case float32:
		return float64(v), true
	case int:
		return float64(v), true
	case int8:
		return float64(v), true
	case int16:
		return float64(v), true
	case int32:
		return float64(v), true
	case int64:
		return float64(v), true
	case uint:
		return float64(v), true
	case uint8:
		return float64(v), true
	case uint16:
		return float64(v), true
	case uint32:
		return float64(v), true
	case uint64:
		return float64(v), true
	case json.Number:
		f, err := v.Float64()
		return f, err == nil
	}
	return 0, false
}

// stringEnum is the string members of an enum, in the schema's order.
func stringEnum(enum []any) []string {
	var out []string
	for _, e := range enum {
		if s, ok := e.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// writeDeviceMetrics writes the device families, each family's lines
// together as the text format requires: info, state, value, enum, and
// the values' timestamps. A family with no series is left out.
func writeDeviceMetrics(w io.Writer, samples []deviceSample) error {
	nums, enums := make([][]quantity, len(samples)), make([][]enumState, len(samples))
	for i, s := range samples {
		if s.has {
			quantities("", s.desc.Schema, "", s.snap.Value, &nums[i], &enums[i])
		}
	}
	b := make([]byte, 0, 1024+len(samples)*512)
	f := gaugeFamily{name: "gateway_device_info", help: "A device the token sees (always 1), with its kind and label: join on device for readable legends."}
	for _, s := range samples {
		b = f.series(b, 1, "device", s.desc.ID, "kind", s.desc.Kind, "label", s.desc.Label)
	}
	f = gaugeFamily{name: "gateway_device_state", help: "1 for the device's current state (ok, fault or offline), 0 for the others."}
	for _, s := range samples {
		for _, st := range [...]device.State{device.StateOK, device.StateFault, device.StateOffline} {
			b = f.series(b, boolFloat(s.desc.State == st), "device", s.desc.ID, "state", string(st))
		}
	}
	f = gaugeFamily{name: "gateway_device_value", help: "A device's value: numbers as they are, booleans 1 (true) or 0, an object's numeric members each its own quantity; unit is the SenML unit (Cel: degrees Celsius)."}
	for i, s := range samples {
		for _, q := range nums[i] {
			b = f.series(b, q.v, "device", s.desc.ID, "quantity", q.name, "unit", q.unit)
		}
	}
	f = gaugeFamily{name: "gateway_device_enum", help: "1 for the current member of a device's enumerated value, 0 for the others."}
	for i, s := range samples {
		for _, e := range enums[i] {
			for _, m := range e.members {
				b = f.series(b, boolFloat(m == e.current), "device", s.desc.ID, "quantity", e.name, "value", m)
			}
		}
	}
	f = gaugeFamily{name: "gateway_device_value_timestamp_seconds", help: "When the device's value shown was taken, in Unix seconds: time() minus it is the value's age."}
	for i, s := range samples {
		if len(nums[i])+len(enums[i]) > 0 {
			b = f.series(b, float64(s.snap.TS.UnixMilli())/1000, "device", s.desc.ID)
		}
	}
	_, err := w.Write(b)
	return err
}

// gaugeFamily writes one gauge family: its HELP and TYPE lines before
// its first series, none when it has no series.
type gaugeFamily struct {
	name, help string
	started    bool
}

// series appends one sample line, name{k="v",...} value, after the
// family's header the first time.
func (f *gaugeFamily) series(b []byte, v float64, labels ...string) []byte {
	if !f.started {
		f.started = true
		b = append(b, "# HELP "...)
		b = append(b, f.name...)
		b = append(b, ' ')
		b = append(b, f.help...)
		b = append(b, "\n# TYPE "...)
		b = append(b, f.name...)
		b = append(b, " gauge\n"...)
	}
	b = append(b, f.name...)
	b = append(b, '{')
	for i := 0; i+1 < len(labels); i += 2 {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, labels[i]...)
		b = append(b, `="`...)
		b = appendLabelValue(b, labels[i+1])
		b = append(b, '"')
	}
	b = append(b, "} "...)
	return append(appendSample(b, v), '\n')
}

// appendLabelValue appends a label value escaped as the text format
// wants (a backslash, a double quote, a line feed), in valid UTF-8: a
// label or an enum member from an adapter may be anything.
func appendLabelValue(b []byte, v string) []byte {
	for _, r := range strings.ToValidUTF8(v, "\uFFFD") {
		switch r {
		case '\\':
			b = append(b, `\\`...)
		case '"':
			b = append(b, `\"`...)
		case '\n':
			b = append(b, `\n`...)
		default:
			b = utf8.AppendRune(b, r)
		}
	}
	return b
}

// appendSample appends a sample's value: plain decimals where they read
// well (a Unix time, a count), the shortest form otherwise; NaN and
// ±Inf as the text format spells them.
func appendSample(b []byte, v float64) []byte {
	if a := math.Abs(v); v == 0 || (a >= 1e-4 && a < 1e15) {
		return strconv.AppendFloat(b, v, 'f', -1, 64)
	}
	return strconv.AppendFloat(b, v, 'g', -1, 64)
}

func boolFloat(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
