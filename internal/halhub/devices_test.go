package halhub

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/internal/clock/clocktest"
	"github.com/openhal/gateway/openhal"
)

func TestDevicesListAndGet(t *testing.T) {
	th := newTestHub(t)
	led := output("bench.led", device.RiskLow)
	led.desc.Tags = []string{"bench", "light"}
	th.addDevice(t, led)
	th.addDevice(t, sensor("bench.temp"))
	c := th.dialTCP(t)
	c.init(th.admin)

	for _, tc := range []struct {
		params any
		want   string
	}{
		{nil, "bench.led,bench.temp"},
		{map[string]any{"kind": "sensor"}, "bench.temp"},
		{map[string]any{"tags": []string{"bench"}}, "bench.led"},
		{map[string]any{"tags": []string{"bench", "nope"}}, ""},
	} {
		m := c.call("hal/devices/list", tc.params)
		var res openhal.DevicesListResult
		if err := json.Unmarshal(m.Result, &res); err != nil {
			t.Fatalf("%v: %s", tc.params, m.raw)
		}
		var ids []string
		for _, d := range res.Devices {
			ids = append(ids, d.ID)
		}
		if got := strings.Join(ids, ","); got != tc.want {
			t.Errorf("list %v = %q, want %q", tc.params, got, tc.want)
		}
	}
	m := c.call("hal/devices/get", map[string]any{"device": "bench.led"})
	var d map[string]any
	json.Unmarshal(m.Result, &d)
	if d["id"] != "bench.led" || d["kind"] != "gpio.output" || d["state"] != "ok" || d["risk"] != "low" {
		t.Errorf("get: %s", m.raw)
	}
	if m := c.call("hal/devices/get", map[string]any{"device": "bench.nope"}); m.Error == nil || m.Error.Code != openhal.CodeDeviceNotFound {
		t.Errorf("get of a missing device: %s", m.raw)
	}
}

func TestReadMaxAge(t *testing.T) {
	clock := clocktest.NewFake(time.Unix(1000, 0))
	th := newTestHub(t, func(o *Options) { o.Clock = clock })
	s := sensor("bench.temp")
	th.addDevice(t, s)
	c := th.dialTCP(t)
	c.init(th.admin)

	read := func(params map[string]any) openhal.ValueResult {
		t.Helper()
		params["device"] = "bench.temp"
		m := c.call("hal/read", params)
		var v openhal.ValueResult
		if err := json.Unmarshal(m.Result, &v); err != nil {
			t.Fatalf("read: %s", m.raw)
		}
		return v
	}
	first := read(map[string]any{})
	if s.reads.Load() != 1 || first.Seq == 0 {
		t.Fatalf("first read: %+v after %d reads", first, s.reads.Load())
	}
	// Young enough: the cached value, no new measurement.
	if v := read(map[string]any{"maxAgeMs": 1000}); s.reads.Load() != 1 || v.Seq != first.Seq {
		t.Errorf("cached read measured again: %+v, %d reads", v, s.reads.Load())
	}
	clock.Advance(2 * time.Second)
	if v := read(map[string]any{"maxAgeMs": 1000}); s.reads.Load() != 2 || v.Seq <= first.Seq {
		t.Errorf("stale cache not refreshed: %+v, %d reads", v, s.reads.Load())
	}
	// Without maxAgeMs a sensor is measured every time.
	read(map[string]any{})
	if s.reads.Load() != 3 {
		t.Errorf("%d reads, want 3", s.reads.Load())
	}
	if m := c.call("hal/read", map[string]any{"device": "bench.temp", "maxAgeMs": -1}); m.Error == nil || m.Error.Code != openhal.CodeInvalidParams {
		t.Errorf("negative maxAgeMs: %s", m.raw)
	}
}

