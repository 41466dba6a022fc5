package halhub

import (
	"context"
	"io"
	"math"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/openhal/gateway/openhal"
)

// Bad input gets a clear error and changes nothing (openhal-0.1.md §1, §2,
// §9; docs/protocol.md). Every case runs over the real transports.

// Spec §2: a 10 MiB frame on WebSocket — far above the library's own read
// limit, which sits just above the Hub's — is answered by the Hub itself
// (-32600 too_large, id null) before the connection closes; the write it
// carried changes nothing, and other clients go on. (A frame just over the
// limit, and a far too long line on TCP, are in limits_test.go.)
func TestMessageFarTooLargeWS(t *testing.T) {
	t.Parallel()
	b := newBadBench(t)
	before := b.state(t)
	c := b.dialWS(t, "")
	c.init(b.testHub.admin)
	big := rawRequest("1", "hal/write", `{"device":"bench.led","value":true,"reason":"`+strings.Repeat("x", 10<<20)+`"}`)
	go c.send(big) // fails when the hub closes the connection mid-frame
	m := c.lastBeforeClose()
	wantError(t, m, -32600, "too_large", "", "larger than 262144 bytes")
	if string(m.ID) != "null" {
		t.Errorf("id %s, want null", m.ID)
	}
	c.waitClosed()
	b.unchanged(t, before)
}

// Spec §1 and docs/protocol.md: a message that is not valid UTF-8, not
// JSON (a raw NUL byte), nested deeper than the framing allows (10,000
// levels: no stack overflow) or that repeats a key is answered with
// "id": null and the reason, and the connection stays usable.
func TestBadFraming(t *testing.T) {
	deepArrays := strings.Repeat("[", 10_000) + strings.Repeat("]", 10_000)
	deepObjects := strings.Repeat(`{"a":`, 10_000) + "1" + strings.Repeat("}", 10_000)
	write := func(params string) string { return rawRequest("1", "hal/write", params) }
	cases := []struct {
		name, raw    string
		code         int64
		reason, word string
	}{
		{"invalid UTF-8 in a value", write("{\"device\":\"bench.led\",\"value\":\"\xff\"}"), -32700, "invalid_utf8", "UTF-8"},
		{"invalid UTF-8 in a key", write("{\"device\":\"bench.led\",\"val\xc3\x28ue\":true}"), -32700, "invalid_utf8", "UTF-8"},
		{"truncated UTF-8 sequence in a device id", write("{\"device\":\"bench.led\xe2\x82\",\"value\":true}"), -32700, "invalid_utf8", "UTF-8"},
		{"NUL byte in a string", write("{\"device\":\"bench.led\x00\",\"value\":true}"), -32700, "parse_error", "JSON"},
		{"NUL byte after the message", write(`{"device":"bench.led","value":true}`) + "\x00", -32700, "parse_error", "JSON"},
		{"a NUL byte alone", "\x00", -32700, "parse_error", "JSON"},
		{"10,000 nested arrays", deepArrays, -32600, "too_deep", "nested too deeply"},
		{"10,000 nested objects", deepObjects, -32600, "too_deep", "nested too deeply"},
		{"10,000 nested arrays in a value", write(`{"device":"bench.led","value":` + deepArrays + `}`), -32600, "too_deep", "nested too deeply"},
		{"10,000 nested objects in params", rawRequest("1", "hal/ping", deepObjects), -32600, "too_deep", "nested too deeply"},
		{"duplicate id", `{"jsonrpc":"2.0","id":1,"method":"hal/write","params":{"device":"bench.led","value":true},"id":2}`, -32600, "duplicate_key", "repeated"},
		{"duplicate method", `{"jsonrpc":"2.0","id":1,"method":"hal/ping","method":"hal/stop"}`, -32600, "duplicate_key", "repeated"},
		{"duplicate param", write(`{"device":"bench.led","value":true,"value":false}`), -32600, "duplicate_key", "repeated"},
		{"duplicate key deep in a value", write(`{"device":"bench.led","value":{"a":[{"b":1,"b":2}]}}`), -32600, "duplicate_key", "repeated"},
	}
	for _, tr := range bothTransports {
		t.Run(tr.name, func(t *testing.T) {
			t.Parallel()
			b := newBadBench(t)
			c := tr.dial(b.testHub, t)
			c.init(b.testHub.admin)
			before := b.state(t)
			for _, tc := range cases {
				c.sendRaw(tc.raw)
				m := c.next()
				wantError(t, m, tc.code, tc.reason, "", tc.word)
				if string(m.ID) != "null" {
					t.Errorf("%s: id %s, want null", tc.name, m.ID)
				}
				if t.Failed() {
					t.Fatalf("%s: got %s", tc.name, m.raw)
				}
				alive(t, c)
			}
			b.unchanged(t, before)
		})
	}
}

