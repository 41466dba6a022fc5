package halhub

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/internal/halhub/token"
	"github.com/openhal/gateway/jsonrpc"
	"github.com/openhal/gateway/openhal"
)

func adapterEntry(scope openhal.Scope, devices ...string) token.Entry {
	return token.Entry{Name: "notifier", Kind: openhal.KindAdapter, Scope: scope, Devices: devices}
}

func localCall(t *testing.T, l *Local, method, params string) (any, *jsonrpc.Error) {
	t.Helper()
	return l.Call(context.Background(), method, json.RawMessage(params))
}

// A local principal gets what a client with the same entry gets: only the
// devices it sees, the method's scope, and the same write checks.
func TestLocalCallsAsAClient(t *testing.T) {
	th := newTestHub(t)
	th.addDevice(t, output("bench.led", device.RiskLow))
	th.addDevice(t, output("other.led", device.RiskLow))
	l := th.hub.Local(adapterEntry(openhal.ScopeControlLow, "bench.*"))
	defer l.Close()

	res, err := localCall(t, l, openhal.MethodDevicesList, `{}`)
	if err != nil {
		t.Fatal(err)
	}
	if got := res.(openhal.DevicesListResult).Devices; len(got) != 1 || got[0].ID != "bench.led" {
		t.Fatalf("devices %+v, want bench.led alone", got)
	}
	if _, err := localCall(t, l, openhal.MethodWrite, `{"device":"other.led","value":true}`); err == nil || err.Code != openhal.CodeDeviceNotFound {
		t.Fatalf("write outside the entry: %v, want NOT_FOUND", err)
	}
	res, err = localCall(t, l, openhal.MethodWrite, `{"device":"bench.led","value":true}`)
	if err != nil {
		t.Fatal(err)
	}
	if wr := res.(openhal.WriteResult); wr.Status != openhal.StatusApplied {
		t.Fatalf("write %+v", wr)
	}
	if _, err := localCall(t, l, openhal.MethodResume, `{}`); err == nil || err.Code != openhal.CodeForbidden {
		t.Fatalf("resume: %v, want FORBIDDEN", err)
	}
	if _, err := th.hub.Stop(openhal.Principal{Kind: openhal.KindHub, Name: "test"}, "test"); err != nil {
		t.Fatal(err)
	}
	if _, err := localCall(t, l, openhal.MethodWrite, `{"device":"bench.led","value":true}`); err == nil || err.Code != openhal.CodeStopped {
		t.Fatalf("write while stopped: %v, want STOPPED", err)
	}
}

// A local principal's high-risk write waits for an admin; once the
// principal is closed (its adapter gone), the approval fails as for a
// revoked token.
func TestLocalConfirmation(t *testing.T) {
	th := newTestHub(t)
	heater := output("bench.heater", device.RiskHigh)
	th.addDevice(t, heater)
	admin := th.dialTCP(t)
	admin.init(th.admin)
	for _, closeFirst := range []bool{false, true} {
		l := th.hub.Local(adapterEntry(openhal.ScopeControlLow))
		res, err := localCall(t, l, openhal.MethodWrite, `{"device":"bench.heater","value":true,"reason":"warm up"}`)
		if err != nil {
			t.Fatal(err)
		}
		pending := res.(openhal.PendingResult)
		if pending.Status != openhal.StatusPending || pending.Confirmation.RequestedBy.Kind != openhal.KindAdapter {
			t.Fatalf("write %+v", pending)
		}
		if closeFirst {
			l.Close()
		}
		m := admin.call(openhal.MethodConfirmationApprove, map[string]any{"id": pending.Confirmation.ID})
		var c openhal.Confirmation
		if err := json.Unmarshal(m.Result, &c); err != nil {
			t.Fatalf("approve: %+v", m)
		}
		want := openhal.ConfirmApproved
		if closeFirst {
			want = openhal.ConfirmFailed
		}
		if c.Status != want {
			t.Fatalf("closed %v: status %s, want %s", closeFirst, c.Status, want)
		}
		l.Close()
	}
	if n := len(heater.written()); n != 1 {
		t.Fatalf("%d writes applied, want 1", n)
	}
}

// Subscribe hands a subscriber what its entry may see, in order, with the
// per-entry hal/stopped lists.
func TestSubscribe(t *testing.T) {
	th := newTestHub(t)
	th.addDevice(t, output("bench.led", device.RiskLow))
	th.addDevice(t, output("other.led", device.RiskLow))
	var mu sync.Mutex
	var got []string
	cancel := th.hub.Subscribe(adapterEntry(openhal.ScopeRead, "bench.*"), func(method, _ string, params json.RawMessage) {
		mu.Lock()
		got = append(got, method+" "+string(params))
		mu.Unlock()
	})
	th.reg.Publish("other.led", true, time.Time{})
	th.reg.Publish("bench.led", true, time.Time{})
	th.reg.SetState("bench.led", device.StateFault, "stuck")
	cancel()
	th.reg.Publish("bench.led", false, time.Time{})
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 2 {
		t.Fatalf("got %q, want the bench.led value and state", got)
	}
	var v openhal.ValueResult
	if err := json.Unmarshal([]byte(got[0][len(openhal.NotifyValue)+1:]), &v); err != nil || v.Device != "bench.led" || v.Value != true || v.Seq != 0 || v.DevSeq != 1 {
		// a listener limited to bench.* is told bench.led's own count, not the Hub-wide seq
		t.Fatalf("value %q", got[0])
	}
	if got[1] != openhal.NotifyDeviceState+` {"device":"bench.led","state":"fault","fault":"stuck"}` {
		t.Fatalf("state %q", got[1])
	}
}

// An adapter's failure reaches the client as DEVICE_FAULT with data.code
// and the adapter's own error in data.error; the device's state is the
// adapter's business. An offline proxy is still asked, with its own
// deadline.
func TestCodedErrorAndProxy(t *testing.T) {
	th := newTestHub(t)
	p := &proxyDevice{readerDevice: sensor("notifier.temp"), timeout: 1500 * time.Millisecond}
	p.readFn = func(ctx context.Context) (device.Reading, error) {
		dl, _ := ctx.Deadline()
		p.deadline = time.Until(dl)
		return device.Reading{}, &device.CodedError{Code: "E_ADAPTER_ERROR", Msg: "the adapter answered: boom",
			Object: json.RawMessage(`{"code":-32010,"message":"boom"}`)}
	}
	th.addDevice(t, p)
	th.reg.SetState("notifier.temp", device.StateOffline, "adapter not running")
	c := th.dialTCP(t)
	c.init(th.admin)
	m := c.call(openhal.MethodRead, map[string]any{"device": "notifier.temp"})
	if m.Error == nil || m.Error.Code != openhal.CodeDeviceFault {
		t.Fatalf("read: %+v", m)
	}
	d := m.Error.Data
	if e, _ := json.Marshal(d["error"]); d["reason"] != "adapter_error" || d["code"] != "E_ADAPTER_ERROR" || string(e) != `{"code":-32010,"message":"boom"}` {
		t.Fatalf("data %v", d)
	}
	if p.deadline <= time.Second || p.deadline > 1500*time.Millisecond {
		t.Fatalf("deadline %v, want the proxy's 1.5 s", p.deadline)
	}
	if desc, _ := th.reg.Describe("notifier.temp"); desc.State != device.StateOffline {
		t.Fatalf("state %s, want offline kept", desc.State)
	}
}

type proxyDevice struct {
	readerDevice
	timeout  time.Duration
	deadline time.Duration
}

func (p *proxyDevice) Timeout() time.Duration { return p.timeout }
