package jsonrpc

import (
	"encoding/json"
	"math"
	"strconv"
	"time"
)

// Appender is a value that appends its own JSON, byte for byte what
// encoding/json (HTML escaping off) would write for it, without
// reflection: the Hub's commonest answers and notifications (a device's
// value) implement it, so that encoding them costs no allocation.
type Appender interface {
	AppendJSON(dst []byte) ([]byte, error)
}

// AppendString appends s as a JSON string, as encoding/json writes it
// with HTML escaping off.
func AppendString(dst []byte, s string) []byte { return appendString(dst, s) }

// AppendValue appends v as encoding/json (HTML escaping off) would: the
// plain kinds of a device's value (nil, booleans, strings, numbers) here,
// anything else through encoding/json (a json.RawMessage too: compacted
// and checked, as a member of a struct is). On error dst is returned
// unchanged.
func AppendValue(dst []byte, v any) ([]byte, error) {
	switch x := v.(type) {
	case nil:
		return append(dst, "null"...), nil
	case bool:
		return strconv.AppendBool(dst, x), nil
	case string:
		return appendString(dst, x), nil
	case int:
		return strconv.AppendInt(dst, int64(x), 10), nil
	case int64:
		return strconv.AppendInt(dst, x, 10), nil
	case uint64:
		return strconv.AppendUint(dst, x, 10), nil
	case float64:
		if b, ok := appendFloat(dst, x); ok {
			return b, nil
		}
	}
	return encodeJSON(dst, v)
}

// appendFloat appends f as encoding/json writes a float64: the shortest
// decimal that reads back as f, in exponent form below 1e-6 and from 1e21
// on, with a one-digit negative exponent unpadded (1e-7, not 1e-07). NaN
// and the infinities have no JSON: false.
func appendFloat(dst []byte, f float64) ([]byte, bool) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return dst, false
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	dst = strconv.AppendFloat(dst, f, format, -1, 64)
	if n := len(dst); format == 'e' && n >= 4 && dst[n-4] == 'e' && dst[n-3] == '-' && dst[n-2] == '0' {
		dst[n-2] = dst[n-1]
		dst = dst[:n-1]
	}
	return dst, true
}

// AppendTime appends t as encoding/json writes a time.Time: RFC 3339
// with nanoseconds, quoted. A time that RFC 3339 cannot hold (a year
// outside 0–9999, a zone offset of a day or more) is an error, as it is
// for encoding/json; dst is then returned unchanged.
func AppendTime(dst []byte, t time.Time) ([]byte, error) {
	_, offset := t.Zone()
	if y := t.Year(); y < 0 || y > 9999 || offset <= -24*60*60 || offset >= 24*60*60 {
		b, err := json.Marshal(t) // encoding/json's own error
		if err != nil {
			return dst, err
		}
		return append(dst, b...), nil
	}
	dst = append(dst, '"')
	dst = t.AppendFormat(dst, time.RFC3339Nano)
	return append(dst, '"'), nil
}