// Spec §1: the id is echoed exactly as received — a 20-digit integer stays
// those digits, a string keeps its escapes byte for byte — in results and
// in error answers alike, including an error the framing finds once the id
// is known to be good.
func TestIDsEchoedExactly(t *testing.T) {
	cases := []struct {
		name, id, method, params string
		code                     int64 // 0: a result
	}{
		{"20 digits", "12345678901234567890", "hal/ping", "", 0},
		{"20 digits, INVALID_PARAMS", "12345678901234567890", "hal/ping", `{"bogus":1}`, openhal.CodeInvalidParams},
		{"20 digits, DEVICE_NOT_FOUND", "98765432109876543210", "hal/read", `{"device":"bench.nope"}`, openhal.CodeDeviceNotFound},
		{"negative 20 digits, METHOD_NOT_FOUND", "-12345678901234567890", "hal/nope", "", openhal.CodeMethodNotFound},
		{"40 digits", "1234567890123456789012345678901234567890", "hal/ping", "", 0},
		{"minus zero", "-0", "hal/ping", "", 0},
		{"digits in a string", `"12345678901234567890"`, "hal/ping", "", 0},
		{"escapes", `"a\"b\\c\/d\u00e9\n\t\u0000\ud83d\ude00"`, "hal/ping", "", 0},
		{"escapes, INVALID_PARAMS", `"a\"b\\c\/d\u00e9\n\t\u0000\ud83d\ude00"`, "hal/read", `{}`, openhal.CodeInvalidParams},
		{"lone surrogate", `"\ud800"`, "hal/ping", "", 0},
	}
	for _, tr := range bothTransports {
		t.Run(tr.name, func(t *testing.T) {
			t.Parallel()
			b := newBadBench(t)
			c := tr.dial(b.testHub, t)
			c.init(b.testHub.admin)
			for _, tc := range cases {
				c.sendRaw(rawRequest(tc.id, tc.method, tc.params))
				checkEcho(t, tc.name, c.next(), tc.id, tc.code)
			}
			// Past the id, the framing answers with it.
			c.sendRaw(`{"jsonrpc":"1.0","id":12345678901234567890,"method":"hal/ping"}`)
			checkEcho(t, "bad jsonrpc", c.next(), "12345678901234567890", -32600)
			c.sendRaw(`{"jsonrpc":"2.0","id":"a\u0000\"","method":"hal/ping","params":[1]}`)
			checkEcho(t, "params not an object", c.next(), `"a\u0000\""`, -32600)
		})
	}
}

func checkEcho(t *testing.T, name string, m msg, id string, code int64) {
	t.Helper()
	if string(m.ID) != id || !strings.Contains(m.raw, `"id":`+id+`,`) {
		t.Errorf("%s: id %s in %s, want %s byte for byte", name, m.ID, m.raw, id)
	}
	switch {
	case code == 0 && m.Error != nil:
		t.Errorf("%s: got %s, want a result", name, m.raw)
	case code != 0 && (m.Error == nil || m.Error.Code != code):
		t.Errorf("%s: got %s, want code %d", name, m.raw, code)
	}
}

