package jsonrpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unsafe"
)

const smallRequest = `{"jsonrpc":"2.0","id":7,"method":"hal/read","params":{"device":"sim.led"}}`

// nest returns n nested arrays around v.
func nest(n int, v string) string {
	return strings.Repeat("[", n) + v + strings.Repeat("]", n)
}

// bigObject returns an object with n distinct keys, then extra members.
func bigObject(n int, extra string) string {
	var b strings.Builder
	b.WriteString("{")
	for i := range n {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(`"k` + strings.Repeat("x", i) + `":1`)
	}
	b.WriteString(extra + "}")
	return b.String()
}

// wideAndDeep returns levels objects nested in one another, each with 15
// keys of its own, and extra members in the innermost: more keys open at
// once than the scanner keeps in its array.
func wideAndDeep(levels int, extra string) string {
	inner := bigObject(15, extra)
	for range levels - 1 {
		inner = bigObject(15, `,"in":`+inner)
	}
	return inner
}

func TestDecodeHALAccepts(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     Message
	}{
		{"request", smallRequest,
			Message{ID: raw(`7`), Method: "hal/read", Params: raw(`{"device":"sim.led"}`)}},
		{"20-digit id kept as digits", `{"jsonrpc":"2.0","id":12345678901234567890,"method":"hal/ping"}`,
			Message{ID: raw(`12345678901234567890`), Method: "hal/ping"}},
		{"30-digit id", `{"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"m"}`,
			Message{ID: raw(`123456789012345678901234567890`), Method: "m"}},
		{"negative id", `{"jsonrpc":"2.0","id":-5,"method":"m"}`, Message{ID: raw(`-5`), Method: "m"}},
		{"zero id", `{"jsonrpc":"2.0","id":0,"method":"m"}`, Message{ID: raw(`0`), Method: "m"}},
		{"string id kept with its escapes", `{"jsonrpc":"2.0","id":"a\u0062","method":"m"}`,
			Message{ID: raw(`"a\u0062"`), Method: "m"}},
		{"notification", `{"jsonrpc":"2.0","method":"hal/initialized"}`, Message{Method: "hal/initialized"}},
		{"whitespace everywhere", " \t{ \"jsonrpc\" : \"2.0\" ,\n\"method\" : \"m\" , \"params\" : { \"a\" : [ 1 , 2 ] } }\r\n ",
			Message{Method: "m", Params: raw(`{ "a" : [ 1 , 2 ] }`)}},
		{"unknown top-level fields ignored", `{"jsonrpc":"2.0","method":"m","x":[{"y":null}],"ID":5}`, Message{Method: "m"}},
		{"escaped key and values", `{"jsonrpc":"2\u002e0","\u0069d":1,"method":"hal\/read"}`,
			Message{ID: raw(`1`), Method: "hal/read"}},
		{"same key in sibling and nested objects", `{"jsonrpc":"2.0","method":"m","params":{"a":{"a":1},"b":{"a":2},"c":[{"a":1},{"a":2}]}}`,
			Message{Method: "m", Params: raw(`{"a":{"a":1},"b":{"a":2},"c":[{"a":1},{"a":2}]}`)}},
		{"many keys", `{"jsonrpc":"2.0","method":"m","params":` + bigObject(40, "") + `}`,
			Message{Method: "m", Params: raw(bigObject(40, ""))}},
		{"many keys open at once", `{"jsonrpc":"2.0","method":"m","params":` + wideAndDeep(6, "") + `}`,
			Message{Method: "m", Params: raw(wideAndDeep(6, ""))}},
		{"depth 64", `{"jsonrpc":"2.0","method":"m","params":{"a":` + nest(62, "1") + `}}`,
			Message{Method: "m", Params: raw(`{"a":` + nest(62, "1") + `}`)}},
		{"all the scalars", `{"jsonrpc":"2.0","method":"m","params":{"a":[true,false,null,-0.5e+3,1E2,"\"\\\/\b\f\n\r\t\u00e9"]}}`,
			Message{Method: "m", Params: raw(`{"a":[true,false,null,-0.5e+3,1E2,"\"\\\/\b\f\n\r\t\u00e9"]}`)}},
		{"UTF-8 in strings", `{"jsonrpc":"2.0","method":"é✓😀"}`, Message{Method: "é✓😀"}},
		{"response with result", `{"jsonrpc":"2.0","id":"x","result":{}}`, Message{ID: raw(`"x"`), Result: raw(`{}`)}},
		{"response with error", `{"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"no","data":{"reason":"x"},"extra":1}}`,
			Message{ID: raw(`3`), Error: &Error{Code: -32601, Message: "no", Data: raw(`{"reason":"x"}`)}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, e := DecodeHAL([]byte(tc.in))
			if e != nil {
				t.Fatalf("DecodeHAL(%s) = error %v (%s)", tc.in, e, e.Reason())
			}
			if !sameMessage(got, tc.want) {
				t.Errorf("DecodeHAL(%s)\n got %s\nwant %s", tc.in, show(got), show(tc.want))
			}
		})
	}
}

