package halhub

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/openhal"
)

// Spec §4: a read token may read but not write; FORBIDDEN comes before the
// params are looked at.
func TestReadScopeCannotWrite(t *testing.T) {
	th := newTestHub(t)
	led := output("bench.led", device.RiskLow)
	th.addDevice(t, led)
	th.reg.Publish("bench.led", false, time.Time{})
	c := th.dialTCP(t)
	c.init(th.token(t, "watcher", openhal.ScopeRead))
	if m := c.call("hal/read", map[string]any{"device": "bench.led"}); m.Error != nil {
		t.Errorf("read: %s", m.raw)
	}
	for _, params := range []any{map[string]any{"device": "bench.led", "value": true}, nil, map[string]any{"bogus": 1}} {
		if m := c.call("hal/write", params); m.Error == nil || m.Error.Code != openhal.CodeForbidden {
			t.Errorf("write %v by a read token: %s", params, m.raw)
		}
	}
	if len(led.written()) != 0 {
		t.Error("a forbidden write reached the device")
	}
	c2 := th.dialTCP(t)
	c2.init(th.token(t, "agent", openhal.ScopeControlLow))
	if m := c2.call("hal/write", map[string]any{"device": "bench.led", "value": true}); m.Error != nil {
		t.Errorf("control_low write of a low-risk device: %s", m.raw)
	}
}

// Spec §4: a token limited to some devices sees only those: the others are
// DEVICE_NOT_FOUND, missing from lists, and their notifications are not
// sent to it.
func TestDeviceLimitedToken(t *testing.T) {
	th := newTestHub(t)
	th.addDevice(t, output("bench.led", device.RiskLow))
	th.addDevice(t, output("bench.fan", device.RiskLow))
	th.addDevice(t, output("lab.led", device.RiskLow))
	c := th.dialTCP(t)
	c.init(th.token(t, "narrow", openhal.ScopeControlLow, "bench.*"))

	m := c.call("hal/devices/list", nil)
	var res openhal.DevicesListResult
	json.Unmarshal(m.Result, &res)
	if len(res.Devices) != 2 || res.Devices[0].ID != "bench.fan" || res.Devices[1].ID != "bench.led" {
		t.Errorf("list: %s", m.raw)
	}
	for _, method := range []string{"hal/devices/get", "hal/read"} {
		if m := c.call(method, map[string]any{"device": "lab.led"}); m.Error == nil || m.Error.Code != openhal.CodeDeviceNotFound {
			t.Errorf("%s of an invisible device: %s", method, m.raw)
		}
	}
	if m := c.call("hal/write", map[string]any{"device": "lab.led", "value": true}); m.Error == nil || m.Error.Code != openhal.CodeDeviceNotFound {
		t.Errorf("write of an invisible device: %s", m.raw)
	}
	th.reg.Publish("lab.led", true, time.Time{})
	th.reg.Publish("bench.led", true, time.Time{})
	if n := c.notification("hal/value"); !strings.Contains(string(n.Params), `"device":"bench.led"`) {
		t.Errorf("the first value this token sees is %s, want bench.led's", n.raw)
	}
}

// Spec §4: revoking a token closes its open connections, within 1 s of
// the change to the token file, through the store's watcher.
func TestRevokeClosesConnections(t *testing.T) {
	th := newTestHub(t)
	tok := th.token(t, "agent", openhal.ScopeControlLow)
	ctx, cancel := contextWithCancel(t)
	defer cancel()
	go th.store.Watch(ctx, nil, th.hub.SetTokens)
	victim, other := th.dialTCP(t), th.dialWS(t, th.admin)
	victim.init(tok)
	other.init("")
	start := time.Now()
	if err := th.store.Revoke("agent"); err != nil {
		t.Fatal(err)
	}
	victim.waitClosed()
	if d := time.Since(start); d > time.Second {
		t.Errorf("closed %v after the revoke, want within 1 s", d)
	}
	if m := other.call("hal/ping", nil); m.Error != nil {
		t.Errorf("another token's connection suffered: %s", m.raw)
	}
	again := th.dialTCP(t)
	if m := again.call("hal/initialize", initParams("0.1", tok)); m.reason() != "token_unknown" {
		t.Errorf("revoked token: %s", m.raw)
	}
}