// docs/protocol.md: a number too large for a 64-bit float (1e400, 400
// digits) is INVALID_PARAMS out_of_range, never rounded to an infinity; a
// NUL escaped in a device id (valid JSON) names no device. Nothing
// changes. -0 and 1e-400 are numbers (0 once parsed) and are applied.
func TestHugeNumbersAndEscapedNUL(t *testing.T) {
	digits400 := "1" + strings.Repeat("0", 399)
	for _, tr := range bothTransports {
		t.Run(tr.name, func(t *testing.T) {
			t.Parallel()
			b := newBadBench(t)
			c := tr.dial(b.testHub, t)
			c.init(b.testHub.admin)
			before := b.state(t)
			call := func(method, params string) msg {
				c.sendRaw(rawRequest("7", method, params))
				return c.answer([]byte("7"))
			}
			for _, tc := range []struct{ device, value, word string }{
				{"bench.num", "1e400", "1e400"},
				{"bench.num", "-1e400", "-1e400"},
				{"bench.num", digits400, "(400 characters)"},
				{"bench.fan", "1e400", "1e400"},
			} {
				m := call("hal/write", `{"device":"`+tc.device+`","value":`+tc.value+`}`)
				wantError(t, m, openhal.CodeInvalidParams, "out_of_range", "-", tc.device, tc.word, "beyond the range of a 64-bit float")
				if m.Error != nil && m.Error.Data["device"] != tc.device {
					t.Errorf("got %s, want data.device %s", m.raw, tc.device)
				}
				if len(m.raw) > 512 {
					t.Errorf("the answer quotes the whole number: %s", m.raw)
				}
			}
			wantError(t, call("hal/read", `{"device":"bench.num","maxAgeMs":`+digits400+`}`), openhal.CodeInvalidParams, "out_of_range", "maxAgeMs", "params.maxAgeMs", "out of range")
			wantError(t, call("hal/write", `{"device":"bench.num","value":1,"timeoutMs":1e400}`), openhal.CodeInvalidParams, "wrong_type", "timeoutMs", "params.timeoutMs", "want an integer", "1e400")
			for _, method := range []string{"hal/read", "hal/devices/get"} {
				m := call(method, `{"device":"bench.led\u0000"}`)
				wantError(t, m, openhal.CodeDeviceNotFound, "device_not_found", "", `bench.led\x00`)
				if m.Error != nil && m.Error.Data["device"] != "bench.led\x00" {
					t.Errorf("got %s, want data.device with the NUL", m.raw)
				}
			}
			wantError(t, call("hal/write", `{"device":"bench.led\u0000","value":true}`), openhal.CodeDeviceNotFound, "device_not_found", "", `bench.led\x00`)
			b.unchanged(t, before)

			for i, v := range []string{"-0", "1e-400"} {
				m := call("hal/write", `{"device":"bench.num","value":`+v+`}`)
				if r := decodeResult(t, m); r["status"] != "applied" || r["value"] != 0.0 {
					t.Errorf("%s: got %s, want applied with value 0", v, m.raw)
				}
				if w := b.num.written(); len(w) != i+1 || w[i] != 0.0 {
					t.Errorf("%s: the device got %v, want 0", v, w)
				}
				if v := b.value(t, "bench.num"); v != 0.0 || math.IsInf(v.(float64), 0) {
					t.Errorf("registry holds %v", v)
				}
			}
		})
	}
}

// paramSpec is one param of a method and its JSON type.
type paramSpec struct {
	name, kind string
	required   bool
}

// wrongValues are values of a wrong JSON type for each kind of param
// (null is absent, see TestParamsNullIsAbsent).
var wrongValues = map[string][]string{
	"string":  {`5`, `true`, `{"a":1}`, `["a"]`},
	"bool":    {`"true"`, `1`, `{}`, `[]`},
	"int":     {`"5"`, `true`, `{}`, `[5]`, `1.5`, `1e3`},
	"strings": {`"bench"`, `5`, `true`, `{}`, `[5]`, `[["bench"]]`, `[null]`, `["bench",""]`},
}