func TestDecodeHALRejects(t *testing.T) {
	const pre = `{"jsonrpc":"2.0",`
	for _, tc := range []struct {
		name, in string
		code     int64
		reason   string
	}{
		{"empty", ``, CodeParseError, "parse_error"},
		{"spaces", `  `, CodeParseError, "parse_error"},
		{"truncated", `{"jsonrpc":"2.0","id":1`, CodeParseError, "parse_error"},
		{"trailing comma", pre + `"method":"m",}`, CodeParseError, "parse_error"},
		{"two values", pre + `"method":"m"} {}`, CodeParseError, "parse_error"},
		{"leading zero", pre + `"id":01,"method":"m"}`, CodeParseError, "parse_error"},
		{"bare dot", pre + `"id":1.,"method":"m"}`, CodeParseError, "parse_error"},
		{"bad exponent", pre + `"id":1e,"method":"m"}`, CodeParseError, "parse_error"},
		{"bad escape", pre + `"method":"\x"}`, CodeParseError, "parse_error"},
		{"short unicode escape", pre + `"method":"\u12"}`, CodeParseError, "parse_error"},
		{"raw control char", pre + "\"method\":\"a\tb\"}", CodeParseError, "parse_error"},
		{"raw NUL", pre + "\"method\":\"a\x00b\"}", CodeParseError, "parse_error"},
		{"bad literal", pre + `"method":"m","params":{"a":tru}}`, CodeParseError, "parse_error"},
		{"single quotes", `{'jsonrpc':'2.0'}`, CodeParseError, "parse_error"},
		{"missing colon", pre + `"method" "m"}`, CodeParseError, "parse_error"},
		{"unclosed array", pre + `"method":"m","params":{"a":[1,2}}`, CodeParseError, "parse_error"},
		{"mismatched close", pre + `"method":"m","params":{"a":[1,2}]}`, CodeParseError, "parse_error"},
		{"syntax error after a duplicate", pre + `"method":"m","method":"m",}`, CodeParseError, "parse_error"},
		{"invalid UTF-8", pre + "\"method\":\"\xff\"}", CodeParseError, "invalid_utf8"},
		{"overlong UTF-8", pre + "\"method\":\"\xc0\xaf\"}", CodeParseError, "invalid_utf8"},
		{"UTF-8 surrogate", pre + "\"method\":\"\xed\xa0\x80\"}", CodeParseError, "invalid_utf8"},
		{"truncated UTF-8", pre + "\"method\":\"\xe2\x9c\"}", CodeParseError, "invalid_utf8"},
		{"empty batch", `[]`, CodeInvalidRequest, "batch"},
		{"batch", `[` + smallRequest + `,` + smallRequest + `]`, CodeInvalidRequest, "batch"},
		{"number", `42`, CodeInvalidRequest, "not_object"},
		{"string", `"hal/ping"`, CodeInvalidRequest, "not_object"},
		{"null", `null`, CodeInvalidRequest, "not_object"},
		{"no jsonrpc", `{"id":1,"method":"m"}`, CodeInvalidRequest, "bad_jsonrpc"},
		{"jsonrpc 1.0", `{"jsonrpc":"1.0","id":1,"method":"m"}`, CodeInvalidRequest, "bad_jsonrpc"},
		{"jsonrpc number", `{"jsonrpc":2.0,"id":1,"method":"m"}`, CodeInvalidRequest, "bad_jsonrpc"},
		{"jsonrpc 2.0 with spaces", `{"jsonrpc":"2.0 ","id":1,"method":"m"}`, CodeInvalidRequest, "bad_jsonrpc"},
		{"id null", pre + `"id":null,"method":"m"}`, CodeInvalidRequest, "bad_id"},
		{"id fraction", pre + `"id":1.5,"method":"m"}`, CodeInvalidRequest, "bad_id"},
		{"id 1.0", pre + `"id":1.0,"method":"m"}`, CodeInvalidRequest, "bad_id"},
		{"id exponent", pre + `"id":1e3,"method":"m"}`, CodeInvalidRequest, "bad_id"},
		{"id true", pre + `"id":true,"method":"m"}`, CodeInvalidRequest, "bad_id"},
		{"id object", pre + `"id":{},"method":"m"}`, CodeInvalidRequest, "bad_id"},
		{"id array", pre + `"id":[1],"method":"m"}`, CodeInvalidRequest, "bad_id"},
		{"response without id", pre + `"result":{}}`, CodeInvalidRequest, "bad_id"},
		{"method number", pre + `"id":1,"method":5}`, CodeInvalidRequest, "bad_method"},
		{"method null", pre + `"id":1,"method":null}`, CodeInvalidRequest, "bad_method"},
		{"method empty", pre + `"id":1,"method":""}`, CodeInvalidRequest, "bad_method"},
		{"no method no result no error", pre + `"id":1}`, CodeInvalidRequest, "bad_method"},
		{"params array", pre + `"id":1,"method":"m","params":[1]}`, CodeInvalidRequest, "params_not_object"},
		{"params string", pre + `"id":1,"method":"m","params":"x"}`, CodeInvalidRequest, "params_not_object"},
		{"params null", pre + `"id":1,"method":"m","params":null}`, CodeInvalidRequest, "params_not_object"},
		{"result array", pre + `"id":1,"result":[]}`, CodeInvalidRequest, "params_not_object"},
		{"error not an object", pre + `"id":1,"error":"no"}`, CodeInvalidRequest, "bad_error"},
		{"error without code", pre + `"id":1,"error":{"message":"no"}}`, CodeInvalidRequest, "bad_error"},
		{"duplicate top-level key", pre + `"id":1,"id":2,"method":"m"}`, CodeInvalidRequest, "duplicate_key"},
		{"duplicate jsonrpc", pre + `"jsonrpc":"2.0","method":"m"}`, CodeInvalidRequest, "duplicate_key"},
		{"duplicate nested key", pre + `"method":"m","params":{"a":[{"b":1,"b":2}]}}`, CodeInvalidRequest, "duplicate_key"},
		{"duplicate by escape", pre + `"method":"m","params":{"a":1,"\u0061":2}}`, CodeInvalidRequest, "duplicate_key"},
		{"duplicate both escaped", pre + `"method":"m","params":{"\u0061":1,"\u0061":2}}`, CodeInvalidRequest, "duplicate_key"},
		{"duplicate in a large object", pre + `"method":"m","params":` + bigObject(40, `,"kxxx":2`) + `}`, CodeInvalidRequest, "duplicate_key"},
		{"duplicate after a nested object", pre + `"method":"m","params":{"a":1,"o":{"b":1,"c":{}},"a":2}}`, CodeInvalidRequest, "duplicate_key"},
		{"duplicate after nested object in a large object", pre + `"method":"m","params":` + bigObject(20, `,"o":{"kx":1},"kx":1`) + `}`, CodeInvalidRequest, "duplicate_key"},
		{"duplicate with many keys open", pre + `"method":"m","params":` + wideAndDeep(6, `,"kx":2`) + `}`, CodeInvalidRequest, "duplicate_key"},
		{"depth 65", pre + `"method":"m","params":{"a":` + nest(63, "1") + `}}`, CodeInvalidRequest, "too_deep"},
		{"10,000 deep in params", pre + `"method":"m","params":{"a":` + nest(10000, "1") + `}}`, CodeInvalidRequest, "too_deep"},
		{"10,000 deep unclosed", strings.Repeat("[", 10000), CodeInvalidRequest, "too_deep"},
		{"10,000 deep objects", strings.Repeat(`{"a":`, 10000), CodeInvalidRequest, "too_deep"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, e := DecodeHAL([]byte(tc.in))
			if e == nil {
				t.Fatalf("DecodeHAL(%.80s) = %s, want error %d %s", tc.in, show(m), tc.code, tc.reason)
			}
			if e.Code != tc.code || e.Reason() != tc.reason {
				t.Errorf("DecodeHAL(%.80s) = error %d %q (%s), want %d %q", tc.in, e.Code, e.Reason(), e.Message, tc.code, tc.reason)
			}
			// The error is ready to send with "id": null.
			b := AppendError(nil, nil, e)
			want := `{"jsonrpc":"2.0","id":null,"error":{"code":` + itoa(tc.code) + `,"message":` + quote(e.Message) + `,"data":{"reason":"` + tc.reason + `"}}}`
			if string(b) != want {
				t.Errorf("AppendError = %s\nwant %s", b, want)
			}
		})
	}
}

