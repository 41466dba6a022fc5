package openhal

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"
	"time"
)

// reference is encoding/json's encoding of v (HTML escaping off, as the
// Hub's messages are encoded), without AppendJSON: what AppendJSON must
// match byte for byte.
func reference(v ValueResult) ([]byte, error) {
	type plain ValueResult // no methods
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(plain(v)); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

func checkAppend(t *testing.T, v ValueResult) {
	t.Helper()
	want, werr := reference(v)
	got, gerr := v.AppendJSON([]byte("prefix"))
	if (werr != nil) != (gerr != nil) {
		t.Fatalf("%#v: error %v, encoding/json %v", v, gerr, werr)
	}
	if werr != nil {
		if string(got) != "prefix" {
			t.Fatalf("%#v: on error the buffer became %q", v, got)
		}
		return
	}
	if !bytes.Equal(got, append([]byte("prefix"), want...)) {
		t.Fatalf("%#v:\n got %s\nwant %s", v, got[len("prefix"):], want)
	}
}

// AppendJSON writes what encoding/json writes, for every kind of value a
// device has, and fails where encoding/json fails.
func TestValueResultAppendJSON(t *testing.T) {
	ts := time.Date(2026, 12, 2, 6, 30, 0, 123456789, time.UTC)
	values := []any{nil, true, false, "", "a line", "quote\" back\\ tab\t nl\n ctl\x01 <html> & \u2028 é \xff",
		0.0, -0.0, 1.0, 42.5, -1e-7, 1e-6, 1e21, 123456789012345678.0, math.MaxFloat64, math.SmallestNonzeroFloat64,
		math.NaN(), math.Inf(1), 7, int64(-9), uint64(1 << 63), float32(1.5), uint8(3),
		map[string]any{"temperature": 20.5, "b": []any{1, "x"}}, json.RawMessage(`{ "a" : 1 }`), []int{1, 2}}
	times := []time.Time{ts, {}, ts.In(time.FixedZone("x", 5*3600+1800)), time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC),
		ts.In(time.FixedZone("far", 25*3600))}
	for _, val := range values {
		for _, tm := range times {
			for _, seq := range []uint64{0, 1, math.MaxUint64} {
				checkAppend(t, ValueResult{Device: "sim.led", Value: val, TS: tm, Seq: seq, DevSeq: seq / 2})
			}
		}
	}
	checkAppend(t, ValueResult{Device: "odd \"id\"\n", Value: 1.0, TS: ts})
}

func FuzzValueResultAppendJSON(f *testing.F) {
	f.Add("sim.led", 20.5, "line", int64(0), uint64(3), byte(0))
	f.Add("x\u2028", 1e-7, "\xff\x00", int64(-1), uint64(0), byte(1))
	f.Fuzz(func(t *testing.T, device string, num float64, str string, unixNano int64, seq uint64, kind byte) {
		var v any
		switch kind % 4 {
		case 0:
			v = num
		case 1:
			v = str
		case 2:
			v = kind%8 > 3
		case 3:
			v = map[string]any{str: num}
		}
		checkAppend(t, ValueResult{Device: device, Value: v, TS: time.Unix(0, unixNano).UTC(), Seq: seq, DevSeq: seq >> 3})
	})
}