// Spec §9, docs/protocol.md: every param of every method, of a wrong type,
// missing where required, or unknown, is INVALID_PARAMS with data.reason
// wrong_type, missing_param or unknown_param and data.param naming it;
// the message names the param. Nothing changes: no write, no stop, the
// pending confirmation stays pending, no effect in the audit log.
func TestParamsStrict(t *testing.T) {
	for _, tr := range bothTransports {
		t.Run(tr.name, func(t *testing.T) {
			t.Parallel()
			b := newBadBench(t)
			agent := b.as(t, "agent", openhal.ScopeControlLow)
			cid := `"` + pending(t, write(agent, "bench.heater", true)).ID + `"`
			c := tr.dial(b.testHub, t)
			c.init(b.testHub.admin)
			b.drainObs(t)
			before := b.state(t)
			n := 0
			check := func(method, params string, code int64, reason, param string, words ...string) {
				t.Helper()
				n++
				c.sendRaw(rawRequest("42", method, params))
				m := c.answer([]byte("42"))
				if wantError(t, m, code, reason, param, words...); t.Failed() {
					t.Fatalf("%s %s: got %s", method, params, m.raw)
				}
			}
			for _, mc := range []struct {
				method string
				base   map[string]string
				params []paramSpec
			}{
				{"hal/ping", nil, nil},
				{"hal/devices/list", nil, []paramSpec{{"tags", "strings", false}, {"kind", "string", false}}},
				{"hal/devices/get", map[string]string{"device": `"bench.led"`}, []paramSpec{{"device", "string", true}}},
				{"hal/read", map[string]string{"device": `"bench.led"`}, []paramSpec{{"device", "string", true}, {"maxAgeMs", "int", false}}},
				{"hal/write", map[string]string{"device": `"bench.led"`, "value": `true`}, []paramSpec{
					{"device", "string", true}, {"value", "any", true}, {"reason", "string", false}, {"reply", "bool", false}, {"replyWithinMs", "int", false}, {"timeoutMs", "int", false}}},
				{"hal/stop", nil, []paramSpec{{"reason", "string", false}}},
				{"hal/resume", nil, nil},
				{"hal/confirmations/list", nil, []paramSpec{{"status", "string", false}}},
				{"hal/confirmations/approve", map[string]string{"id": cid}, []paramSpec{{"id", "string", true}}},
				{"hal/confirmations/reject", map[string]string{"id": cid}, []paramSpec{{"id", "string", true}, {"reason", "string", false}}},
				{"hal/confirmations/cancel", map[string]string{"id": cid}, []paramSpec{{"id", "string", true}}},
				{"hal/audit/list", nil, []paramSpec{{"since", "int", false}, {"limit", "int", false}}},
			} {
				for _, p := range mc.params {
					for _, v := range wrongValues[p.kind] {
						check(mc.method, rawParams(mc.base, p.name, v), openhal.CodeInvalidParams, "wrong_type", p.name, "params."+p.name+": want ")
					}
					if p.required {
						absent := []string{"", "null"}
						if p.name == "value" {
							absent = absent[:1] // null is a value: the schema refuses it, below
						}
						for _, absent := range absent {
							check(mc.method, rawParams(mc.base, p.name, absent), openhal.CodeInvalidParams, "missing_param", p.name, "params."+p.name+" is required")
						}
						if p.kind == "string" {
							check(mc.method, rawParams(mc.base, p.name, `""`), openhal.CodeInvalidParams, "missing_param", p.name, "params."+p.name+" is required")
						}
					}
				}
				// Unknown params, and a known one spelt in another case.
				check(mc.method, rawParams(mc.base, "bogus", "1"), openhal.CodeInvalidParams, "unknown_param", "bogus", `"bogus"`)
				for _, p := range mc.params {
					odd := strings.ToUpper(p.name[:1]) + p.name[1:]
					v := mc.base[p.name]
					if v == "" {
						v = `"x"`
					}
					check(mc.method, rawParams(mc.base, p.name, "", odd, v), openhal.CodeInvalidParams, "unknown_param", odd, `"`+odd+`"`)
				}
			}

			// A value of the wrong type for the device is the schema's
			// wrong_type, about the device (no data.param).
			for _, v := range []string{`"on"`, `1`, `{}`, `[]`, `null`} {
				check("hal/write", `{"device":"bench.led","value":`+v+`}`, openhal.CodeInvalidParams, "wrong_type", "-", "value for bench.led: want a boolean")
			}
			// Integers out of range, and a status no request can have.
			big := "1" + strings.Repeat("0", 399)
			for _, tc := range []struct{ method, param, value string }{
				{"hal/read", "maxAgeMs", "-1"}, {"hal/read", "maxAgeMs", big},
				{"hal/write", "timeoutMs", "0"}, {"hal/write", "timeoutMs", "-5"}, {"hal/write", "timeoutMs", "60001"}, {"hal/write", "timeoutMs", big},
				{"hal/write", "replyWithinMs", "0"}, {"hal/write", "replyWithinMs", "5001"}, {"hal/write", "replyWithinMs", big},
				{"hal/audit/list", "limit", "0"}, {"hal/audit/list", "limit", "1001"}, {"hal/audit/list", "limit", "-1"}, {"hal/audit/list", "limit", big},
				{"hal/audit/list", "since", "-1"}, {"hal/audit/list", "since", "18446744073709551616"}, {"hal/audit/list", "since", big},
			} {
				base := map[string]string{}
				if tc.method != "hal/audit/list" {
					base = map[string]string{"device": `"bench.led"`}
				}
				if tc.method == "hal/write" {
					base["value"] = "true"
				}
				check(tc.method, rawParams(base, tc.param, tc.value), openhal.CodeInvalidParams, "out_of_range", tc.param, "params."+tc.param)
			}
			for _, s := range []string{`"approve"`, `"PENDING"`, `"pending\u0000"`, `"all"`} {
				check("hal/confirmations/list", `{"status":`+s+`}`, openhal.CodeInvalidParams, "not_in_enum", "status", "params.status", "pending, approved, rejected, cancelled, expired, failed")
			}
			t.Logf("%d bad requests", n)
			b.unchanged(t, before)
			alive(t, c)
			if got := pendingIDs(t, c); got != strings.Trim(cid, `"`) {
				t.Errorf("pending requests %q, want only %s", got, cid)
			}

			// hal/resume with a bad param leaves a stop engaged.
			wantOK(t, c.call("hal/stop", map[string]any{"reason": "test"}))
			b.obs.notification(openhal.NotifyStopped)
			b.drainObs(t)
			before = b.state(t)
			check("hal/resume", `{"bogus":1}`, openhal.CodeInvalidParams, "unknown_param", "bogus", `"bogus"`)
			check("hal/resume", `{"reason":"done"}`, openhal.CodeInvalidParams, "unknown_param", "reason", `"reason"`)
			if !b.hub.Stopped() {
				t.Fatal("a bad hal/resume lifted the stop")
			}
			b.unchanged(t, before)
		})
	}
}