func TestDecodeAdapterAccepts(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     Message
	}{
		{"request", `{"jsonrpc":"2.0","id":3,"method":"device.read","params":{"device":"x"}}`,
			Message{ID: raw(`3`), Method: "device.read", Params: raw(`{"device":"x"}`)}},
		{"request without params", `{"jsonrpc":"2.0","id":3,"method":"ping"}`, Message{ID: raw(`3`), Method: "ping"}},
		{"largest id", `{"jsonrpc":"2.0","id":18446744073709551615,"method":"ping"}`,
			Message{ID: raw(`18446744073709551615`), Method: "ping"}},
		{"id 0", `{"jsonrpc":"2.0","id":0,"result":{}}`, Message{ID: raw(`0`), Result: raw(`{}`)}},
		{"notification", `{"jsonrpc":"2.0","method":"value.publish","params":{"device":"t","value":1}}`,
			Message{Method: "value.publish", Params: raw(`{"device":"t","value":1}`)}},
		{"method of 64 characters", `{"jsonrpc":"2.0","method":"` + strings.Repeat("aZ9._-", 10) + `abcd"}`,
			Message{Method: strings.Repeat("aZ9._-", 10) + "abcd"}},
		{"unknown fields ignored", `{"jsonrpc":"2.0","id":1,"result":{"a":1},"trace":{"x":[1,2]}}`,
			Message{ID: raw(`1`), Result: raw(`{"a":1}`)}},
		{"error response", `{"jsonrpc":"2.0","id":9,"error":{"code":-32024,"message":"cancelled"}}`,
			Message{ID: raw(`9`), Error: &Error{Code: -32024, Message: "cancelled"}}},
		{"error with data and extra members", `{"jsonrpc":"2.0","id":9,"error":{"x":true,"data":{"n":123456789012345678901234},"message":"m\u00e9","code":-9223372036854775808}}`,
			Message{ID: raw(`9`), Error: &Error{Code: -9223372036854775808, Message: "mé", Data: raw(`{"n":123456789012345678901234}`)}}},
		{"carriage return is whitespace", "{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}\r",
			Message{ID: raw(`2`), Result: raw(`{}`)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := DecodeAdapter([]byte(tc.in))
			if err != nil {
				t.Fatalf("DecodeAdapter(%s) = %v", tc.in, err)
			}
			if !sameMessage(got, tc.want) {
				t.Errorf("DecodeAdapter(%s)\n got %s\nwant %s", tc.in, show(got), show(tc.want))
			}
		})
	}
}