// A failed measurement puts the device in fault with the reason; the next
// good one brings it back, each change a hal/deviceState.
func TestReadFaultAndRecovery(t *testing.T) {
	th := newTestHub(t)
	s := sensor("bench.temp")
	fail := true
	s.readFn = func(context.Context) (device.Reading, error) {
		if fail {
			return device.Reading{}, errors.New("i2c: no ack")
		}
		return device.Reading{Value: 21.5}, nil
	}
	th.addDevice(t, s)
	c := th.dialTCP(t)
	c.init(th.admin)
	m := c.call("hal/read", map[string]any{"device": "bench.temp"})
	if m.Error == nil || m.Error.Code != openhal.CodeDeviceFault || !strings.Contains(m.Error.Message, "no ack") {
		t.Fatalf("failed read: %s", m.raw)
	}
	if n := c.notification("hal/deviceState"); !strings.Contains(string(n.Params), `"state":"fault"`) || !strings.Contains(string(n.Params), "no ack") {
		t.Errorf("state: %s", n.raw)
	}
	fail = false
	if m := c.call("hal/read", map[string]any{"device": "bench.temp"}); m.Error != nil {
		t.Fatalf("good read: %s", m.raw)
	}
	if n := c.notification("hal/deviceState"); !strings.Contains(string(n.Params), `"state":"ok"`) {
		t.Errorf("state: %s", n.raw)
	}
}

// A write is applied, answered with its seq, and every client gets the
// hal/value with the same seq.
func TestWriteAppliesAndNotifies(t *testing.T) {
	th := newTestHub(t)
	led := output("bench.led", device.RiskLow)
	th.addDevice(t, led)
	writer, watcher := th.dialTCP(t), th.dialWS(t, th.admin)
	writer.init(th.admin)
	watcher.init("")

	m := writer.call("hal/write", map[string]any{"device": "bench.led", "value": true})
	var res openhal.WriteResult
	if err := json.Unmarshal(m.Result, &res); err != nil || res.Status != "applied" || res.Value != true || res.Seq == 0 {
		t.Fatalf("write: %s", m.raw)
	}
	n := watcher.notification("hal/value")
	var v openhal.ValueResult
	json.Unmarshal(n.Params, &v)
	if v.Device != "bench.led" || v.Value != true || v.Seq != res.Seq || !v.TS.Equal(res.TS) {
		t.Errorf("hal/value %s does not match the write's answer %s", n.raw, m.raw)
	}
	if got := fmt.Sprint(led.written()); got != "[true]" {
		t.Errorf("device got %s", got)
	}
	r := writer.call("hal/read", map[string]any{"device": "bench.led"})
	if !strings.Contains(string(r.Result), `"value":true`) || !strings.Contains(string(r.Result), fmt.Sprintf(`"seq":%d`, res.Seq)) {
		t.Errorf("read after write: %s", r.raw)
	}
}

// params.replyWithinMs reaches the device as its wait for an answer, and
// an answer it gives comes back as the result's reply; a device that
// answers nothing gives none, and no error.
func TestWriteReplyWithin(t *testing.T) {
	th := newTestHub(t)
	led := output("bench.led", device.RiskLow)
	var got []time.Duration
	led.writeFn = func(_ context.Context, req device.WriteRequest) (device.WriteResult, error) {
		got = append(got, req.ReplyWithin)
		if req.Value == true {
			return device.WriteResult{Reply: &device.Reading{Value: "OK"}}, nil
		}
		return device.WriteResult{}, nil
	}
	th.addDevice(t, led)
	c := th.dialTCP(t)
	c.init(th.admin)
	m := c.call("hal/write", map[string]any{"device": "bench.led", "value": true, "replyWithinMs": 200})
	if m.Error != nil || !strings.Contains(string(m.Result), `"reply":"OK"`) {
		t.Errorf("write answered: %s", m.raw)
	}
	m = c.call("hal/write", map[string]any{"device": "bench.led", "value": false, "replyWithinMs": 200})
	if m.Error != nil || strings.Contains(string(m.Result), `"reply"`) {
		t.Errorf("write not answered: %s", m.raw)
	}
	c.call("hal/write", map[string]any{"device": "bench.led", "value": false})
	if fmt.Sprint(got) != "[200ms 200ms 0s]" {
		t.Errorf("the device was asked to wait %v", got)
	}
}

