package halhub

import (
	"strings"
	"testing"
	"time"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/openhal"
)

// Audited writes to one device are not one sync apart: a write leaves the
// device's turn once its record has its place in the log, so that the
// next write is applied while the first one's record syncs, and both
// records are synced together. Neither is answered before its record is
// on disk, and the log keeps their order.
func TestWritesToOneDeviceShareTheSync(t *testing.T) {
	b := newRaceBench(t, &raceHeater{})
	relay := &raceHeater{desc: device.Descriptor{ID: "bench.relay", Kind: device.KindGPIOOutput, Source: "board",
		Access: device.AccessReadWrite, Risk: device.RiskLow, Schema: device.Schema{Type: device.TypeBoolean}}}
	b.addDevice(t, relay)
	first, second := b.client(t, "first", openhal.ScopeControlLow), b.client(t, "second", openhal.ScopeControlLow)
	writeRelay := func(c *client, v bool) <-chan msg {
		ch := make(chan msg, 1)
		go func() { ch <- c.callAsync("hal/write", map[string]any{"device": "bench.relay", "value": v}) }()
		return ch
	}

	inSync := arm(t, &b.syncStart)
	a := writeRelay(first, true)
	inSync.wait(t, "the sync of the first write's record")
	bb := writeRelay(second, false)
	waitFor(t, 5*time.Second, "the second write applied while the first one's record syncs", func() bool {
		return len(relay.took()) == 2
	})
	for name, ch := range map[string]<-chan msg{"first": a, "second": bb} {
		select {
		case m := <-ch:
			t.Errorf("the %s write was answered before its record was on disk: %s", name, m.raw)
		default:
		}
	}
	inSync.release()
	for _, ch := range []<-chan msg{a, bb} {
		if m := answered(t, ch); m.Error != nil || !strings.Contains(string(m.Result), `"status":"applied"`) {
			t.Errorf("answer %s, want applied", m.raw)
		}
	}
	if got := relay.took(); got[0] != true || got[1] != false {
		t.Errorf("the relay took %v, want [true false]", got)
	}
	if got := summary(entries(t, b.log)); !strings.HasSuffix(got, "first:write:bench.relay:applied second:write:bench.relay:applied") {
		t.Errorf("audit %s, want the first write then the second", got)
	}
}