// pendingIDs lists the ids of the pending requests, comma-separated.
func pendingIDs(t *testing.T, c *client) string {
	t.Helper()
	res := resultOf[openhal.ConfirmationsListResult](t, c.call("hal/confirmations/list", map[string]any{"status": "pending"}))
	var ids []string
	for _, x := range res.Confirmations {
		ids = append(ids, x.ID)
	}
	return strings.Join(ids, ",")
}

// docs/protocol.md: an optional param given as null is absent; an
// unknown param of hal/initialize is ignored (a newer client may offer
// more), unlike in every other method.
func TestParamsNullIsAbsent(t *testing.T) {
	for _, tr := range bothTransports {
		t.Run(tr.name, func(t *testing.T) {
			t.Parallel()
			b := newBadBench(t)
			c := tr.dial(b.testHub, t)
			c.sendRaw(rawRequest("1", "hal/initialize", `{"protocolVersion":"0.1","clientInfo":{"name":"t","version":"1","vendor":"x"},"token":"`+b.testHub.admin+`","capabilities":{"x":1}}`))
			wantOK(t, c.answer([]byte("1")))
			for _, tc := range []struct{ method, params string }{
				{"hal/devices/list", `{"tags":null,"kind":null}`},
				{"hal/read", `{"device":"bench.led","maxAgeMs":null}`},
				{"hal/confirmations/list", `{"status":null}`},
				{"hal/confirmations/list", `{"status":""}`},
				{"hal/audit/list", `{"since":null,"limit":null}`},
			} {
				c.sendRaw(rawRequest("2", tc.method, tc.params))
				if m := c.answer([]byte("2")); m.Error != nil {
					t.Errorf("%s %s: %s", tc.method, tc.params, m.raw)
				}
			}
		})
	}
}