// Spec §6: the write checks come in order — scope, params, device, writable,
// schema — and a refused write changes nothing.
func TestWriteCheckOrder(t *testing.T) {
	th := newTestHub(t)
	led := output("bench.led", device.RiskLow)
	th.addDevice(t, led)
	th.addDevice(t, sensor("bench.temp"))
	reader := th.token(t, "watcher", openhal.ScopeRead)
	c, r := th.dialTCP(t), th.dialTCP(t)
	c.init(th.admin)
	r.init(reader)
	for _, tc := range []struct {
		name   string
		cl     *client
		params any
		code   int64
		reason string
	}{
		{"scope before params", r, map[string]any{"device": 5, "bogus": true}, openhal.CodeForbidden, "scope"},
		{"params not an object", c, []int{1}, -32600, "params_not_object"},
		{"missing device", c, map[string]any{"value": true}, openhal.CodeInvalidParams, "missing_param"},
		{"missing value", c, map[string]any{"device": "bench.led"}, openhal.CodeInvalidParams, "missing_param"},
		{"unknown param", c, map[string]any{"device": "bench.led", "value": true, "timeout": 5}, openhal.CodeInvalidParams, "unknown_param"},
		{"param of another case", c, map[string]any{"device": "bench.led", "value": true, "timeoutMS": 5}, openhal.CodeInvalidParams, "unknown_param"},
		{"device as number", c, map[string]any{"device": 7, "value": true}, openhal.CodeInvalidParams, "wrong_type"},
		{"unknown device before type", c, map[string]any{"device": "bench.nope", "value": "x"}, openhal.CodeDeviceNotFound, "device_not_found"},
		{"read-only before schema", c, map[string]any{"device": "bench.temp", "value": "x"}, openhal.CodeNotSupported, "read_only"},
		{"schema", c, map[string]any{"device": "bench.led", "value": "on"}, openhal.CodeInvalidParams, "wrong_type"},
		{"reply on a gpio", c, map[string]any{"device": "bench.led", "value": true, "reply": true}, openhal.CodeInvalidParams, "reply_unsupported"},
		{"timeout out of range", c, map[string]any{"device": "bench.led", "value": true, "timeoutMs": 0}, openhal.CodeInvalidParams, "out_of_range"},
		{"reply wait out of range", c, map[string]any{"device": "bench.led", "value": true, "replyWithinMs": 5001}, openhal.CodeInvalidParams, "out_of_range"},
	} {
		m := tc.cl.call("hal/write", tc.params)
		if m.Error == nil || m.Error.Code != tc.code || m.reason() != tc.reason {
			t.Errorf("%s: got %s, want code %d reason %s", tc.name, m.raw, tc.code, tc.reason)
		}
	}
	if w := led.written(); len(w) != 0 {
		t.Errorf("refused writes reached the device: %v", w)
	}
}

// A device that fails or does not answer a write: DEVICE_FAULT, or TIMEOUT
// with the device in fault (its outcome is unknown).
func TestWriteFaultAndTimeout(t *testing.T) {
	th := newTestHub(t)
	led := output("bench.led", device.RiskLow)
	led.writeFn = func(ctx context.Context, req device.WriteRequest) (device.WriteResult, error) {
		if req.Value == true {
			<-ctx.Done()
			return device.WriteResult{}, ctx.Err()
		}
		return device.WriteResult{}, errors.New("line busy")
	}
	th.addDevice(t, led)
	c := th.dialTCP(t)
	c.init(th.admin)
	m := c.call("hal/write", map[string]any{"device": "bench.led", "value": false})
	if m.Error == nil || m.Error.Code != openhal.CodeDeviceFault || m.Error.Data["detail"] != "line busy" {
		t.Errorf("failing write: %s", m.raw)
	}
	m = c.call("hal/write", map[string]any{"device": "bench.led", "value": true, "timeoutMs": 50})
	if m.Error == nil || m.Error.Code != openhal.CodeTimeout {
		t.Errorf("hung write: %s", m.raw)
	}
	d, _ := th.reg.Describe("bench.led")
	if d.State != device.StateFault || !strings.Contains(d.Fault, "unknown") {
		t.Errorf("after a timeout the device is %s (%s), want fault", d.State, d.Fault)
	}
}

// hal/deviceAdded, hal/deviceRemoved and hal/deviceState reach clients.
func TestDeviceLifecycleNotifications(t *testing.T) {
	th := newTestHub(t)
	c := th.dialWS(t, th.admin)
	c.init("")
	rep := th.addDevice(t, output("bench.led", device.RiskLow))
	if n := c.notification("hal/deviceAdded"); !strings.Contains(string(n.Params), `"id":"bench.led"`) {
		t.Errorf("added: %s", n.raw)
	}
	rep.State(device.StateOffline, "")
	if n := c.notification("hal/deviceState"); string(n.Params) != `{"device":"bench.led","state":"offline"}` {
		t.Errorf("state: %s", n.raw)
	}
	th.reg.Remove("bench.led", "adapter stopped")
	if n := c.notification("hal/deviceRemoved"); string(n.Params) != `{"device":"bench.led","reason":"adapter stopped"}` {
		t.Errorf("removed: %s", n.raw)
	}
	if m := c.call("hal/read", map[string]any{"device": "bench.led"}); m.Error == nil || m.Error.Code != openhal.CodeDeviceNotFound {
		t.Errorf("read after removal: %s", m.raw)
	}
}

