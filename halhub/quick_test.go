package halhub

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/openhal"
)

// A method answered on the reader must never wait for the disk: none of
// them is audited.
func TestQuickMethodsNotAudited(t *testing.T) {
	for name, m := range methods() {
		if _, ok := audited[name]; ok && m.quick != nil {
			t.Errorf("%s is audited and answered on the reader (quick)", name)
		}
	}
}

// A hal/read that asks its device still runs on a goroutine of its own:
// while a sensor's measurement hangs, reads answered from the cache and
// pings on the same connection are answered; the hung read's answer
// follows once the device answers.
func TestQuickAnswersWhileReadWaits(t *testing.T) {
	th := newTestHub(t)
	slow := sensor("bench.slow")
	release := make(chan struct{})
	slow.readFn = func(ctx context.Context) (device.Reading, error) {
		select {
		case <-release:
			return device.Reading{Value: 1.0}, nil
		case <-ctx.Done():
			return device.Reading{}, ctx.Err()
		}
	}
	th.addDevice(t, slow)
	th.addDevice(t, output("bench.out", device.RiskLow))
	th.reg.Publish("bench.out", true, th.reg.Now())
	c := th.dialTCP(t)
	c.init(th.admin)

	c.sendRaw(`{"jsonrpc":"2.0","id":"slow","method":"hal/read","params":{"device":"bench.slow"}}`)
	tests := []struct {
		method string
		params any
		want   string
	}{
		{"hal/ping", nil, `{}`},
		{"hal/read", map[string]any{"device": "bench.out"}, `true`},
		{"hal/read", map[string]any{"device": "bench.none"}, ``},
	}
	for _, tt := range tests {
		m := c.call(tt.method, tt.params)
		switch {
		case tt.want == "" && m.Error == nil:
			t.Errorf("%s %v: %s, want an error", tt.method, tt.params, m.raw)
		case tt.method == "hal/ping" && string(m.Result) != tt.want:
			t.Errorf("%s: %s, want %s", tt.method, m.raw, tt.want)
		case tt.method == "hal/read" && tt.want != "":
			var v openhal.ValueResult
			if err := json.Unmarshal(m.Result, &v); err != nil || string(mustJSON(v.Value)) != tt.want {
				t.Errorf("%s %v: %s, want value %s", tt.method, tt.params, m.raw, tt.want)
			}
		}
	}
	close(release)
	if m := c.answer(json.RawMessage(`"slow"`)); m.Error != nil {
		t.Errorf("the measured read: %s", m.raw)
	}
}