// Spec §3: hal/initialize checks the token first (UNAUTHORIZED), then the
// version's form (bad_version, naming the supported versions), then
// clientInfo (bad_client_info). A failed attempt leaves the connection
// open and uninitialized: the next request is NOT_INITIALIZED, and a good
// hal/initialize then succeeds.
func TestInitializeBadParams(t *testing.T) {
	type initCase struct {
		name   string
		set    []string
		code   int64
		reason string
		words  []string
	}
	var cases []initCase
	for _, v := range []string{`5`, `true`, `{}`, `["gw_x"]`} {
		cases = append(cases, initCase{"token " + v, []string{"token", v}, openhal.CodeUnauthorized, "token_invalid", []string{"params.token", "string"}})
	}
	for _, v := range []string{"", `null`, `""`} {
		cases = append(cases, initCase{"token absent " + v, []string{"token", v}, openhal.CodeUnauthorized, "token_missing", []string{"token is required"}})
	}
	for _, v := range []string{"", `null`, `0.1`, `true`, `{}`, `["0.1"]`, `"1"`, `"0.1.0"`, `"v0.1"`, `"01.1"`, `""`} {
		cases = append(cases, initCase{"protocolVersion " + v, []string{"protocolVersion", v}, openhal.CodeInvalidParams, "bad_version", []string{"protocolVersion", "v0.1"}})
	}
	for _, v := range []string{"", `null`, `"test"`, `5`, `true`, `[]`, `{}`, `{"name":""}`, `{"name":5}`, `{"name":"a","version":5}`} {
		cases = append(cases, initCase{"clientInfo " + v, []string{"clientInfo", v}, openhal.CodeInvalidParams, "bad_client_info", []string{"params.clientInfo", "name"}})
	}
	for _, tr := range bothTransports {
		t.Run(tr.name, func(t *testing.T) {
			t.Parallel()
			b := newBadBench(t)
			good := map[string]string{"protocolVersion": `"0.1"`, "clientInfo": `{"name":"test","version":"1"}`, "token": `"` + b.testHub.admin + `"`}
			for _, tc := range cases {
				c := tr.dial(b.testHub, t)
				c.sendRaw(rawRequest("1", "hal/initialize", rawParams(good, tc.set...)))
				m := c.answer([]byte("1"))
				if wantError(t, m, tc.code, tc.reason, "", tc.words...); t.Failed() {
					t.Fatalf("%s: got %s", tc.name, m.raw)
				}
				if tc.reason == "bad_version" && strings.Join(anyStrings(m.Error.Data["supported"]), ",") != "0.1" {
					t.Errorf("%s: got %s, want data.supported [0.1]", tc.name, m.raw)
				}
				if m := c.call("hal/ping", nil); m.Error == nil || m.Error.Code != openhal.CodeNotInitialized {
					t.Errorf("%s: after a failed initialize, ping got %s", tc.name, m.raw)
				}
				c.init(b.testHub.admin)
				c.close()
			}
		})
	}
}

func anyStrings(v any) []string {
	var out []string
	if l, ok := v.([]any); ok {
		for _, x := range l {
			s, _ := x.(string)
			out = append(out, s)
		}
	}
	return out
}

