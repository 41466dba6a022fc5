package jsonrpc

import (
	"bytes"
	"encoding/json"
	"testing"
	"unicode/utf8"

	"github.com/openhal/gateway/adapterproto/reference"
)

var fuzzSeeds = []string{
	smallRequest,
	`{"jsonrpc":"2.0","id":"x","result":{}}`,
	`{"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"no","data":{"reason":"x"}}}`,
	`{"jsonrpc":"2.0","\u0069d":1,"method":"hal\/read","params":{"a":[1,2.5e3,"\u00e9",true,null]}}`,
	`{"jsonrpc":"2.0","method":"m","params":{"a":1,"\u0061":2}}`,
	`[{"jsonrpc":"2.0","method":"m"}]`,
	"{\"jsonrpc\":\"2.0\",\"method\":\"m\",\"params\":{\n\"a\" : 1\r\n}}",
	`{"jsonrpc":"2.0","id":18446744073709551616,"result":{}}`,
	nest(70, "1"),
}

func addSeeds(f *testing.F) {
	for _, fr := range reference.Frames() {
		f.Add(fr.Bytes)
	}
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
}

// sameCompact compares raw values after removing insignificant space,
// which re-encoding may do.
func sameCompact(a, b []byte) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	var ca, cb bytes.Buffer
	if json.Compact(&ca, a) != nil || json.Compact(&cb, b) != nil {
		return false
	}
	return bytes.Equal(ca.Bytes(), cb.Bytes())
}

func sameDecoded(a, b Message) bool {
	if !bytes.Equal(a.ID, b.ID) || a.Method != b.Method || !sameCompact(a.Params, b.Params) || !sameCompact(a.Result, b.Result) {
		return false
	}
	if a.Error == nil || b.Error == nil {
		return a.Error == b.Error
	}
	ad, _ := a.Error.Data.(json.RawMessage)
	bd, _ := b.Error.Data.(json.RawMessage)
	return a.Error.Code == b.Error.Code && a.Error.Message == b.Error.Message && sameCompact(ad, bd)
}

func FuzzDecodeHAL(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		m, e := DecodeHAL(b)
		// Differential check of the syntax against encoding/json.
		valid := json.Valid(b)
		if e != nil && e.Reason() == ReasonParseError && valid {
			t.Fatalf("parse_error for JSON that encoding/json accepts: %q", b)
		}
		if !valid && utf8.Valid(b) && (e == nil || (e.Reason() != ReasonParseError && e.Reason() != ReasonTooDeep)) {
			t.Fatalf("%q is not JSON, but DecodeHAL says %v", b, e)
		}
		if e != nil {
			if e.Code != CodeParseError && e.Code != CodeInvalidRequest || e.Reason() == "" {
				t.Fatalf("error without a reason: %v", e)
			}
			return
		}
		out, err := appendMessage(nil, m)
		if err != nil {
			t.Fatalf("re-encode %s: %v", show(m), err)
		}
		again, e := DecodeHAL(out)
		if e != nil {
			t.Fatalf("re-encoded %q does not decode: %v (%s)", out, e, e.Reason())
		}
		if !sameDecoded(m, again) {
			t.Fatalf("round trip changed the message:\n%s\n%s", show(m), show(again))
		}
	})
}

func FuzzDecodeAdapter(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := DecodeAdapter(b)
		if err != nil {
			if _, ok := err.(*Violation); !ok && err != ErrEmptyLine {
				t.Fatalf("error neither a Violation nor ErrEmptyLine: %v", err)
			}
			return
		}
		// What the adapter rules accept, the HAL rules accept alike.
		if h, e := DecodeHAL(b); e != nil || !sameMessage(h, m) {
			t.Fatalf("adapter accepts %q as %s, HAL says %s, %v", b, show(m), show(h), e)
		}
		if m.ID != nil {
			if _, ok := ParseUint64ID(m.ID); !ok {
				t.Fatalf("accepted id %s", m.ID)
			}
		}
		out, err := appendMessage(nil, m)
		if err != nil {
			t.Fatalf("re-encode %s: %v", show(m), err)
		}
		if bytes.ContainsAny(out, "\n\x00") {
			t.Fatalf("re-encoded frame has a newline or NUL: %q", out)
		}
		again, err := DecodeAdapter(out)
		if err != nil {
			t.Fatalf("re-encoded %q does not decode: %v", out, err)
		}
		if !sameDecoded(m, again) {
			t.Fatalf("round trip changed the message:\n%s\n%s", show(m), show(again))
		}
	})
}