// Spec §5: at each level, a method above it is METHOD_NOT_FOUND, even for
// an admin, and capabilities.notifications lists what that level sends.
func TestConformanceLevels(t *testing.T) {
	for _, tc := range []struct {
		level   openhal.Level
		allowed map[string]bool
		notes   string
	}{
		{openhal.LevelRead, map[string]bool{"hal/read": true}, "hal/value,hal/deviceState,hal/deviceAdded,hal/deviceRemoved"},
		{openhal.LevelControl, map[string]bool{"hal/read": true, "hal/write": true}, "hal/value,hal/deviceState,hal/deviceAdded,hal/deviceRemoved,hal/blocked,hal/stopped,hal/resumed"},
		{openhal.LevelFull, map[string]bool{"hal/read": true, "hal/write": true}, "hal/value,hal/deviceState,hal/deviceAdded,hal/deviceRemoved,hal/blocked,hal/stopped,hal/resumed,hal/confirmationRequested,hal/confirmationResolved"},
	} {
		t.Run(string(tc.level), func(t *testing.T) {
			th := newTestHub(t, func(o *Options) { o.Level = tc.level })
			th.addDevice(t, output("bench.led", device.RiskLow))
			th.reg.Publish("bench.led", false, time.Time{})
			c := th.dialTCP(t)
			res := c.init(th.admin)
			if res.Conformance != tc.level {
				t.Errorf("conformance %s", res.Conformance)
			}
			if got := strings.Join(res.Capabilities.Notifications, ","); got != tc.notes {
				t.Errorf("notifications %s, want %s", got, tc.notes)
			}
			for _, method := range []string{"hal/read", "hal/write"} {
				m := c.call(method, map[string]any{"device": "bench.led", "value": true})
				if method == "hal/read" {
					m = c.call(method, map[string]any{"device": "bench.led"})
				}
				notFound := m.Error != nil && m.Error.Code == openhal.CodeMethodNotFound
				if notFound == tc.allowed[method] {
					t.Errorf("%s at level %s: %s", method, tc.level, m.raw)
				}
			}
		})
	}
}

func TestUnknownMethod(t *testing.T) {
	th := newTestHub(t)
	c := th.dialTCP(t)
	c.init(th.admin)
	m := c.call("hal/frobnicate", nil)
	if m.Error == nil || m.Error.Code != openhal.CodeMethodNotFound || !strings.Contains(m.Error.Message, "hal/frobnicate") {
		t.Errorf("got %s", m.raw)
	}
	// An unknown notification is ignored.
	c.sendRaw(`{"jsonrpc":"2.0","method":"hal/whatever","params":{}}`)
	if m := c.call("hal/ping", nil); m.Error != nil {
		t.Errorf("after an unknown notification: %s", m.raw)
	}
}

// Seed 3.1.4, 2: a client that disconnects changes no device.
func TestDisconnectChangesNothing(t *testing.T) {
	th := newTestHub(t)
	led := output("bench.led", device.RiskLow)
	th.addDevice(t, led)
	c := th.dialTCP(t)
	c.init(th.admin)
	c.call("hal/write", map[string]any{"device": "bench.led", "value": true})
	c.sendRaw(`{"jsonrpc":"2.0","method":"hal/shutdown"}`)
	c.close()
	w := th.dialTCP(t)
	w.init(th.admin)
	m := w.call("hal/read", map[string]any{"device": "bench.led"})
	if !strings.Contains(string(m.Result), `"value":true`) || fmt.Sprint(led.written()) != "[true]" {
		t.Errorf("after the disconnect: %s, writes %v", m.raw, led.written())
	}
}