// A client that sends half a message and stalls holds up nobody. Not yet
// initialized, it is closed at InitTimeout; initialized, its connection
// just waits — its reader parked in the kernel, no goroutine added, no CPU
// spent — and the rest of the message, sent later, completes it.
// Not parallel: it counts the process's goroutines and CPU time.
func TestHalfMessageStall(t *testing.T) {
	const initTimeout = 200 * time.Millisecond
	pad := strings.Repeat(" ", 16<<10) // past the client's write buffer: on the wire
	for _, tr := range []string{"tcp", "ws"} {
		t.Run(tr, func(t *testing.T) {
			b := newBadBench(t, func(o *Options) { o.Limits.InitTimeout = initTimeout })
			reader := map[string]string{"tcp": "(*lineTransport).read", "ws": "(*wsTransport).read"}[tr]
			// half opens a connection and returns it with a function that
			// sends part of a message and one that sends the rest.
			half := func() (*client, func(string), func(string)) {
				if tr == "tcp" {
					c, conn := b.dialTCPConn(t)
					send := func(s string) {
						if _, err := conn.Write([]byte(s)); err != nil {
							t.Fatal(err)
						}
					}
					return c, send, func(s string) { send(s + "\n") }
				}
				c, conn := b.dialWSConn(t)
				var w io.WriteCloser // one message, written in two parts
				send := func(s string) {
					var err error
					if w == nil {
						if w, err = conn.Writer(context.Background(), websocket.MessageText); err != nil {
							t.Fatal(err)
						}
					}
					if _, err := w.Write([]byte(s)); err != nil {
						t.Fatal(err)
					}
				}
				return c, send, func(s string) {
					send(s)
					if err := w.Close(); err != nil {
						t.Fatal(err)
					}
				}
			}

			t.Run("not initialized", func(t *testing.T) {
				start := time.Now()
				c, part, _ := half()
				part(`{"jsonrpc":"2.0","id":1,"method":"hal/initialize","params":{"protocolVersion":"0.1",` + pad)
				alive(t, b.obs)
				c.waitClosed()
				if d := time.Since(start); d < initTimeout {
					t.Errorf("closed after %v, before InitTimeout", d)
				}
				alive(t, b.obs)
			})

			t.Run("initialized", func(t *testing.T) {
				c, part, rest := half()
				c.init(b.testHub.admin)
				before := b.state(t)
				b.waitIdle(t)
				part(`{"jsonrpc":"2.0","id":9,"method":"hal/write","params":{"device":"bench.led","value":true` + pad)
				alive(t, b.obs)
				b.waitIdle(t)
				parked := func() bool {
					for _, st := range goroutines(reader) {
						if st != "IO wait" {
							return false
						}
					}
					return true
				}
				waitFor(t, 5*time.Second, "the readers to wait for input", parked)
				if tr == "ws" {
					// The Hub has the frame's start and waits for the rest.
					waitFor(t, 5*time.Second, "the hub to read a message in part", func() bool {
						for _, g := range stacks(reader) {
							if strings.Contains(g, "websocket.(*msgReader).Read") {
								return true
							}
						}
						return false
					})
				}

				g0, cpu0, in0 := runtime.NumGoroutine(), cpuTime(t), hubMessages(b.hub)
				start := time.Now()
				window := 3 * initTimeout // the init timeout must not close it
				for time.Since(start) < window {
					// An init timer firing runs a goroutine for a moment;
					// a loop that spawns would pass this.
					if g := runtime.NumGoroutine(); g > g0+2 {
						t.Fatalf("%d goroutines while stalled, %d before", g, g0)
					}
					if !parked() {
						buf := make([]byte, 1<<20)
						t.Fatalf("a reader is not waiting for input while every client is quiet:\n%s", buf[:runtime.Stack(buf, true)])
					}
					select {
					case <-c.closed:
						t.Fatal("the hub closed an initialized connection that stalled mid-message")
					case <-time.After(20 * time.Millisecond):
					}
				}
				waitGoroutines(t, g0)
				cpu := cpuTime(t) - cpu0
				t.Logf("CPU time over %v of stall: %v", time.Since(start), cpu)
				if cpu > window/2 {
					t.Errorf("the process used %v of CPU in %v while a client stalled: a busy loop?", cpu, window)
				}
				if in := hubMessages(b.hub); in != in0 {
					t.Errorf("%d messages read from half a message", in-in0)
				}
				b.unchanged(t, before)

				rest(`}}`)
				if r := decodeResult(t, c.answer([]byte("9"))); r["status"] != "applied" {
					t.Errorf("the completed write: %v", r)
				}
				if w := b.led.written(); len(w) != 1 || w[0] != true {
					t.Errorf("the device got %v", w)
				}
				b.obs.notification(openhal.NotifyValue)
				alive(t, c)
			})
		})
	}
}