func TestDecodeAdapterRejects(t *testing.T) {
	const pre = `{"jsonrpc":"2.0",`
	for _, tc := range []struct{ name, in, reason string }{
		{"NUL", pre + "\"id\":1,\"result\":{}}\x00", "nul"},
		{"NUL in a string", pre + "\"method\":\"a\x00\"}", "nul"},
		{"invalid UTF-8", pre + "\"method\":\"m\",\"params\":{\"a\":\"\xfe\"}}", "invalid_utf8"},
		{"spaces", ` `, "not_json"},
		{"not JSON", `hello`, "not_json"},
		{"truncated", pre + `"id":1`, "not_json"},
		{"leading zero id", pre + `"id":01,"result":{}}`, "not_json"},
		{"array", `[` + pre + `"method":"m"}]`, "array"},
		{"number", `1`, "not_object"},
		{"no jsonrpc", `{"id":1,"result":{}}`, "bad_jsonrpc"},
		{"jsonrpc 2", `{"jsonrpc":"2","id":1,"result":{}}`, "bad_jsonrpc"},
		{"id too large", pre + `"id":18446744073709551616,"result":{}}`, "bad_id"},
		{"id 21 digits", pre + `"id":100000000000000000000,"result":{}}`, "bad_id"},
		{"id negative", pre + `"id":-1,"result":{}}`, "bad_id"},
		{"id minus zero", pre + `"id":-0,"result":{}}`, "bad_id"},
		{"id 1.0", pre + `"id":1.0,"result":{}}`, "bad_id"},
		{"id exponent", pre + `"id":1e2,"result":{}}`, "bad_id"},
		{"id string", pre + `"id":"1","result":{}}`, "bad_id"},
		{"id null", pre + `"id":null,"result":{}}`, "bad_id"},
		{"response without id", pre + `"result":{}}`, "bad_id"},
		{"method empty", pre + `"id":1,"method":""}`, "bad_method"},
		{"method 65 characters", pre + `"method":"` + strings.Repeat("a", 65) + `"}`, "bad_method"},
		{"method with a space", pre + `"method":"device read"}`, "bad_method"},
		{"method with a slash", pre + `"method":"hal/read"}`, "bad_method"},
		{"method not ASCII", pre + `"method":"pïng"}`, "bad_method"},
		{"method number", pre + `"method":5}`, "bad_method"},
		{"method with result", pre + `"id":1,"method":"m","result":{}}`, "method_with_result"},
		{"method with error", pre + `"id":1,"method":"m","error":{"code":1,"message":""}}`, "method_with_result"},
		{"params array", pre + `"id":1,"method":"m","params":[]}`, "params_not_object"},
		{"params null", pre + `"method":"m","params":null}`, "params_not_object"},
		{"result array", pre + `"id":1,"result":[]}`, "result_not_object"},
		{"result null", pre + `"id":1,"result":null}`, "result_not_object"},
		{"result and error", pre + `"id":1,"result":{},"error":{"code":1,"message":"x"}}`, "both_result_and_error"},
		{"neither result nor error", pre + `"id":1}`, "neither_result_nor_error"},
		{"error string", pre + `"id":1,"error":"broken"}`, "bad_error"},
		{"error without code", pre + `"id":1,"error":{"message":"x"}}`, "bad_error"},
		{"error without message", pre + `"id":1,"error":{"code":1}}`, "bad_error"},
		{"error code fraction", pre + `"id":1,"error":{"code":1.5,"message":"x"}}`, "bad_error"},
		{"error code exponent", pre + `"id":1,"error":{"code":1e2,"message":"x"}}`, "bad_error"},
		{"error code string", pre + `"id":1,"error":{"code":"1","message":"x"}}`, "bad_error"},
		{"error code overflow", pre + `"id":1,"error":{"code":9223372036854775808,"message":"x"}}`, "bad_error"},
		{"error message number", pre + `"id":1,"error":{"code":1,"message":5}}`, "bad_error"},
		{"duplicate key", pre + `"id":1,"result":{"a":1,"a":1}}`, "duplicate_key"},
		{"too deep", pre + `"id":1,"result":{"a":` + nest(10000, "") + `}}`, "too_deep"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := DecodeAdapter([]byte(tc.in))
			var v *Violation
			if !errors.As(err, &v) {
				t.Fatalf("DecodeAdapter(%.80q) = %s, %v; want violation %s", tc.in, show(m), err, tc.reason)
			}
			if v.Reason != tc.reason {
				t.Errorf("DecodeAdapter(%.80q) = violation %v, want %s", tc.in, v, tc.reason)
			}
		})
	}
}

