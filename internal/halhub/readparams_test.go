package halhub

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/openhal/gateway/jsonrpc"
	"github.com/openhal/gateway/openhal"
)

// readParamsSeeds are params of hal/read, usual and not: each must decode
// as decodeParams decodes it.
var readParamsSeeds = []string{
	``, `{}`, `{"device":"sim.led"}`, `{"device":"sim.led","maxAgeMs":250}`,
	`{"maxAgeMs":0,"device":"a"}`, `{"device":"sim.led","maxAgeMs":-1}`,
	`{"device":"sim.led","maxAgeMs":1.5}`, `{"device":"sim.led","maxAgeMs":1e3}`,
	`{"device":"sim.led","maxAgeMs":99999999999999999999}`, `{"device":"sim.led","maxAgeMs":null}`,
	`{"device":"sim.led","maxAgeMs":"5"}`, `{"device":null}`, `{"device":5}`, `{"device":""}`,
	`{"device":"a\"b"}`, `{"device":"\u0073im.led"}`, `{"dev\u0069ce":"sim.led"}`,
	`{"device":"a","device":"b"}`, `{"Device":"sim.led"}`, `{"device":"sim.led","extra":1}`,
	`{"maxAgeMs":5}`, `{"device":"é"}`, ` { "device" : "sim.led" , "maxAgeMs" : -0 } `,
	`{"device":"sim.led","maxAgeMs":-9223372036854775808}`, `{"device":"sim.led","maxAgeMs":9223372036854775808}`,
}

// FuzzReadParams checks the fast decoder of hal/read's params against
// decodeParams, the reference: for params the message decoder accepts,
// both give the same params or the same error.
func FuzzReadParams(f *testing.F) {
	for _, s := range readParamsSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, params string) {
		msg := `{"jsonrpc":"2.0","id":1,"method":"hal/read","params":` + params + `}`
		if params == "" {
			msg = `{"jsonrpc":"2.0","id":1,"method":"hal/read"}`
		}
		m, perr := jsonrpc.DecodeHAL([]byte(msg))
		if perr != nil {
			return // never reaches a method
		}
		var fast, ref openhal.ReadParams
		last := "sim.led"
		ferr := decodeReadParams(m.Params, &fast, &last)
		rerr := decodeParams(m.Params, &ref)
		if !reflect.DeepEqual(errJSON(ferr), errJSON(rerr)) {
			t.Fatalf("params %s: error %s, decodeParams %s", params, errJSON(ferr), errJSON(rerr))
		}
		if rerr == nil && !reflect.DeepEqual(fast, ref) {
			t.Fatalf("params %s: %+v, decodeParams %+v", params, show(fast), show(ref))
		}
	})
}

func errJSON(e *jsonrpc.Error) string {
	if e == nil {
		return "none"
	}
	return string(jsonrpc.AppendError(nil, nil, e))
}

func show(p openhal.ReadParams) string {
	b, _ := json.Marshal(p)
	return string(b)
}

// The usual shapes take the fast path, at most one allocation; the others
// go to decodeParams.
func TestReadParamsUsual(t *testing.T) {
	for _, s := range []string{``, `{}`, `{"device":"sim.led"}`, `{"maxAgeMs":250,"device":"sim.led"}`} {
		var p openhal.ReadParams
		if !readParamsUsual(json.RawMessage(s), &p, nil) {
			t.Errorf("%s: not taken by the fast path", s)
		}
	}
	for _, s := range []string{`{"device":"a\"b"}`, `{"device":5}`, `{"device":"a","x":1}`, `{"device":"a","maxAgeMs":1.5}`, `{"maxAgeMs":1}`} {
		var p openhal.ReadParams
		if readParamsUsual(json.RawMessage(s), &p, nil) {
			t.Errorf("%s: taken by the fast path; decodeParams must explain it", s)
		}
	}
	params := json.RawMessage(`{"device":"sim.led"}`)
	if a := testing.AllocsPerRun(100, func() {
		var p openhal.ReadParams
		decodeReadParams(params, &p, nil)
	}); a > 1 {
		t.Errorf("%v allocations to decode {\"device\":\"sim.led\"}, want at most 1 (the id's string)", a)
	}
	last := ""
	if a := testing.AllocsPerRun(100, func() {
		var p openhal.ReadParams
		if decodeReadParams(params, &p, &last); p.Device != "sim.led" {
			t.Fatalf("device %q", p.Device)
		}
	}); a != 0 {
		t.Errorf("%v allocations to decode the device read last, want none", a)
	}
}
