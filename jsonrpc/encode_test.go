package jsonrpc

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

type orderedParams struct {
	Zebra string `json:"zebra"`
	Apple int    `json:"apple"`
	Skip  string `json:"skip,omitempty"`
}

func TestAppend(t *testing.T) {
	mustEnc := func(b []byte, err error) string {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	for _, tc := range []struct{ name, got, want string }{
		{"request keeps struct field order",
			mustEnc(AppendRequest(nil, IntID(7), "hal/read", orderedParams{Zebra: "z", Apple: 1})),
			`{"jsonrpc":"2.0","id":7,"method":"hal/read","params":{"zebra":"z","apple":1}}`},
		{"request without params",
			mustEnc(AppendRequest(nil, IntID(1), "ping", nil)),
			`{"jsonrpc":"2.0","id":1,"method":"ping"}`},
		{"request with a string id",
			mustEnc(AppendRequest(nil, raw(`"a\"b"`), "m", struct{}{})),
			`{"jsonrpc":"2.0","id":"a\"b","method":"m","params":{}}`},
		{"HTML not escaped",
			mustEnc(AppendNotification(nil, "m", map[string]string{"a": "<b>&</b>"})),
			`{"jsonrpc":"2.0","method":"m","params":{"a":"<b>&</b>"}}`},
		{"notification without params",
			mustEnc(AppendNotification(nil, "initialized", nil)),
			`{"jsonrpc":"2.0","method":"initialized"}`},
		{"empty RawMessage params left out",
			mustEnc(AppendNotification(nil, "m", json.RawMessage(nil))),
			`{"jsonrpc":"2.0","method":"m"}`},
		{"RawMessage copied as is",
			mustEnc(AppendNotification(nil, "m", raw(`{ "b" : 1, "a":2 }`))),
			`{"jsonrpc":"2.0","method":"m","params":{ "b" : 1, "a":2 }}`},
		{"RawMessage with a line break compacted",
			mustEnc(AppendNotification(nil, "m", raw("{\"b\" : 1,\r\n \"s\":\"x\\ny\"}"))),
			`{"jsonrpc":"2.0","method":"m","params":{"b":1,"s":"x\ny"}}`},
		{"result",
			mustEnc(AppendResult(nil, raw(`12345678901234567890`), map[string]int{"b": 2, "a": 1})),
			`{"jsonrpc":"2.0","id":12345678901234567890,"result":{"a":1,"b":2}}`},
		{"nil result is {}",
			mustEnc(AppendResult(nil, IntID(2), nil)),
			`{"jsonrpc":"2.0","id":2,"result":{}}`},
		{"result with nil id",
			mustEnc(AppendResult(nil, nil, struct{}{})),
			`{"jsonrpc":"2.0","id":null,"result":{}}`},
		{"appends to dst",
			mustEnc(AppendResult([]byte("x\n"), IntID(2), raw(`{}`))),
			"x\n" + `{"jsonrpc":"2.0","id":2,"result":{}}`},
		{"error with data",
			string(AppendError(nil, IntID(3), &Error{Code: -32602, Message: "bad <x>", Data: map[string]any{"reason": "out_of_range"}})),
			`{"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":"bad <x>","data":{"reason":"out_of_range"}}}`},
		{"error without data, null id",
			string(AppendError(nil, nil, &Error{Code: -32700, Message: "parse error"})),
			`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}`},
		{"error with raw data",
			string(AppendError(nil, IntID(1), &Error{Code: 1, Message: "m", Data: raw(`{"n":123456789012345678901234}`)})),
			`{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"m","data":{"n":123456789012345678901234}}}`},
		{"unencodable data left out",
			string(AppendError(nil, IntID(1), &Error{Code: 1, Message: "m", Data: make(chan int)})),
			`{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"m"}}`},
		{"nil error",
			string(AppendError(nil, IntID(1), nil)),
			`{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"internal error"}}`},
		{"method escaped",
			mustEnc(AppendNotification(nil, "a\"\n\u2028", nil)),
			`{"jsonrpc":"2.0","method":"a\"\n\u2028"}`},
	} {
		if tc.got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.name, tc.got, tc.want)
		}
	}
}