func TestDecodeAdapterEmptyLine(t *testing.T) {
	if _, err := DecodeAdapter(nil); err != ErrEmptyLine {
		t.Errorf("DecodeAdapter(nil) = %v, want ErrEmptyLine", err)
	}
	if _, err := DecodeAdapter([]byte{}); err != ErrEmptyLine {
		t.Errorf("DecodeAdapter(\"\") = %v, want ErrEmptyLine", err)
	}
}

// TestDecodeOwnsBytes checks that a Message stays whole when the buffer it
// came from is reused, as a LineReader's is.
func TestDecodeOwnsBytes(t *testing.T) {
	buf := []byte(`{"jsonrpc":"2.0","id":42,"error":{"code":1,"message":"m","data":[1]},"params":{"p":1}}`)
	m, err := DecodeAdapter(buf)
	if err != nil {
		t.Fatal(err)
	}
	h, e := DecodeHAL(buf)
	if e != nil {
		t.Fatal(e)
	}
	for i := range buf {
		buf[i] = 'X'
	}
	for _, m := range []Message{m, h} {
		if string(m.ID) != "42" || string(m.Params) != `{"p":1}` || string(m.Error.Data.(json.RawMessage)) != "[1]" {
			t.Errorf("message changed with its buffer: %s", show(m))
		}
	}
}