// seq grows by one with every value event, across devices.
func TestSeqIsHubWide(t *testing.T) {
	th := newTestHub(t)
	th.addDevice(t, output("a.led", device.RiskLow))
	th.addDevice(t, output("b.led", device.RiskLow))
	c := th.dialTCP(t)
	c.init(th.admin)
	var last uint64
	for i := 0; i < 10; i++ {
		id := []string{"a.led", "b.led"}[i%2]
		m := c.call("hal/write", map[string]any{"device": id, "value": i%3 == 0})
		var res openhal.WriteResult
		json.Unmarshal(m.Result, &res)
		if res.Seq != last+1 {
			t.Fatalf("write %d: seq %d after %d", i, res.Seq, last)
		}
		last = res.Seq
	}
}

func TestPing(t *testing.T) {
	th := newTestHub(t)
	c := th.dialTCP(t)
	c.init(th.admin)
	if m := c.call("hal/ping", nil); string(m.Result) != "{}" {
		t.Errorf("ping: %s", m.raw)
	}
	if m := c.call("hal/ping", map[string]any{"x": 1}); m.Error == nil || m.reason() != "unknown_param" {
		t.Errorf("ping with an unknown param: %s", m.raw)
	}
}

// A device that says it is offline stays offline when a write to it fails:
// the failure is no fault of the device.
func TestWriteToOfflineDeviceKeepsOffline(t *testing.T) {
	th := newTestHub(t)
	led := output("bench.led", device.RiskLow)
	led.writeFn = func(context.Context, device.WriteRequest) (device.WriteResult, error) {
		return device.WriteResult{}, fmt.Errorf("bench.led is offline: %w", device.ErrOffline)
	}
	rep := th.addDevice(t, led)
	rep.State(device.StateOffline, "")
	c := th.dialTCP(t)
	c.init(th.admin)
	m := c.call("hal/write", map[string]any{"device": "bench.led", "value": true})
	if m.Error == nil || m.Error.Code != openhal.CodeDeviceFault || m.reason() != "offline" {
		t.Fatalf("write to an offline device: %s", m.raw)
	}
	if d, _ := th.reg.Describe("bench.led"); d.State != device.StateOffline {
		t.Errorf("state %s, want offline", d.State)
	}
}

// A read that gets no answer in time puts the device in fault in words
// that say who did not answer and within what, never the context's
// "context deadline exceeded".
func TestReadTimeoutWords(t *testing.T) {
	tests := []struct {
		name  string
		proxy bool
		want  string
	}{
		{name: "device", want: "the device did not answer within 80ms"},
		{name: "adapter", proxy: true, want: "the adapter did not answer within 80ms"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			th := newTestHub(t, func(o *Options) { o.Limits.ReadTimeout = 80 * time.Millisecond })
			s := sensor("bench.temp")
			s.readFn = func(ctx context.Context) (device.Reading, error) {
				<-ctx.Done()
				return device.Reading{}, ctx.Err()
			}
			var d device.Device = s
			if tt.proxy {
				d = &proxyDevice{readerDevice: s, timeout: 80 * time.Millisecond}
			}
			th.addDevice(t, d)
			c := th.dialTCP(t)
			c.init(th.admin)
			m := c.call("hal/read", map[string]any{"device": "bench.temp"})
			if m.Error == nil || m.Error.Code != openhal.CodeTimeout || m.Error.Message != "device bench.temp: "+tt.want {
				t.Errorf("read: %s, want TIMEOUT %q", m.raw, tt.want)
			}
			if desc, _ := th.reg.Describe("bench.temp"); desc.State != device.StateFault || desc.Fault != tt.want {
				t.Errorf("device %s (%q), want fault %q", desc.State, desc.Fault, tt.want)
			}
		})
	}
}