// Spec §2, §8: a client that sends requests and never reads the answers
// holds at most MaxInFlight answers in the Hub: once its socket is full,
// more requests get BUSY, whose answers wait in its bounded queue; the
// Hub's heap stays flat and other clients are served. If the client goes
// on, the queue overflows and the Hub closes the connection; if it
// closes, everything it held is freed. (A client that reads no values:
// slow_test.go.)
// Not parallel: it counts the process's goroutines and its heap.
func TestDeafClient(t *testing.T) {
	const maxInFlight, queue = 4, 16
	for _, tc := range []struct {
		tr      string
		keepsOn bool // the client keeps sending until the hub closes it
	}{{"tcp", false}, {"tcp", true}, {"ws", false}, {"ws", true}} {
		name := tc.tr + "/client closes"
		if tc.keepsOn {
			name = tc.tr + "/hub closes"
		}
		t.Run(name, func(t *testing.T) {
			b := newBadBench(t, func(o *Options) { o.Limits.MaxInFlight, o.Limits.QueueLength = maxInFlight, queue })
			b.addDevice(t, lineSensor("bench.blob"))
			b.reg.Publish("bench.blob", strings.Repeat("x", 64<<10), time.Time{})
			b.drainObs(t)
			b.waitIdle(t)
			g0, heap0 := runtime.NumGoroutine(), heapAlloc()
			overflows0 := b.hub.stats.overflows.Load()

			deaf := b.dialDeaf(t, tc.tr, b.token(t, "deaf", openhal.ScopeRead))
			s := b.session(t, "deaf")
			b.waitIdle(t)
			// Every request the deaf client sends is either served (and
			// counted in requests) or answered BUSY (counted in errors):
			// once the two add up to what it sent, the Hub has handled all.
			st := &b.hub.stats
			req0, err0, sent := hubRequests(b.hub), st.errors.Load(), uint64(0)
			busy := func() uint64 { return st.errors.Load() - err0 }
			handled := func() bool { return hubRequests(b.hub)-req0+busy() == sent }
			read := func() error {
				sent++
				return deaf.send(request(int(100+sent), "hal/read", map[string]any{"device": "bench.blob"}))
			}
			writer := map[string]string{"tcp": "(*lineTransport).write", "ws": "(*wsTransport).write"}[tc.tr]

			// Fill its socket: reads of 64 KiB until the Hub's writer
			// blocks on it.
			for stuck := false; !stuck; {
				if sent > 2000 {
					t.Fatal("the hub's writer never blocked on a client that does not read")
				}
				if err := read(); err != nil {
					t.Fatal(err)
				}
				waitFor(t, 5*time.Second, "the answer written or the writer blocked", func() bool {
					stuck = slices.Contains(goroutines(writer), "IO wait")
					return stuck || handled() && s.inflight.Load() == 0
				})
			}
			t.Logf("the writer blocked after %d requests", sent)

			// Requests up to MaxInFlight wait for their answers to be
			// written; past it, they are answered BUSY at once.
			const extra = queue / 2
			for range maxInFlight + extra {
				if err := read(); err != nil {
					t.Fatal(err)
				}
			}
			waitFor(t, 5*time.Second, "every request handled", handled)
			if n := s.inflight.Load(); n != maxInFlight {
				t.Errorf("%d requests in flight, want %d", n, maxInFlight)
			}
			if busy() < extra {
				t.Errorf("%d BUSY answers, want at least %d", busy(), extra)
			}
			if all, _ := s.q.queued(); uint64(all) > maxInFlight+busy() {
				t.Errorf("%d messages wait for the deaf client, want at most %d answers and %d BUSY", all, maxInFlight, busy())
			}
			if grown := int64(heapAlloc()) - int64(heap0); grown > 8<<20 {
				t.Errorf("the heap grew by %d KiB for a deaf client, want < 8 MiB", grown>>10)
			}
			alive(t, b.obs)
			if m := b.obs.call("hal/read", map[string]any{"device": "bench.blob"}); m.Error != nil {
				t.Errorf("another client's read: %s", m.raw)
			}

			if tc.keepsOn {
				// BUSY answers are bounded by the queue: past it the Hub
				// closes the connection rather than hold more.
				req0, err0, sent = hubRequests(b.hub), st.errors.Load(), 0
				for b.stalledSession(t, "deaf") != nil {
					if sent > 10*queue {
						t.Fatalf("the deaf client is still connected after %d more requests", sent)
					}
					if read() != nil {
						break // the hub closed it
					}
					waitFor(t, 5*time.Second, "a BUSY answer or the close", func() bool {
						return handled() || b.stalledSession(t, "deaf") == nil
					})
				}
				t.Logf("closed after %d more BUSY answers", busy())
				if got := st.overflows.Load() - overflows0; got != 1 {
					t.Errorf("overflows %d, want 1", got)
				}
				b.waitConnections(t, 1)
			}
			deaf.close()
			b.waitConnections(t, 1)
			waitGoroutines(t, g0)
			alive(t, b.obs)
		})
	}
}