func TestParseUint64ID(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want uint64
		ok   bool
	}{
		{"1", 1, true}, {"0", 0, true}, {"18446744073709551615", 1<<64 - 1, true},
		{"18446744073709551616", 0, false}, {"99999999999999999999", 0, false},
		{"", 0, false}, {"-1", 0, false}, {"1.0", 0, false}, {"01", 0, false},
		{`"1"`, 0, false}, {"1e2", 0, false}, {" 1", 0, false},
	} {
		got, ok := ParseUint64ID(json.RawMessage(tc.in))
		if got != tc.want || ok != tc.ok {
			t.Errorf("ParseUint64ID(%q) = %d, %v; want %d, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
	if _, ok := ParseUint64ID(nil); ok {
		t.Error("ParseUint64ID(nil) ok")
	}
}

func TestMessageKinds(t *testing.T) {
	for _, tc := range []struct {
		m                    Message
		req, notif, response bool
	}{
		{Message{ID: raw("1"), Method: "m"}, true, false, false},
		{Message{Method: "m"}, false, true, false},
		{Message{ID: raw("1"), Result: raw("{}")}, false, false, true},
	} {
		if tc.m.IsRequest() != tc.req || tc.m.IsNotification() != tc.notif || tc.m.IsResponse() != tc.response {
			t.Errorf("%s: request %v notification %v response %v", show(tc.m), tc.m.IsRequest(), tc.m.IsNotification(), tc.m.IsResponse())
		}
	}
}

func TestViolationError(t *testing.T) {
	if got := (&Violation{Reason: "nul"}).Error(); got != "adapter protocol violation: nul" {
		t.Error(got)
	}
	if got := (&Violation{Reason: "bad_id", Detail: "x"}).Error(); got != "adapter protocol violation: bad_id: x" {
		t.Error(got)
	}
	if got := (&Error{Code: -32601, Message: "no"}).Error(); got != "jsonrpc error -32601: no" {
		t.Error(got)
	}
}

func TestEachMember(t *testing.T) {
	m, err := DecodeHAL([]byte(`{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":1,"b\u0063":{"x":[1,"}"]},"d":"s"}}`))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	EachMember(m.Params, func(k, v []byte) bool {
		got = append(got, string(k)+"="+string(v))
		return true
	})
	if s := strings.Join(got, " "); s != `a=1 bc={"x":[1,"}"]} d="s"` {
		t.Errorf("members %s", s)
	}
	n := 0
	EachMember(m.Params, func(k, v []byte) bool { n++; return false })
	if n != 1 {
		t.Errorf("walk went on after false: %d", n)
	}
}

// A method the server names comes back as its very string; others, and
// names with escapes, decode as DecodeHAL decodes them.
func TestDecodeHALNamed(t *testing.T) {
	names := map[string]string{"hal/read": "hal/read"}
	for _, tc := range []struct{ msg, method string }{
		{`{"jsonrpc":"2.0","id":1,"method":"hal/read"}`, "hal/read"},
		{`{"jsonrpc":"2.0","id":1,"method":"hal\/read"}`, "hal/read"},
		{`{"jsonrpc":"2.0","id":1,"method":"hal/write"}`, "hal/write"},
	} {
		m, err := DecodeHALNamed([]byte(tc.msg), names)
		if err != nil || m.Method != tc.method {
			t.Errorf("%s: method %q, error %v; want %q", tc.msg, m.Method, err, tc.method)
		}
	}
	if a := testing.AllocsPerRun(100, func() {
		m, _ := DecodeHALNamed([]byte(`{"jsonrpc":"2.0","id":1,"method":"hal/read","params":{}}`), names)
		if unsafe.StringData(m.Method) != unsafe.StringData(names["hal/read"]) {
			t.Fatal("a known method decoded into a string of its own")
		}
	}); a > 2 { // the message's bytes, and the copy of id and params
		t.Errorf("%v allocations, want at most 2", a)
	}
}

// DecodeHALView's id and params point into the message; Owned copies
// them, so that the buffer may be read into again.
func TestDecodeHALViewOwned(t *testing.T) {
	b := []byte(`{"jsonrpc":"2.0","id":7,"method":"hal/read","params":{"device":"a"}}`)
	m, err := DecodeHALView(b, nil)
	if err != nil {
		t.Fatal(err)
	}
	owned := m.Owned()
	copy(b, bytes.Repeat([]byte("x"), len(b))) // the next read
	if string(m.ID) == "7" {
		t.Error("the view's id did not change with its buffer: it is a copy")
	}
	if string(owned.ID) != "7" || string(owned.Params) != `{"device":"a"}` || owned.Method != "hal/read" {
		t.Errorf("owned %+v, want id 7 and the params", owned)
	}
	if a := testing.AllocsPerRun(100, func() {
		DecodeHALView([]byte(`{"jsonrpc":"2.0","id":1,"method":"hal/read","params":{}}`), map[string]string{"hal/read": "hal/read"})
	}); a > 1 { // the literal's bytes
		t.Errorf("%v allocations to decode a view, want at most 1", a)
	}
}