func TestAppendFailures(t *testing.T) {
	dst := []byte("keep")
	if got, err := AppendRequest(dst, nil, "m", nil); err == nil || string(got) != "keep" {
		t.Errorf("AppendRequest without id = %q, %v; want an error and dst unchanged", got, err)
	}
	if got, err := AppendRequest(dst, IntID(1), "m", make(chan int)); err == nil || string(got) != "keep" {
		t.Errorf("AppendRequest(chan) = %q, %v; want an error and dst unchanged", got, err)
	}
	if got, err := AppendNotification(dst, "m", raw("{\n")); err == nil || string(got) != "keep" {
		t.Errorf("AppendNotification(broken raw) = %q, %v; want an error and dst unchanged", got, err)
	}
	if got, err := AppendResult(dst, IntID(1), func() {}); err == nil || string(got) != "keep" {
		t.Errorf("AppendResult(func) = %q, %v; want an error and dst unchanged", got, err)
	}
}

// TestAppendStringMatchesEncodingJSON checks the hand-written string
// encoder against encoding/json with HTML escaping off.
func TestAppendStringMatchesEncodingJSON(t *testing.T) {
	var all strings.Builder
	for c := range 0x80 {
		all.WriteByte(byte(c))
	}
	for _, s := range []string{
		"", "plain", all.String(), "é✓😀", "\u2028\u2029", "\xff", "a\xc0\xafb", "\xed\xa0\x80",
		"<script>&amp;</script>", "\x7f", "tab\there", "end\\",
	} {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(s); err != nil {
			t.Fatal(err)
		}
		want := strings.TrimSuffix(buf.String(), "\n")
		if got := string(appendString(nil, s)); got != want {
			t.Errorf("appendString(%q) = %s, want %s", s, got, want)
		}
	}
}

// TestRoundTrip encodes with the Append functions and decodes with both
// decoders.
func TestRoundTrip(t *testing.T) {
	req, _ := AppendRequest(nil, IntID(18446744073709551615), "device.write", map[string]any{"device": "x", "value": 1.5})
	notif, _ := AppendNotification(nil, "event", map[string]any{"seq": 1})
	res, _ := AppendResult(nil, IntID(4), map[string]any{"value": true})
	errResp := AppendError(nil, IntID(5), &Error{Code: -32003, Message: "denied", Data: map[string]any{"code": "E_ADAPTER_DENIED"}})
	for _, tc := range []struct {
		b    []byte
		want Message
	}{
		{req, Message{ID: raw("18446744073709551615"), Method: "device.write", Params: raw(`{"device":"x","value":1.5}`)}},
		{notif, Message{Method: "event", Params: raw(`{"seq":1}`)}},
		{res, Message{ID: raw("4"), Result: raw(`{"value":true}`)}},
		{errResp, Message{ID: raw("5"), Error: &Error{Code: -32003, Message: "denied", Data: raw(`{"code":"E_ADAPTER_DENIED"}`)}}},
	} {
		a, err := DecodeAdapter(tc.b)
		if err != nil || !sameMessage(a, tc.want) {
			t.Errorf("DecodeAdapter(%s) = %s, %v; want %s", tc.b, show(a), err, show(tc.want))
		}
		h, e := DecodeHAL(tc.b)
		if e != nil || !sameMessage(h, tc.want) {
			t.Errorf("DecodeHAL(%s) = %s, %v; want %s", tc.b, show(h), e, show(tc.want))
		}
	}
}

func TestIntID(t *testing.T) {
	for n, want := range map[uint64]string{0: "0", 1: "1", 1<<64 - 1: "18446744073709551615"} {
		if got := string(IntID(n)); got != want {
			t.Errorf("IntID(%d) = %s", n, got)
		}
	}
}

func TestErrorReason(t *testing.T) {
	if r := (&Error{Data: map[string]any{"reason": "x"}}).Reason(); r != "x" {
		t.Errorf("Reason = %q", r)
	}
	if r := (&Error{Data: raw(`{"reason":"x"}`)}).Reason(); r != "" {
		t.Errorf("Reason of raw data = %q, want \"\"", r)
	}
}
