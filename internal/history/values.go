package history

import (
	"encoding/json"
	"math"
)

// point is one quantity of a value: field is "" for a plain value, the
// member's name for an object's.
type point struct {
	field string
	kind  Kind
	v     float64
}

// pointsOf appends to ps the quantities of a device value as the
// registry carries it (what encoding/json decodes, or a Go device's own
// number types); none for a string or anything else.
func pointsOf(ps []point, v any) []point {
	if obj, ok := v.(map[string]any); ok {
		for name, m := range obj {
			if k, f, ok := scalar(m); ok {
				ps = append(ps, point{field: name, kind: k, v: f})
			}
		}
		return ps
	}
	if k, f, ok := scalar(v); ok {
		return append(ps, point{kind: k, v: f})
	}
	return ps
}

// scalar reads a number or a boolean (true is 1). NaN and infinities
// have no JSON form and are not kept.
func scalar(v any) (Kind, float64, bool) {
	var f float64
	switch x := v.(type) {
	case bool:
		if x {
			return KindBoolean, 1, true
		}
		return KindBoolean, 0, true
	case float64:
		f = x
	case float32:
		f = float64(x)
	case int:
		f = float64(x)
	case int64:
		f = float64(x)
	case int32:
		f = float64(x)
	case uint:
		f = float64(x)
	case uint64:
		f = float64(x)
	case uint32:
		f = float64(x)
	case json.Number:
		var err error
		if f, err = x.Float64(); err != nil {
			return "", 0, false
		}
	default:
		return "", 0, false
	}
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return "", 0, false
	}
	return KindNumber, f, true
}
